"""Beliefs over the hidden hands, from one seat's information: what a determinization may deal.

One module per belief (``BELIEFS``; what each deals: docs/agents.md, "Beliefs"). A belief reads
the seat's observation only, so two games that differ only in hidden cards give the same deals.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from uno_env.rules import UnoRules

from .net import NetBelief
from .public import PublicBelief, playable_set
from .replay_heuristic import HeuristicReplayBelief

__all__ = [
    "BELIEFS",
    "Belief",
    "HeuristicReplayBelief",
    "NetBelief",
    "PublicBelief",
    "UniformBelief",
    "log_weights_of",
    "make_belief",
    "playable_set",
]


class Belief(Protocol):
    """What a determinized search asks a belief: the exclusions of a deal for the seat to act.

    It may also define ``log_weights(observation, seat, hands)``: the log-likelihood, up to a
    constant, of what the seats did given the dealt ``hands`` (int [G, num_players, 57], absolute
    seats), float [G], or None when there is nothing to weigh (then G may be 0).
    """

    name: str

    def exclusions(self, observation: np.ndarray, seat: int) -> np.ndarray | None:
        """Bool [num_players, 57] (row p: card types seat p is not dealt; the observer's row
        unused) from the observation of absolute seat ``seat``, or None for a uniform deal."""
        ...


def log_weights_of(
    belief: Belief, observation: np.ndarray, seat: int, hands: np.ndarray, events: Any = None
) -> np.ndarray | None:
    """A belief's ``log_weights`` for the dealt ``hands`` (int [G, num_players, 57]), float [G]; None: none.

    ``events``: the round as ``seat`` saw it, in the belief's ``history_form``, for a belief that
    reads the history (None: the engine keeps none)."""
    weigh = getattr(belief, "log_weights", None)
    if weigh is None:
        return None
    if getattr(belief, "history_length", 0):
        return weigh(observation, seat, hands, events)
    return weigh(observation, seat, hands)


class UniformBelief:
    """Every deal of the unseen cards equally likely (no exclusions)."""

    name = "uniform"

    def exclusions(self, observation: np.ndarray, seat: int) -> np.ndarray | None:
        """None: the uniform deal."""
        return None


BELIEFS: dict[str, type] = {
    "uniform": UniformBelief,
    "public": PublicBelief,
    "net": NetBelief,
    "replay-heuristic": HeuristicReplayBelief,
}
"""The beliefs by name (the searches' ``belief`` setting)."""


def make_belief(belief: str | Belief, rules: UnoRules | None = None) -> Belief:
    """A belief from its name (``BELIEFS``, built for ``rules`` where it needs them) or a ``Belief`` as it is."""
    if isinstance(belief, str):
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {sorted(BELIEFS)} or a Belief object, got {belief!r}")
        cls = BELIEFS[belief]
        return cls(rules) if getattr(cls, "needs_rules", False) else cls()
    if not callable(getattr(belief, "exclusions", None)):
        raise ValueError(f"belief must be one of {sorted(BELIEFS)} or a Belief object, got {belief!r}")
    return belief
