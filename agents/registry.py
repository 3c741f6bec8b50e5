"""Agents by name: ``make_agent("heuristic", rules)`` or ``make_agent("runs/uno_ppo/model.zip")``.

| name | agent |
|---|---|
| ``random`` | ``RandomAgent``: uniform over the legal actions |
| ``rlcard_rule`` | ``RLCardRuleAgent``: RLCard's ``uno-rule-v1`` under our rules |
| ``greedy`` | ``GreedyAgent``: never draws when it can play; the highest-point legal card |
| ``heuristic`` | ``HeuristicAgent``: the strongest rule-based player |
| a path to a ``.zip`` | ``PPOAgent`` over a ``MaskablePPO`` saved by ``train.py`` |

A path may be given a display name as ``name=path`` (``"ppo_v2=runs/x/model.zip"``).
"""

from __future__ import annotations

import os
from typing import Any

from uno_env.rules import UnoRules

from .base import Agent, RandomAgent
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .rlcard_rule import RLCardRuleAgent

__all__ = ["BASELINES", "make_agent"]

BASELINES: dict[str, Any] = {
    "random": lambda rules: RandomAgent(),
    "rlcard_rule": RLCardRuleAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
}


def make_agent(spec: str, rules: UnoRules | None = None, deterministic: bool = True) -> Agent:
    """The agent named ``spec`` (a baseline name, a model path, or ``name=path``) for ``rules``.

    ``deterministic`` applies to saved models only (the most likely legal action; False samples).
    An unknown name raises ``ValueError`` listing the names and saying a path must exist.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"an agent is a name in {sorted(BASELINES)} or a path to a saved model, got {spec!r}")
    if spec in BASELINES:
        return BASELINES[spec](rules)
    label, path = (spec.split("=", 1) if "=" in spec else (None, spec))
    if os.path.isfile(path) or os.path.isfile(path + ".zip"):
        from .ppo import PPOAgent  # torch is needed only for saved models

        if label is None:
            stem = os.path.splitext(os.path.basename(path))[0]
            # runs/<run>/model.zip is named after its run, not "model".
            parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
            label = parent if stem == "model" and parent else stem
        return PPOAgent(path, deterministic=deterministic, name=label)
    raise ValueError(
        f"unknown agent {spec!r}: use one of {sorted(BASELINES)} or the path of a model saved by "
        f"train.py (no file at {path!r})"
    )
