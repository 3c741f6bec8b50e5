"""The agent protocol and the uniform random agent (defined in ``uno_env.policy``)."""

from uno_env.policy import Agent, RandomAgent, as_batch, kth_legal, pick_legal, sample_legal

__all__ = ["Agent", "RandomAgent", "as_batch", "kth_legal", "pick_legal", "sample_legal"]
