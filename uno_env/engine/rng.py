"""splitmix64, the one generator of the project: each game's stream, its seeds, and seat hashes.

A game's generator is one uint64 state advanced by ``GOLDEN`` per draw and passed through the
``mix64`` finaliser (Steele, Lea & Flood 2014). Seeding and the Gymnasium envs' per-episode
seat choice use the same finaliser, so the one definition lives here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def mix64(z):
    """The splitmix64 finaliser of a uint64 (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _mix_all(x, k, out):
    for i in range(x.shape[0]):
        out[i] = mix64(x[i] + k[i] * GOLDEN)


def splitmix64(x: np.ndarray, k: np.ndarray | int = 0) -> np.ndarray:
    """``mix64(x + k * GOLDEN)`` elementwise: the k-th output of the stream seeded ``x - GOLDEN``
    (``k = 0`` mixes a seed itself). ``x`` and ``k`` are broadcast to one 1-D uint64 array."""
    x = np.ascontiguousarray(x, np.uint64).reshape(-1)
    k = np.ascontiguousarray(np.broadcast_to(np.asarray(k, np.uint64), x.shape))
    out = np.empty_like(x)
    _mix_all(x, k, out)
    return out
