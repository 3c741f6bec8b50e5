"""Agents that play uno_env: all share the batch protocol ``act(observation, action_mask, rng)``."""

from .arena import MatchResult, play_match, wilson_interval
from .base import Agent, RandomAgent, sample_legal
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .rlcard_rule import RLCardRuleAgent

__all__ = [
    "Agent", "RandomAgent", "sample_legal", "RLCardRuleAgent", "GreedyAgent", "HeuristicAgent",
    "play_match", "MatchResult", "wilson_interval",
]
