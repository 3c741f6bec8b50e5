"""Constrained dealing: hidden cards dealt uniformly among the deals that respect per-seat exclusions.

A deal is a function of the pool, the sizes, the exclusions and the caller's uint64 seed (a
splitmix64 stream per deal)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..checks import is_int
from .rng import GOLDEN, mix64

EXACT, APPROXIMATE, RELAXED = 0, 1, 2
"""Status of a deal: uniform within the exclusions; valid but from a rejected proposal; exclusions dropped."""


@njit(cache=True, inline="always")
def _uniform(state):
    """A double in [0, 1) from the splitmix64 stream state[0]."""
    z = state[0] + GOLDEN
    state[0] = z
    return np.float64(mix64(z) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def _below(state, n):
    return min(np.int64(_uniform(state) * n), n - 1)


# Exact by rejection from a sequential proposal: each constrained seat in turn takes its hand
# uniformly among the free pool cards it may hold, and the proposal is accepted with probability
# prod_p C(a_p, h_p) / C(A_p, h_p) (a_p: the cards it could take at its turn, A_p: those it may
# hold in the whole pool). A deal's proposal probability is prod_p 1 / C(a_p, h_p), so accepted
# deals are uniform; with one constrained seat every proposal is accepted. After max_tries
# rejections the last valid proposal is kept (APPROXIMATE); with none, no exclusions (RELAXED).
@njit(cache=True)
def deal_pool(pool, k, sizes, exclude, state, max_tries, out, scratch_free, scratch_idx, scratch_take):
    """Deal ``pool[:k]`` into ``out[:k]``: seat 0's ``sizes[0]`` cards, then seat 1's, ..., then the draw pile.

    ``exclude`` [P, T] bool; ``state`` [1] uint64, the stream; the scratch arrays hold at least ``k``
    entries. Returns the status."""
    P = sizes.shape[0]
    free = scratch_free
    idx = scratch_idx
    take = scratch_take  # take[i] = seat that takes pool card i in the proposal, -1 none
    constrained = np.zeros(P, np.bool_)
    full = np.zeros(P, np.int64)
    any_constrained = False
    for p in range(P):
        if sizes[p] > 0:
            for t in range(exclude.shape[1]):
                if exclude[p, t]:
                    constrained[p] = True
                    any_constrained = True
                    break
            if constrained[p]:
                for i in range(k):
                    if not exclude[p, pool[i]]:
                        full[p] += 1
    status = EXACT
    have_valid = False
    if any_constrained:
        accepted = False
        best = np.full(k, -1, np.int64)
        for _ in range(max_tries):
            for i in range(k):
                free[i] = True
                take[i] = -1
            ratio = 1.0
            feasible = True
            for p in range(P):
                if not constrained[p]:
                    continue
                a = 0
                for i in range(k):
                    if free[i] and not exclude[p, pool[i]]:
                        idx[a] = i
                        a += 1
                h = sizes[p]
                if a < h:
                    feasible = False
                    break
                for j in range(h):  # partial Fisher-Yates: h of the a candidates
                    r = j + _below(state, a - j)
                    tmp = idx[j]
                    idx[j] = idx[r]
                    idx[r] = tmp
                    free[idx[j]] = False
                    take[idx[j]] = p
                    ratio *= (a - j) / (full[p] - j)
            if not feasible:
                continue
            have_valid = True
            best[:] = take[:k]
            if _uniform(state) < ratio:
                accepted = True
                break
        if not accepted:
            status = APPROXIMATE if have_valid else RELAXED
        if have_valid:
            for i in range(k):
                take[i] = best[i]
        else:
            for i in range(k):
                take[i] = -1
            for p in range(P):
                constrained[p] = False
    else:
        for i in range(k):
            take[i] = -1
    # The remaining cards in a uniformly random order: unconstrained hands, then the pile.
    m = 0
    for i in range(k):
        if take[i] < 0:
            idx[m] = pool[i]
            m += 1
    for i in range(m - 1, 0, -1):
        j = _below(state, i + 1)
        tmp = idx[i]
        idx[i] = idx[j]
        idx[j] = tmp
    at = 0
    rest = 0
    for p in range(P):
        if constrained[p]:
            for i in range(k):
                if take[i] == p:
                    out[at] = pool[i]
                    at += 1
        else:
            for _ in range(sizes[p]):
                out[at] = idx[rest]
                at += 1
                rest += 1
    while rest < m:
        out[at] = idx[rest]
        at += 1
        rest += 1
    return status


@njit(cache=True)
def deal_many(counts, sizes, exclude, seeds, max_tries, out, status):
    """``deal_pool`` once per seed: the pool is ``counts`` [T] in card-id order; ``out`` [N, k]."""
    k = 0
    for t in range(counts.shape[0]):
        k += counts[t]
    pool = np.empty(k, np.int64)
    at = 0
    for t in range(counts.shape[0]):
        for _ in range(counts[t]):
            pool[at] = t
            at += 1
    free = np.empty(k, np.bool_)
    idx = np.empty(k, np.int64)
    take = np.empty(k, np.int64)
    state = np.empty(1, np.uint64)
    for n in range(seeds.shape[0]):
        state[0] = seeds[n]
        status[n] = deal_pool(pool, k, sizes, exclude, state, max_tries, out[n], free, idx, take)


def deal_constrained(
    counts: np.ndarray,
    sizes: np.ndarray,
    exclude: np.ndarray,
    rng: np.random.Generator,
    num: int = 1,
    max_tries: int = 64,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``num`` deals of the cards ``counts`` [T] into hands of ``sizes`` [P] and a pile, respecting ``exclude`` [P, T].

    Returns ``(hands, pile, status)``: card counts [num, P, T], card types [num, D] bottom to top, and
    ``EXACT``, ``APPROXIMATE`` or ``RELAXED`` per deal."""
    counts = np.asarray(counts)
    sizes = np.asarray(sizes)
    exclude = np.asarray(exclude)
    if counts.ndim != 1 or counts.dtype.kind not in "iu" or (counts < 0).any():
        raise ValueError(f"counts must be a 1-D array of card counts >= 0, got {counts!r}")
    if sizes.ndim != 1 or sizes.dtype.kind not in "iu" or (sizes < 0).any():
        raise ValueError(f"sizes must be a 1-D array of hand sizes >= 0, got {sizes!r}")
    if exclude.dtype != np.bool_ or exclude.shape != (sizes.size, counts.size):
        raise ValueError(
            f"exclude must be a bool array of shape {(sizes.size, counts.size)}, got {exclude.dtype} {exclude.shape}"
        )
    if sizes.sum() > counts.sum():
        raise ValueError(f"the hands take {int(sizes.sum())} cards but there are only {int(counts.sum())}")
    if not is_int(num) or num < 1 or not is_int(max_tries) or max_tries < 1:
        raise ValueError(f"num and max_tries must be positive integers, got {num!r} and {max_tries!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    k = int(counts.sum())
    out = np.empty((int(num), k), np.int64)
    status = np.empty(int(num), np.int8)
    seeds = rng.integers(0, 2**64, size=int(num), dtype=np.uint64)
    deal_many(counts.astype(np.int64), sizes.astype(np.int64), exclude, seeds, int(max_tries), out, status)
    P, T = sizes.size, counts.size
    hands = np.zeros((int(num), P, T), np.int64)
    at = 0
    for p in range(P):
        h = int(sizes[p])
        for j in range(h):
            np.add.at(hands[:, p], (np.arange(int(num)), out[:, at + j]), 1)
        at += h
    return hands, out[:, at:], status
