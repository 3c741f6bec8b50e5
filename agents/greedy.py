"""``GreedyAgent``: always sheds the legal card worth the most points (R8)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from uno_env.actions import NUM_DOUBLES, PLAY_DOUBLE_FIRST, card_of_double
from uno_env.cards import NUM_CARD_TYPES, WILD_DRAW_FOUR
from uno_env.observation import phase_of, wd4_legal
from uno_env.policy import as_batch, kth_legal
from uno_env.rules import UnoRules

from ._simple_rules import draw_or_pass, routine_action
from ._tactics import rule_tables

if TYPE_CHECKING:
    from uno_env.threads import Chunks


@njit(cache=True)
def _greedy_play(o, m, u, points, wilds_match):
    """Phase play: the legal card worth the most points (a double counts twice its card; ties at random)."""
    legal_wd4 = wd4_legal(o, wilds_match)
    # Candidates: single cards (a Wild Draw Four only when R4 allows it) and doubles
    # (R4 `allow_doubles`), each worth the points it sheds.
    best = -1
    ties = 0
    for a in range(PLAY_DOUBLE_FIRST + NUM_DOUBLES):
        v = _shed_points(a, m, legal_wd4, points)
        if v > best:
            best = v
            ties = 1
        elif v == best and v >= 0:
            ties += 1
    if best >= 0:
        # Uniform among the candidates tied on points, so equal cards of two colours are
        # not always resolved towards red.
        k = min(int(u * ties), ties - 1)
        for a in range(PLAY_DOUBLE_FIRST + NUM_DOUBLES):
            if _shed_points(a, m, legal_wd4, points) == best:
                if k == 0:
                    return a
                k -= 1
    a = draw_or_pass(m)
    return a if a >= 0 else kth_legal(m, u)


@njit(cache=True)
def _shed_points(a, m, legal_wd4, points):
    """Points a legal play action sheds, or -1 when it is not a (non-bluff) play."""
    if a < NUM_CARD_TYPES:
        if not m[a] or (a == WILD_DRAW_FOUR and not legal_wd4):
            return -1
        return points[a]
    if a >= PLAY_DOUBLE_FIRST and m[a]:
        return 2 * points[card_of_double(a)]
    return -1


@njit(cache=True, nogil=True)
def _act_rows(obs, mask, u, points, wilds_match, out, lo, hi):
    """The actions of rows lo..hi-1 into ``out``, without the GIL (all of ``act``'s, or one chunk of ``act_chunked``)."""
    for b in range(lo, hi):
        o, m = obs[b], mask[b]
        a = routine_action(o, m, u[b], phase_of(o), wilds_match)
        out[b] = a if a >= 0 else _greedy_play(o, m, u[b], points, wilds_match)


@njit(cache=True)
def _act_batch(obs, mask, u, points, wilds_match):
    out = np.empty(obs.shape[0], np.int64)
    _act_rows(obs, mask, u, points, wilds_match, out, 0, obs.shape[0])
    return out


class GreedyAgent:
    """Sheds points first: the legal card worth the most R8 points, never a bluff (docs/agents.md)."""

    name = "greedy"

    def __init__(self, rules: UnoRules | None = None) -> None:
        """``rules`` gives the card points (R8, R12.21) and the R12.9 reading."""
        _, self._points, self._wilds_match = rule_tables(rules)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action per row (int64 [B])."""
        obs, mask = as_batch(observation, action_mask)
        u = rng.random(obs.shape[0])
        return _act_batch(obs, mask, u, self._points, self._wilds_match)

    def act_chunked(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator, chunks: Chunks
    ) -> np.ndarray:
        """``act``'s actions from the same draws, its rows in the contiguous chunks of ``chunks`` (one per thread)."""
        obs, mask = as_batch(observation, action_mask)
        u = rng.random(obs.shape[0])
        out = np.empty(obs.shape[0], np.int64)
        chunks.run(obs.shape[0], _act_rows, obs, mask, u, self._points, self._wilds_match, out)
        return out
