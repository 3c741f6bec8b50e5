"""Agents that play uno_env: all share the batch protocol ``act(observation, action_mask, rng)``."""

from .base import Agent, RandomAgent, sample_legal

__all__ = ["Agent", "RandomAgent", "sample_legal"]
