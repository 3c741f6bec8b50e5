"""Beliefs over the hidden hands, from one seat's information: what a determinization may deal.

A belief turns the searching seat's observation into per-seat exclusions for
``Engine.resample_hidden(..., exclude=...)`` (``uno_env.engine.deal``: uniform among the deals
that respect them). It reads the observation only — the seat's information set (R11) — so two
games that differ only in hidden cards give the same exclusions.

| belief | exclusions |
|---|---|
| ``uniform`` | none: the unseen cards dealt uniformly (the searches before beliefs) |
| ``public`` | a seat whose last turn ended drawing (``drew_on_color`` = c) is dealt no card of colour c and no wild |
| ``policy`` | ``public``'s exclusions, and deals weighted by the soft evidence of a policy model (below) |
| ``history`` | ``public``'s exclusions, and deals weighted by every voluntary draw of the round (below) |
| ``net`` | ``public``'s exclusions, and deals weighted by a learned network's prediction of the other hand (below) |
| ``replay`` | ``public``'s exclusions, and deals weighted by the learned opponent model's (``agents.opponent_model``) likelihood of every decision of the round, replayed in whole worlds (``agents.replay_belief``) |
| ``replay-heuristic`` | the same with ``HeuristicAgent``'s code as the model: against ``heuristic``, the true policy (a measurement of the upper bound) |

Why ``public`` excludes what it does: a seat that ends its turn by drawing had nothing it chose
to play. Under R4 with ``allow_voluntary_draw`` off that is a fact (no card of the colour, no
wild); with it on (classic) it is a model of the opponent — every agent of this project
(``heuristic``, ``rlcard_rule``, ``greedy``, the searches' rollouts) plays when it can. The
observation keeps the colour only, not the top card's rank, and the field stays set until the
seat plays, so cards the seat received since (a Draw Two, a Wild Draw Four, a penalty) may
break it; ``benchmarks/beliefs.py`` measures how often the true hands do
(``benchmarks/results/beliefs.md``). A deal that cannot meet the exclusions drops them (the
deal's status says so).

**Soft evidence** (``policy``): a belief may also weigh the deals that respect its exclusions,
``log_weights``: the log-likelihood of what the seats did given the hands a deal gives them.
The search then deals several candidates per determinization and keeps them in proportion to
their weights (sampling importance resampling, ``DeterminizedSearch._determinize``). The
``policy`` belief models one decision the observation records: the colour a seat named with the
wild on top of the pile (``named_color`` equal to the colour in play; an older wild's colour is
stale, the hand has changed since). A seat names colour c with probability
``exp(tilt * n_c) / sum_j exp(tilt * n_j)``, ``n_j`` the cards of colour j it holds (the
heuristic names the colour it is long in; ``HeuristicAgent``'s choice also weighs what it has
seen); its hand of now stands for its hand then. ``tilt`` is fitted by maximum likelihood on
``heuristic`` games (``benchmarks/beliefs.py --fit-tilt``, ``benchmarks/results/beliefs.md``).

**The history** (``history``): a seat that chose to draw held nothing it could play: no card of
the colour in play, none of the top card's rank, no wild. Cards of that set it holds now must
have come since, from the cards it drew (public counts) less those of the set it played (public
plays). Every voluntary draw of the round (the seat's history, ``Engine.history_events``; the
searches read it when the engine keeps one) is such a constraint; a deal that breaks one by x
cards weighs ``epsilon ** x``: the chance that a player drew holding x playable cards. A Swap
Hands moves a seat's constraints with its hand; a Shuffle Hands ends them.

**The network** (``net``, 2 and 4 players): a small MLP per table size (``agents.belief_net``,
trained on games of the ladder's agents by ``python -m training.belief_net``, its card beside
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

from pathlib import Path
from typing import Any, Protocol

import numpy as np

from uno_env.cards import CARD_COLOR, NUM_CARD_TYPES, NUM_COLORS, WILD
from uno_env.observation import color_of, named_color_of, num_seats, top_of
from uno_env.rules import UnoRules

from .belief_net import (
    EVIDENCE_ROWS,
    MAX_COPIES,
    MODEL_PATHS,
    BeliefNet,
    colour_sums,
    count_log_marginals,
    hypergeometric_voids,
    net_features,
    public_view,
    reads_rules,
)
from .public_belief import PublicBelief, playable_set
from .replay_belief import HeuristicReplayBelief, ReplayBelief


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


class PolicyBelief(PublicBelief):
    """``public``'s exclusions, and deals weighted by a model of the colour each seat named (module docs)."""

    name = "policy"
    tilt = 2.0
    """log-odds per card of the named colour (fitted: ``benchmarks/results/beliefs.md``)"""

    def log_weights(self, observation: np.ndarray, seat: int, hands: np.ndarray) -> np.ndarray | None:
        """Sum over the seats that named the colour in play with the wild on top of log P(that
        colour | the dealt hand); None when the top card is not a wild (an older named colour
        is stale: the hand has changed since)."""
        n = int(num_seats(observation))
        color = int(color_of(observation))
        if top_of(observation) < WILD or color < 0:
            return None
        named = [(color, (seat + k) % n) for k in range(1, n) if named_color_of(observation, k) == color]
        if not named:
            return None
        coloured = hands[:, :, :WILD]
        by_color = np.zeros((hands.shape[0], hands.shape[1], NUM_COLORS))
        for c in range(NUM_COLORS):
            by_color[:, :, c] = coloured[:, :, CARD_COLOR[:WILD] == c].sum(-1)
        z = self.tilt * by_color
        log_p = z - np.logaddexp.reduce(z, axis=-1, keepdims=True)
        out: np.ndarray = np.zeros(hands.shape[0])
        for c, p in named:
            out += log_p[:, p, c]
        return out


