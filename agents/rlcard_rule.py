"""``RLCardRuleAgent``: RLCard's ``uno-rule-v1`` decision logic carried over to our rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from uno_env.observation import phase_of
from uno_env.policy import as_batch
from uno_env.rules import UnoRules

if TYPE_CHECKING:
    from uno_env.threads import Chunks

from ._simple_rules import rlcard_row
from ._tactics import rule_tables


@njit(cache=True)
def _act_batch(obs, mask, u, wilds_match):
    out = np.empty(obs.shape[0], np.int64)
    for b in range(obs.shape[0]):
        out[b] = rlcard_row(obs[b], mask[b], u[b], phase_of(obs[b]), wilds_match)
    return out


@njit(cache=True, nogil=True)
def _act_rows(obs, mask, u, wilds_match, out, lo, hi):
    """``_act_batch``'s rows lo..hi-1 into ``out``, without the GIL (one chunk of ``act_chunked``)."""
    for b in range(lo, hi):
        out[b] = rlcard_row(obs[b], mask[b], u[b], phase_of(obs[b]), wilds_match)


class RLCardRuleAgent:
    """RLCard's ``uno-rule-v1`` (rlcard/models/uno_rule_models.py) under our rules (docs/agents.md)."""

    name = "rlcard_rule"

    def __init__(self, rules: UnoRules | None = None) -> None:
        """``rules`` only tells whether held wilds count against a Wild Draw Four (R12.9)."""
        self._wilds_match = rule_tables(rules)[2]

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action per row (int64 [B])."""
        obs, mask = as_batch(observation, action_mask)
        # Draw one uniform per row whatever the branch, so the stream does not depend on play.
        u = rng.random(obs.shape[0])
        return _act_batch(obs, mask, u, self._wilds_match)

    def act_chunked(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator, chunks: Chunks
    ) -> np.ndarray:
        """``act``'s actions from the same draws, its rows in the contiguous chunks of ``chunks`` (one per thread)."""
        obs, mask = as_batch(observation, action_mask)
        u = rng.random(obs.shape[0])
        out = np.empty(obs.shape[0], np.int64)
        chunks.run(obs.shape[0], _act_rows, obs, mask, u, self._wilds_match, out)
        return out
