"""Beliefs over the hidden hands, from one seat's information: what a determinization may deal.

A belief turns the searching seat's observation into per-seat exclusions for
``Engine.resample_hidden(..., exclude=...)`` (``uno_env.engine.deal``: uniform among the deals
that respect them). It reads the observation only — the seat's information set (R11) — so two
games that differ only in hidden cards give the same exclusions.

| belief | exclusions |
|---|---|
| ``uniform`` | none: the unseen cards dealt uniformly (the searches before issue 30) |
| ``public`` | a seat whose last turn ended drawing (``drew_on_color`` = c) is dealt no card of colour c and no wild |

Why ``public`` excludes what it does: a seat that ends its turn by drawing had nothing it chose
to play. Under R4 with ``allow_voluntary_draw`` off that is a fact (no card of the colour, no
wild); with it on (classic) it is a model of the opponent — every agent of this project
(``heuristic``, ``rlcard_rule``, ``greedy``, the searches' rollouts) plays when it can. The
observation keeps the colour only, not the top card's rank, and the field stays set until the
seat plays, so cards the seat received since (a Draw Two, a Wild Draw Four, a penalty) may
break it; ``benchmarks/beliefs.py`` measures how often the true hands do
(``benchmarks/results/beliefs.md``). A deal that cannot meet the exclusions drops them (the
deal's status says so).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from uno_env.cards import NUM_CARD_TYPES, NUM_RANKS, WILD
from uno_env.observation import drew_on_color_of, num_seats


class Belief(Protocol):
    """What a determinized search asks a belief: the exclusions of a deal for the seat to act."""

    name: str

    def exclusions(self, observation: np.ndarray, seat: int) -> np.ndarray | None:
        """Bool [num_players, 57] (row p: card types seat p is not dealt; the observer's row
        unused) from the observation of absolute seat ``seat``, or None for a uniform deal."""
        ...


class UniformBelief:
    """Every deal of the unseen cards equally likely (no exclusions)."""

    name = "uniform"

    def exclusions(self, observation: np.ndarray, seat: int) -> np.ndarray | None:
        """None: the uniform deal."""
        return None


class PublicBelief:
    """Hard constraints read from the public history in the observation (module table)."""

    name = "public"

    def exclusions(self, observation: np.ndarray, seat: int) -> np.ndarray | None:
        """The exclusions of the module table; None when no seat has any."""
        n = int(num_seats(observation))
        ex = np.zeros((n, NUM_CARD_TYPES), bool)
        for k in range(1, n):  # relative slot k is absolute seat (seat + k) % n
            c = int(drew_on_color_of(observation, k))
            if c >= 0:
                p = (seat + k) % n
                ex[p, c * NUM_RANKS : (c + 1) * NUM_RANKS] = True
                ex[p, WILD:] = True
        return ex if ex.any() else None


BELIEFS: dict[str, type] = {"uniform": UniformBelief, "public": PublicBelief}
"""The beliefs by name (the searches' ``belief`` setting)."""


def make_belief(belief: str | Belief) -> Belief:
    """A belief from its name (``BELIEFS``) or a ``Belief`` object as it is."""
    if isinstance(belief, str):
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {sorted(BELIEFS)} or a Belief object, got {belief!r}")
        return BELIEFS[belief]()
    if not callable(getattr(belief, "exclusions", None)):
        raise ValueError(f"belief must be one of {sorted(BELIEFS)} or a Belief object, got {belief!r}")
    return belief
