"""``RLCardRuleAgent``: RLCard's ``uno-rule-v1`` decision logic carried over to our rules."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno_env.observation import phase_of
from uno_env.policy import as_batch
from uno_env.rules import UnoRules

from ._simple_rules import rlcard_row
from ._tactics import rule_tables


@njit(cache=True)
def _act_batch(obs, mask, u, wilds_match):
    out = np.empty(obs.shape[0], np.int64)
    for b in range(obs.shape[0]):
        out[b] = rlcard_row(obs[b], mask[b], u[b], phase_of(obs[b]), wilds_match)
    return out


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
