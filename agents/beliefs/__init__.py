"""Beliefs over the hidden hands, from one seat's information: what a determinization may deal.

A belief turns the searching seat's observation into per-seat exclusions for
``Engine.resample_hidden(..., exclude=...)`` (``uno_env.engine.deal``: uniform among the deals
that respect them). It reads the observation only — the seat's information set (R11) — so two
games that differ only in hidden cards give the same exclusions. One module per belief:

| belief | module | exclusions | why it ships |
|---|---|---|---|
| ``uniform`` | here | none: the unseen cards dealt uniformly (the searches before beliefs) | the baseline (``flatmc:64@uniform`` on the ladder) |
| ``public`` | ``agents.beliefs.public`` | a seat whose last turn ended drawing (``drew_on_color`` = c) is dealt no card of colour c and no wild | ISMCTS' default |
| ``net`` | ``agents.beliefs.net`` | ``public``'s exclusions, and deals weighted by a learned network's prediction of the other hands (below) | the flat search's default |
| ``replay-heuristic`` | ``agents.beliefs.replay_heuristic`` | ``public``'s exclusions, and deals weighted by ``HeuristicAgent``'s likelihood of every decision of the round, replayed in whole worlds | a measurement: against ``heuristic``, the opponent's own code (the upper bound of reading the round) |

Beliefs that were measured and not adopted (``policy``, ``history``, ``replay`` with a learned
opponent model) are recorded in the development docs with their figures.

Why ``public`` excludes what it does: a seat that ends its turn by drawing had nothing it chose
to play. Under R4 with ``allow_voluntary_draw`` off that is a fact (no card of the colour, no
wild); with it on (classic) it is a model of the opponent — every agent of this project
(``heuristic``, ``rlcard_rule``, ``greedy``, the searches' rollouts) plays when it can. The
observation keeps the colour only, not the top card's rank, and the field stays set until the
seat plays, so cards the seat received since (a Draw Two, a Wild Draw Four, a penalty) may
break it; ``benchmarks/beliefs.py`` measures how often the true hands do
(``benchmarks/results/beliefs.md``). A deal that cannot meet the exclusions drops them (the
deal's status says so).

**Soft evidence**: a belief may also weigh the deals that respect its exclusions,
``log_weights``: the log-likelihood of what the seats did given the hands a deal gives them.
The search then deals several candidates per determinization and keeps them in proportion to
their weights (sampling importance resampling, ``DeterminizedSearch._determinize``).

**The network** (``net``, 2 and 4 players): a small MLP per table size (``agents.beliefs.net``,
trained on games of the ladder's agents by ``python -m training.fit_belief_net``, its card beside
its weights) reads the seat's observation, its last ``NET_ROWS`` history rows, the round's
history counts and, per colour, the evidence of the whole round that a seat lacks it
(``void_evidence``; ``Engine.history``: the search asks for them, ``history_form = "arrays"``)
and predicts, for each other seat, the distribution of its copies of each card type and per
colour the chance of a void. A deal's log-weight (``mode`` ``types``) is the sum over the other
seats and the types of log(network's marginal / the ``public`` deal's hypergeometric marginal)
of the copies it deals (``voids``: the log-odds ratio of each colour void instead; ``both``: the
two added, which counts the voids twice). Probabilities are clipped to [0.001, 0.999]: the
network never rules a deal out. Without the history (an engine that keeps none), at a table
size with no network (3, 5 or more players) or at rules other than classic (scoring aside) it
weighs nothing, as ``public``.
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

    A belief may also define ``log_weights(observation, seat, hands)``: the log-likelihood, up
    to a constant, of what the seats did given the dealt ``hands`` (int [G, num_players, 57],
    absolute seats), float [G], or None when the observation holds nothing to weigh (then
    ``hands`` may have G = 0). The searches then resample their deals by it (module docs).
    """

    name: str

    def exclusions(self, observation: np.ndarray, seat: int) -> np.ndarray | None:
        """Bool [num_players, 57] (row p: card types seat p is not dealt; the observer's row
        unused) from the observation of absolute seat ``seat``, or None for a uniform deal."""
        ...


def log_weights_of(
    belief: Belief, observation: np.ndarray, seat: int, hands: np.ndarray, events: Any = None
) -> np.ndarray | None:
    """A belief's soft evidence for the dealt ``hands`` (int [G, num_players, 57], absolute
    seats), float [G] up to a constant; None when it has none (a belief without
    ``log_weights``, or nothing in the observation to weigh). ``events``: the round so far as
    ``seat`` saw it, in the belief's ``history_form`` (``Engine.history_events``, or ``Engine.history``'s rows and counts), for a belief that reads the history
    (``history_length`` > 0); None when the engine keeps none."""
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
    """A belief from its name (``BELIEFS``; one that replays the round is built for ``rules``,
    classic by default) or a ``Belief`` object as it is."""
    if isinstance(belief, str):
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {sorted(BELIEFS)} or a Belief object, got {belief!r}")
        cls = BELIEFS[belief]
        return cls(rules) if getattr(cls, "needs_rules", False) else cls()
    if not callable(getattr(belief, "exclusions", None)):
        raise ValueError(f"belief must be one of {sorted(BELIEFS)} or a Belief object, got {belief!r}")
    return belief
