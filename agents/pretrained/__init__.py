"""Pretrained agents shipped in the package (docs/agents.md, "Pretrained agents").

Each is ``NAME.zip`` here with its card ``NAME.json``; loading needs ``torch`` and ``sb3_contrib``
(the ``train`` extra), importing this module does not.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from uno_env.rules import UnoRules

from ..model_card import check_fits
from ..policy_net import PolicyNet

__all__ = [
    "BELIEF_POLICIES",
    "PRETRAINED",
    "card_path",
    "check_fits",
    "load_card",
    "model_path",
    "pretrained_agent",
    "shipped_policy",
]

PRETRAINED = ("pretrained", "pretrained-4p")
"""The registry names of the shipped models; ``NAME.zip`` and ``NAME.json`` are in this folder."""
BELIEF_POLICIES = ("belief_policy",)
"""The shipped policies that read the round through the belief network (``agents.belief_policy``,
trained by ``python -m training.fit_belief_policy``), each ``NAME.zip`` with its card ``NAME.json``:
the searches' ``"belief"`` blueprint (``agents.belief_policy.shipped_belief_policy``)."""


def _file(name: str, suffix: str) -> str:
    if name not in PRETRAINED + BELIEF_POLICIES:
        raise ValueError(
            f"unknown pretrained agent {name!r}; the package ships {', '.join(PRETRAINED + BELIEF_POLICIES)}"
        )
    path = resources.files(__name__) / f"{name}{suffix}"
    if not path.is_file():
        raise ValueError(f"{name}: {path} is missing from the installed package (package data of agents.pretrained)")
    return str(path)


def model_path(name: str) -> str:
    """The installed ``NAME.zip`` of a shipped model."""
    return _file(name, ".zip")


def card_path(name: str) -> str:
    """The installed ``NAME.json`` card of a shipped model."""
    return _file(name, ".json")


def load_card(name: str) -> dict[str, Any]:
    """The card of a shipped model: how it was trained and what it measured."""
    with open(card_path(name)) as f:
        return json.load(f)


def pretrained_agent(
    name: str,
    rules: UnoRules | None = None,
    num_players: int | None = None,
    deterministic: bool = True,
    label: str | None = None,
    allow_other_table: bool = False,
) -> Any:
    """A ``PPOAgent`` over the shipped model ``name`` after ``check_fits`` (``rules``: None is
    classic); it refuses to play a table of another size than its card's (``allow_other_table``:
    plays any table)."""
    # Imported here so that torch loads only when a model is asked for.
    from ..ppo import PPOAgent

    if name not in PRETRAINED:
        raise ValueError(f"unknown pretrained agent {name!r}; the registry's are {', '.join(PRETRAINED)}")
    card = load_card(name)
    rules = UnoRules() if rules is None else rules
    if not allow_other_table:
        others = ", ".join(n for n in PRETRAINED if n != name)
        check_fits(card, rules, num_players, hint=f"The package also ships {others}; ")
    return PPOAgent(
        model_path(name),
        deterministic=deterministic,
        name=label or name,
        rules=rules,
        num_players=num_players,
        allow_other_table=allow_other_table,
    )


@cache
def shipped_policy(rules: UnoRules, num_players: int) -> PolicyNet | None:
    """The actor, in numpy (``agents.policy_net``: no torch), of the shipped model trained for these
    rules and this table size; None when none was. Read once per table."""
    for name in PRETRAINED:
        card = load_card(name)
        try:
            check_fits(card, rules, num_players)
        except ValueError:
            continue
        return PolicyNet(model_path(name), card["train_args"]["activation"])
    return None
