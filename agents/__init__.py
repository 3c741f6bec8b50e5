"""Policies that play uno_env by the batch protocol ``act(observation, action_mask, rng)``.

``make_agent(spec, rules)`` builds any of them by name (``agents.registry``). ``PPOAgent`` and
``RLlibAgent`` are imported on first use, so ``import agents`` loads neither torch nor ray.
"""

from importlib import import_module
from typing import Any

from uno_env.policy import Agent, RandomAgent, pick_legal, sample_legal

from .flatmc import FlatMCAgent
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .ismcts import ISMCTSAgent
from .registry import AGENT_SPECS, BASELINES, agent_names, make_agent
from .rlcard_rule import RLCardRuleAgent

_LAZY = {"PPOAgent": ".ppo", "RLlibAgent": ".rllib_agent", "ChatAgent": ".llm"}

__all__ = [
    "Agent",
    "RandomAgent",
    "sample_legal",
    "pick_legal",
    "RLCardRuleAgent",
    "GreedyAgent",
    "HeuristicAgent",
    "FlatMCAgent",
    "ISMCTSAgent",
    "PPOAgent",
    "RLlibAgent",
    "ChatAgent",
    "make_agent",
    "agent_names",
    "AGENT_SPECS",
    "BASELINES",
]


def __getattr__(name: str) -> Any:
    """``PPOAgent`` / ``RLlibAgent`` / ``ChatAgent``, imported the first time one is asked for (torch, ray)."""
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
