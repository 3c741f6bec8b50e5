"""The policy protocol every agent follows, uniform legal sampling, and ``RandomAgent``.

They live in the library, not in ``agents``, because the envs need a default opponent and the
harness needs the protocol; ``agents`` re-exports them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
from numba import njit


@runtime_checkable
class Agent(Protocol):
    """A policy over a batch: ``act(observation [B, D], action_mask [B, A], rng) -> actions [B]``.

    Agents see only the observation (R11) and the mask; nothing reads hidden state.
    ``rng`` is a ``numpy.random.Generator``; an agent is deterministic given it.
    """

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action id per row (int64 [B])."""
        ...


@njit(cache=True)
def kth_legal(mask_row, u):
    """The legal action of one mask row at ``k = floor(u * count)`` (u uniform in [0, 1) makes
    it uniformly random); -1 when nothing is legal."""
    count = 0
    for a in range(mask_row.shape[0]):
        if mask_row[a]:
            count += 1
    if count == 0:
        return -1
    k = min(int(u * count), count - 1)
    for a in range(mask_row.shape[0]):
        if mask_row[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def pick_legal(mask, u, out):
    """``kth_legal`` of every row of a mask [B, A] with its own ``u[b]``, into ``out`` [B]."""
    for b in range(mask.shape[0]):
        out[b] = kth_legal(mask[b], u[b])


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


def as_batch(observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The batch as C-contiguous float32 observations and bool masks (masks may come as int8);
    a ``ValueError`` when the shapes do not form one batch."""
    obs = np.ascontiguousarray(observation, dtype=np.float32)
    mask = np.ascontiguousarray(action_mask).astype(bool, copy=False)
    if obs.ndim != 2 or mask.ndim != 2 or obs.shape[0] != mask.shape[0]:
        raise ValueError(
            f"expected observation [B, D] and action_mask [B, A] with the same B, got {obs.shape} and {mask.shape}"
        )
    return obs, mask


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row."""
        return sample_legal(action_mask, rng)