class HistoryBelief(PublicBelief):
    """``public``'s exclusions, and deals weighted by the round's voluntary draws (module docs)."""

    name = "history"
    history_length = 256
    """events of the round it reads (the engine keeps them: ``Engine(history=K)``)"""
    epsilon = 0.1
    """the chance a player drew holding one card it could have played"""

    def log_weights(
        self, observation: np.ndarray, seat: int, hands: np.ndarray, events: list[dict[str, Any]] | None
    ) -> np.ndarray | None:
        """log(epsilon) times the cards by which each dealt hand breaks the round's voluntary
        draws (module docs); None when no other seat drew by choice."""
        n = hands.shape[1]
        # Each constraint: [seat, playable mask, budget of cards it may have gained since].
        constraints: list[list[Any]] = []
        top, color = -1, -1
        for ev in events or ():
            kind = ev["type"]
            if kind in ("flip", "play"):
                top = ev["card"]
                if CARD_COLOR[top] >= 0:
                    color = int(CARD_COLOR[top])
                if kind == "play":
                    for c in constraints:
                        if c[0] == ev["player"] and c[1][top]:
                            c[2] -= ev.get("count", 1)
            elif kind == "color":
                color = ev["color"]
            elif kind == "draw":
                q = ev["player"]
                k = len(ev["cards"]) if "cards" in ev else ev["count"]
                if ev["reason"] == "voluntary" and q != seat and top >= 0 and color >= 0:
                    constraints.append([q, playable_set(top, color), 0])
                for c in constraints:
                    if c[0] == q:
                        c[2] += k
            elif kind == "swap":
                p, q = ev["player"], ev["with"]
                for c in constraints:
                    c[0] = q if c[0] == p else p if c[0] == q else c[0]
            elif kind == "shuffle_hands":
                constraints = []
        constraints = [c for c in constraints if c[0] != seat and c[0] < n]
        if not constraints:
            return None
        out = np.zeros(hands.shape[0])
        for q, playable, budget in constraints:
            excess = np.maximum(hands[:, q, playable].sum(-1) - budget, 0)
            out += np.log(self.epsilon) * excess
        return out


_TYPE_ROWS = np.arange(NUM_CARD_TYPES) * (MAX_COPIES + 1)


