"""Self-play for the SB3 trainer: a pool of frozen snapshots of the learner, played by the ``self`` groups.

``SelfPlay(venv, groups)`` owns the ``self`` groups of ``training.opponents.opponent_groups``:
``start(policy)`` snapshots the new learner and swaps each group's ``PendingSnapshot`` for a
``PPOAgent`` over a frozen copy (``venv.set_opponents``); ``refresh(policy)`` adds a snapshot
to the ``SnapshotPool`` and loads each group's agent with one drawn from it (the newest with
probability ``latest_prob``). A swap takes effect at the opponent's next decision; rounds are
short once the learner plays.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.ppo import PPOAgent

from .opponents import SELF, OpponentGroup

__all__ = ["SnapshotPool", "SelfPlay"]


class SnapshotPool:
    """The last ``size`` snapshots of the learner's weights (CPU copies of ``policy.state_dict()``)."""

    def __init__(self, size: int = 10, latest_prob: float = 0.5) -> None:
        if size < 1:
            raise ValueError(f"snapshot pool size must be >= 1, got {size}")
        if not 0.0 <= latest_prob <= 1.0:
            raise ValueError(f"latest_prob must be in [0, 1], got {latest_prob}")
        self.snapshots: collections.deque = collections.deque(maxlen=size)
        self.latest_prob = latest_prob
        self.added = 0

    def add(self, policy: Any) -> None:
        """Keep a copy of the policy's current weights."""
        self.snapshots.append({k: v.detach().cpu().clone() for k, v in policy.state_dict().items()})
        self.added += 1

    def sample(self, rng: np.random.Generator) -> dict:
        """The newest snapshot with probability ``latest_prob``, else a uniformly drawn one."""
        if not self.snapshots:
            raise ValueError("the snapshot pool is empty: add(policy) first")
        if rng.random() < self.latest_prob:
            return self.snapshots[-1]
        return self.snapshots[int(rng.integers(len(self.snapshots)))]


class SelfPlay:
    """The ``self`` groups of a training env and the snapshots they play (module docstring)."""

    def __init__(
        self, venv: Any, groups: Sequence[OpponentGroup], pool_size: int = 8, latest_prob: float = 0.5, seed: int = 0
    ) -> None:
        self.venv = venv
        self.groups = [g for g, group in enumerate(groups) if group.kind == SELF]
        self.pool = SnapshotPool(pool_size, latest_prob)
        self.agents: list[PPOAgent] = []
        self.rng = np.random.default_rng(seed)

    def start(self, policy: Any) -> None:
        """Snapshot the learner; every ``self`` group plays a frozen copy of it from now on."""
        self.pool.add(policy)
        for g in self.groups:
            self.agents.append(PPOAgent.frozen(policy, deterministic=False, name=SELF))
            self.venv.set_opponents(self.agents[-1], group=g)

    def refresh(self, policy: Any) -> None:
        """Add a snapshot of the learner to the pool; each ``self`` group draws its next one from it."""
        self.pool.add(policy)
        for agent in self.agents:
            agent.load_state(self.pool.sample(self.rng))

    def state_dict(self) -> dict[str, Any]:
        """The pool (its snapshots, how many were added) and the generator, for a checkpoint."""
        return {"snapshots": list(self.pool.snapshots), "added": self.pool.added, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` after ``start``; each ``self`` group then plays the newest restored snapshot.

        (What each group played at the checkpoint is not saved: the newest snapshot is the one
        a refresh hands out most often.)"""
        self.pool.snapshots.clear()
        self.pool.snapshots.extend(state["snapshots"])
        self.pool.added = int(state["added"])
        self.rng.bit_generator.state = state["rng"]
        for agent in self.agents:
            agent.load_state(self.pool.snapshots[-1])
