"""The baseline agents by name, apart from the registry so that its imports (the RLlib opponents) can build them."""

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