class NetBelief(PublicBelief):
    """``public``'s exclusions, and deals weighted by the belief network's prediction of every
    other hand (``agents.belief_net``; module docs). At a table size with no network, at other
    rules, and without the seat's history, it weighs nothing (``public``)."""

    name = "net"
    history_length = EVIDENCE_ROWS
    """history rows the network reads (the engine keeps them: ``Engine(history=K)``)"""
    history_form = "arrays"
    """the search hands it the seat's encoded history (``Engine.history``: rows and counts), not events"""
    mode = "types"
    """what the weights tilt: ``voids`` (each colour void), ``types`` (copies of each type), ``both``"""
    clip = 1e-3
    """probabilities are kept in [clip, 1 - clip]: no deal is ruled out by the network"""
    needs_rules = True
    """``make_belief`` builds it for the search's rules: it weighs only under the rules it learned"""

    def __init__(
        self, rules: UnoRules | None = None, models: dict[int, str | Path] | None = None, mode: str = "types"
    ) -> None:
        """``rules`` of the rounds it reads (None: classic); at other rules than the networks
        learned (``agents.belief_net.reads_rules``) it weighs nothing, as ``public``.
        ``models``: the network for each table size (None: the shipped ones, ``MODEL_PATHS``)."""
        if mode not in ("voids", "types", "both"):
            raise ValueError(f"mode must be one of 'voids', 'types', 'both', got {mode!r}")
        self.mode = mode
        self.nets = {int(n): BeliefNet(p) for n, p in (MODEL_PATHS if models is None else models).items()}
        self.applies = reads_rules(UnoRules() if rules is None else rules)

    def tilts(
        self, x: np.ndarray, allowed: np.ndarray, sizes: np.ndarray, num_players: int = 2
    ) -> tuple[np.ndarray, np.ndarray]:
        """From features ``x`` [N, F] (``net_features``) and the public deal (``allowed`` [N, 57],
        ``sizes`` [N]) of the seats predicted: the log-odds a colour void gains over the public
        deal [N, 4], and per type and count the log-ratio of the network's marginal to the public
        deal's [N, 57, 5], by the network of ``num_players``."""
        void_logits, count_logits = self.nets[num_players](x)
        p = np.clip(1.0 / (1.0 + np.exp(-void_logits.astype(np.float64))), self.clip, 1 - self.clip)
        q = np.clip(hypergeometric_voids(allowed, sizes), self.clip, 1 - self.clip)
        theta_v = np.log(p / (1 - p)) - np.log(q / (1 - q))
        feasible = np.arange(MAX_COPIES + 1)[None, None, :] <= allowed[:, :, None]
        z = np.where(feasible, count_logits, -np.inf)
        net = np.log(np.clip(np.exp(z - np.logaddexp.reduce(z, axis=-1, keepdims=True)), self.clip, None))
        theta_t = np.where(feasible, net - count_log_marginals(allowed, sizes), 0.0)
        return theta_v, theta_t

    def hand_log_weights(self, hands: np.ndarray, theta_v: np.ndarray, theta_t: np.ndarray) -> np.ndarray:
        """Log-weights [G] of one seat's dealt hands [G, 57] under one decision's tilts (``tilts``' rows)."""
        out = np.zeros(hands.shape[0])
        if self.mode in ("voids", "both"):
            out += (colour_sums(hands) == 0) @ theta_v
        if self.mode in ("types", "both"):
            # One flat gather: theta_t[t, copies of t] for every type of every hand.
            at = np.minimum(hands, MAX_COPIES) + _TYPE_ROWS
            out += np.take(theta_t.ravel(), at).sum(1)
        return out

    def log_weights(
        self, observation: np.ndarray, seat: int, hands: np.ndarray, history: tuple[np.ndarray, np.ndarray] | None
    ) -> np.ndarray | None:
        """The network's log-weights of the dealt hands [G, n, 57]: the sum over the other seats
        of each hand's weight; None where it weighs nothing (class docs; ``history``: rows
        [K, 122], counts [10, 14])."""
        n = int(num_seats(observation))
        if history is None or not self.applies or n not in self.nets:
            return None
        if hands.shape[0] == 0:
            return np.zeros(0)
        rows, counts = history
        slots = np.arange(1, n)
        o = np.repeat(observation[None], n - 1, 0)
        x = net_features(o, np.repeat(rows[None], n - 1, 0), np.repeat(counts[None], n - 1, 0), slot=slots)
        _, allowed, sizes = public_view(o, slots)
        theta_v, theta_t = self.tilts(x, allowed, sizes, n)
        out = np.zeros(hands.shape[0])
        for j, k in enumerate(slots):
            out += self.hand_log_weights(hands[:, (seat + k) % n], theta_v[j], theta_t[j])
        return out


BELIEFS: dict[str, type] = {
    "uniform": UniformBelief,
    "public": PublicBelief,
    "policy": PolicyBelief,
    "history": HistoryBelief,
    "net": NetBelief,
    "replay": ReplayBelief,
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
