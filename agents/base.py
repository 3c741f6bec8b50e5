"""The agent protocol: every agent acts on a batch of observations and legal-action masks."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
from numba import njit


@runtime_checkable
class Agent(Protocol):
    """A policy over a batch: ``act(observation [B, D], action_mask [B, A], rng) -> actions [B]``.

    Agents see only the observation (RULES.md R11) and the mask; nothing reads hidden state.
    ``rng`` is a ``numpy.random.Generator``; an agent is deterministic given it.
    """

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action id per row (int64 [B])."""
        ...


@njit(cache=True)
def pick_legal(mask, u, out):
    """The k-th legal action of each row, k = floor(u[b] * count), into ``out`` (-1 if none)."""
    for b in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            if mask[b, a]:
                count += 1
        k = min(int(u[b] * count), count - 1)
        out[b] = -1
        for a in range(mask.shape[1]):
            if mask[b, a]:
                if k == 0:
                    out[b] = a
                    break
                k -= 1


def sample_legal(action_mask: np.ndarray, rng: np.random.Generator, out: np.ndarray | None = None) -> np.ndarray:
    """A uniformly random legal action per row (-1 for a row with no legal action); ``out``
    (int64 [B]) is filled and returned instead of a new array."""
    mask = np.asarray(action_mask)
    if out is None:
        out = np.empty(mask.shape[0], np.int64)
    elif not isinstance(out, np.ndarray) or out.dtype != np.int64 or out.shape != (mask.shape[0],):
        raise ValueError(f"out must be an int64 array of shape ({mask.shape[0]},), got {out!r}")
    pick_legal(mask.astype(bool, copy=False), rng.random(mask.shape[0]), out)
    return out


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row."""
        return sample_legal(action_mask, rng)
