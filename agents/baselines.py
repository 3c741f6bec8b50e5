"""The baseline agents by name: the fixed rule-based players every table compares against.

``agents.registry.make_agent`` reads specs (``search:256``, model paths, labels) and uses this
table for the plain names; it lives apart so that modules the registry imports (the RLlib
opponents of ``agents.rllib_agent``) can build baselines without importing the registry.
"""

from __future__ import annotations

from collections.abc import Callable

from uno_env.policy import Agent, RandomAgent
from uno_env.rules import UnoRules

from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .rlcard_rule import RLCardRuleAgent

__all__ = ["BASELINES"]

BASELINES: dict[str, Callable[[UnoRules], Agent]] = {
    "random": lambda rules: RandomAgent(),
    "rlcard_rule": RLCardRuleAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
}
