"""Constrained dealing: hidden cards dealt uniformly among the deals that respect per-seat exclusions.

A *deal* puts the ``k`` pool cards (each physical card distinct) into the hands of the seats
(sizes fixed) and the draw pile (its order matters); every deal is equally likely a priori.
With exclusions (``exclude[p, t]``: seat ``p`` holds no card of type ``t``) the wanted
distribution is the uniform one over the deals that respect them. It is sampled exactly by
rejection from a sequential proposal: each constrained seat in turn takes its hand uniformly
among the pool cards still free that it may hold, and the proposal is accepted with
probability ``prod_p C(a_p, h_p) / C(A_p, h_p)`` (``a_p`` the cards it could take when its
turn came, ``A_p`` those it may hold in the whole pool). The proposal's probability of a
deal is ``prod_p 1 / C(a_p, h_p)``, so accepted deals are uniform; with one constrained seat
every proposal is accepted. The unconstrained seats and the draw pile then take the remaining
cards in a uniformly random order.

When ``max_tries`` proposals are all rejected the last proposal that respected the exclusions
is kept (status ``APPROXIMATE``: valid, not exactly uniform); when none did (the exclusions
may be unsatisfiable) the cards are dealt with no exclusions (status ``RELAXED``).

Random numbers: a splitmix64 stream per deal, seeded by the caller (one uint64), so a deal is
a function of the pool, the sizes, the exclusions and the seed.
"""

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


@njit(cache=True)
def deal_pool(pool, k, sizes, exclude, state, max_tries, out, scratch_free, scratch_idx, scratch_take):
    """Deal ``pool[:k]`` (card types) into ``out[:k]``: seat 0's ``sizes[0]`` cards first, then
    seat 1's, ... (seats of size 0 take none), the rest is the draw pile, bottom to top.
    ``exclude`` [P, T] bool; ``state`` [1] uint64, the stream. Returns the status (module docs).
    The scratch arrays hold at least ``k`` entries."""
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
    """``num`` deals of the cards ``counts`` [T] into hands of ``sizes`` [P] and a pile of the rest,
    uniform among the deals where seat ``p`` holds no card type ``t`` with ``exclude[p, t]``.

    Returns ``(hands, pile, status)``: hands [num, P, T] card counts, pile [num, D] card types
    bottom to top, status [num] (``EXACT``, ``APPROXIMATE``, ``RELAXED``: module docs).
    ``Engine.resample_hidden(..., exclude=...)`` deals a game's hidden cards the same way.
    """
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
