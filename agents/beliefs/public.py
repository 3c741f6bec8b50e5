"""The ``public`` belief, which every belief with soft evidence builds on, and the cards a seat could have played."""

from __future__ import annotations

import numpy as np

from uno_env.cards import NUM_CARD_TYPES, NUM_RANKS, WILD
from uno_env.observation import drew_on_color_of, num_seats


class PublicBelief:
    """Hard constraints read from the public history in the observation (``agents.beliefs``' table)."""

    name = "public"

    def exclusions(self, observation: np.ndarray, seat: int) -> np.ndarray | None:
        """The exclusions of ``agents.beliefs``' table; None when no seat has any."""
        n = int(num_seats(observation))
        ex = np.zeros((n, NUM_CARD_TYPES), bool)
        for k in range(1, n):  # relative slot k is absolute seat (seat + k) % n
            c = int(drew_on_color_of(observation, k))
            if c >= 0:
                p = (seat + k) % n
                ex[p, c * NUM_RANKS : (c + 1) * NUM_RANKS] = True
                ex[p, WILD:] = True
        return ex if ex.any() else None


def playable_set(top: int, color: int) -> np.ndarray:
    """Bool [57]: the card types a player could play on ``top`` with ``color`` in play (R4: the
    colour, the top card's rank or symbol, any wild)."""
    out = np.zeros(NUM_CARD_TYPES, bool)
    out[color * NUM_RANKS : (color + 1) * NUM_RANKS] = True
    if top < WILD:
        out[top % NUM_RANKS : WILD : NUM_RANKS] = True
    out[WILD:] = True
    return out
