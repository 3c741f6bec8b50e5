"""``replay-heuristic``: policy-based inference over the whole round, by the opponent's own code.

Each candidate deal is turned into whole worlds (where each card came from), the round's public
actions are replayed in the engine, and the worlds are weighed by ``HeuristicAgent``'s likelihood
of every decision the other seats took (docs/agents.md, "Beliefs"). It reads only the seat's view
of the round and its observation, and seeds its random choices from them.
"""

from __future__ import annotations

import zlib
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from uno_env import UNREPLAYABLE_EVENTS, Engine, UnoRules
from uno_env.actions import ACCEPT, CALL_UNO, CATCH_UNO, CHALLENGE, CHOOSE_RED, DRAW, PASS, double_of
from uno_env.cards import CARD_COLOR, CARD_RANK, NUM_CARD_TYPES, REVERSE, WILD
from uno_env.observation import OBS_HAND, OBS_SCORES, SCORE_SCALE, num_seats

from .._tactics import rule_tables
from ..heuristic import HeuristicAgent
from .public import PublicBelief, playable_set

# Event kinds that are a seat's decision, and the action id each stands for (play: per card).
_CHOICES = {"pass": PASS, "accept": ACCEPT, "challenge": CHALLENGE, "call_uno": CALL_UNO, "catch_uno": CATCH_UNO}
# An action id below this is taken only in worlds waiting for that seat's decision:
# ``_IF_ASKED - a`` stands for action ``a``.
_IF_ASKED = -1


class _Round:
    """The round as the seat saw it, in the form the replay needs (``_read_round``)."""

    def __init__(self) -> None:
        self.top = -1  # the card turned before the first decision
        self.color = -1  # the colour in play at the first decision (a wild turned: the colour named)
        self.first = -1  # the seat of the first decision
        self.actions: list[tuple[int, int, int]] = []  # (event index, seat, action id or _IF_ASKED - id)
        self.draws: list[tuple[int, int, list[int] | int]] = []  # (event index, seat, cards seen or count)
        self.plays: list[tuple[int, int, int]] = []  # (event index, seat, card) per copy played
        # Per voluntary draw (event index): the cards it could be played on then (R4), and what
        # followed: the card played at once (it is the card drawn), kept by a pass (it could be
        # played), or the turn passed by itself (it could not).
        self.playable: dict[int, np.ndarray] = {}
        self.drawn_played: dict[int, int] = {}  # play event index -> the draw it played
        self.kept: dict[int, bool] = {}  # draw event index -> whether its card could be played
        # Wild Draw Fours challenged and found innocent (R6): (seat, play event index, colour
        # then): the seat held no card of that colour when it played it.
        self.innocent: list[tuple[int, int, int]] = []


def _read_round(events: list[dict[str, Any]]) -> _Round | None:
    """Parse the round's events (a seat's view) into a ``_Round``; None when it cannot be replayed."""
    if not events or events[0]["type"] != "flip":
        return None  # the history does not reach back to the round's start
    r = _Round()
    started = False
    top = color = -1
    before = (-1, -1)  # the last play's event index and the colour in play before it
    for t, ev in enumerate(events):
        kind = ev["type"]
        if kind in UNREPLAYABLE_EVENTS:
            return None
        p = ev.get("player", -1)
        if not started:
            if kind == "flip":
                r.top = top = ev["card"]
                r.color = color = int(CARD_COLOR[top])
                continue
            if kind == "return_first_card" or (kind == "draw" and ev["reason"] != "voluntary"):
                continue  # a first card's effects: part of the hands the world is dealt
            if kind == "color" and r.top >= WILD:
                r.color = color = ev["color"]  # the first player names the colour of a wild turned up
                continue
            started = True
            r.first = p
        last = r.actions[-1] if r.actions else None
        if last is not None and last[2] == DRAW and last[0] == t - 1:
            if kind == "play" and p == last[1]:
                r.drawn_played[t] = t - 1
            else:
                r.kept[t - 1] = kind == "pass" and p == last[1]
        if kind == "play":
            count = ev.get("count", 1)
            before = (t, color)
            r.actions.append((t, p, ev["card"] if count == 1 else int(double_of(ev["card"]))))
            r.plays += [(t, p, ev["card"])] * count
            top = ev["card"]
            color = int(CARD_COLOR[top]) if top < WILD else color
        elif kind == "color":
            r.actions.append((t, p, CHOOSE_RED + ev["color"]))
            color = ev["color"]
        elif kind == "draw":
            if ev["reason"] == "voluntary":
                r.actions.append((t, p, DRAW))
                r.playable[t] = playable_set(top, color)
            elif ev["reason"] == "draw_until_color":
                return None
            elif ev["reason"] in ("draw_two", "draw_four"):
                # Taking a Draw Two or Four is a decision where it could be stacked (R6), else
                # the engine's own step: the replay takes it where the world waits for it.
                r.actions.append((t, p, _IF_ASKED - DRAW))
            r.draws.append((t, p, ev["cards"] if "cards" in ev else ev["count"]))
        elif kind in _CHOICES:
            r.actions.append((t, p, _CHOICES[kind]))
            if kind == "challenge" and ev.get("verdict") == "innocent":
                r.innocent.append((ev["challenged"], *before))
        elif kind not in ("flip", "return_first_card"):
            return None  # a kind this replay does not know: do not guess
    if r.actions and r.actions[-1][2] == DRAW:
        r.kept[r.actions[-1][0]] = False  # the turn passed to the seat by itself
    if not started or r.top < 0 or r.color < 0:
        return None
    return r


class _Slots(NamedTuple):
    """Where seat q's cards of the round arrived, the same for every candidate (its hand size is public)."""

    times: np.ndarray  # int64 [S]: the event index of each receiving slot, -1 for the deal
    rule: np.ndarray  # int64 [S]: 1 its card could be played then, 0 it could not, -1 no rule
    playable: np.ndarray  # bool [S, 57]: the cards that could be played then (rule >= 0)
    play_time: np.ndarray  # int64 [P]: the event index of each card q played
    play_card: np.ndarray  # int64 [P]
    play_slot: np.ndarray  # int64 [P]: the slot of a drawn card played at once (a draw's last), else -1
    lacked: np.ndarray  # int64 [K, 2]: (event index, colour) of each time q held no card of the colour


def _slots(r: _Round, q: int, size: int) -> _Slots | None:
    """Seat q's ``_Slots`` given its hand ``size`` now; None when the counts do not add up."""
    played = [(t, c) for t, p, c in r.plays if p == q]
    n_slots = size + len(played)
    at = n_slots - sum(c if isinstance(c, int) else len(c) for _, p, c in r.draws if p == q)
    if at < 0:
        return None
    times = np.full(n_slots, -1, np.int64)
    rule = np.full(n_slots, -1, np.int64)
    playable = np.zeros((n_slots, NUM_CARD_TYPES), bool)
    last_of: dict[int, int] = {}
    for t, p, c in r.draws:
        if p == q:
            k = c if isinstance(c, int) else len(c)
            times[at : at + k] = t
            last_of[t] = at + k - 1
            if t in r.playable:  # a voluntary draw: several cards only until one could be played (R4)
                playable[at : at + k] = r.playable[t]
                rule[at : at + k - 1] = 0
                if t in r.kept:
                    rule[at + k - 1] = int(r.kept[t])
            at += k
    play_slot = np.array([last_of[r.drawn_played[t]] if t in r.drawn_played else -1 for t, _ in played], np.int64)
    return _Slots(
        times,
        rule,
        playable,
        np.array([t for t, _ in played], np.int64),
        np.array([c for _, c in played], np.int64),
        play_slot,
        np.array([(t, c) for p, t, c in r.innocent if p == q], np.int64).reshape(-1, 2),
    )


@njit(cache=True)
def _assign_batch(hands, times, rule, playable, play_time, play_card, play_slot, lacked, u, cards, ok):
    """One assignment per candidate hand (``hands`` [W, 57]) of the cards seat q received to its slots
    (``_Slots``), into ``cards`` [W, S]; ``ok`` [W] False where there is none.

    A bipartite matching by augmenting paths (Kuhn's algorithm) in the random orders of ``u``
    [W, 2S]: a valid assignment whenever one exists, not drawn from the uniform law over them.
    """
    n_slots = times.shape[0]
    n_play = play_time.shape[0]
    kind = np.empty(n_slots, np.int64)
    deadline = np.empty(n_slots, np.int64)
    compat = np.empty((n_slots, n_slots), np.bool_)
    match_item = np.empty(n_slots, np.int64)  # the slot of each card
    match_slot = np.empty(n_slots, np.int64)  # the card in each slot
    from_item = np.empty(n_slots, np.int64)
    seen = np.empty(n_slots, np.bool_)
    queue = np.empty(n_slots, np.int64)
    fixed = np.zeros(n_slots, np.bool_)  # the draws of cards played at once stay theirs
    for j in range(n_play):
        if play_slot[j] >= 0:
            fixed[play_slot[j]] = True
    for w in range(hands.shape[0]):
        ok[w] = False
        n_items = n_play
        for j in range(n_play):
            kind[j] = play_card[j]
            deadline[j] = play_time[j]
        for t in range(hands.shape[1]):
            for _ in range(hands[w, t]):
                if n_items < n_slots:
                    kind[n_items] = t
                    deadline[n_items] = 1 << 40
                n_items += 1
        if n_items != n_slots:
            continue
        for i in range(n_slots):
            for s in range(n_slots):
                compat[i, s] = times[s] < deadline[i] and (rule[s] < 0 or playable[s, kind[i]] == (rule[s] == 1))
                for k in range(lacked.shape[0]):
                    t = lacked[k, 0]
                    if CARD_COLOR[kind[i]] == lacked[k, 1] and times[s] < t < deadline[i]:
                        compat[i, s] = False
        match_item[:] = -1
        match_slot[:] = -1
        good = True
        for j in range(n_play):
            s = play_slot[j]
            if s >= 0:
                if match_slot[s] >= 0 or not compat[j, s]:
                    good = False
                match_slot[s] = j
                match_item[j] = s
        if not good:
            continue
        item_order = np.argsort(u[w, :n_slots])
        slot_order = np.argsort(u[w, n_slots:])
        for i0 in item_order:
            if match_item[i0] >= 0:
                continue
            # Breadth-first search for an augmenting path from card i0.
            seen[:] = False
            head, tail = 0, 1
            queue[0] = i0
            found = -1
            while head < tail and found < 0:
                i = queue[head]
                head += 1
                for s in slot_order:
                    if compat[i, s] and not seen[s] and not fixed[s]:
                        seen[s] = True
                        from_item[s] = i
                        if match_slot[s] < 0:
                            found = s
                            break
                        queue[tail] = match_slot[s]
                        tail += 1
            if found < 0:
                good = False
                break
            s = found
            while True:  # flip the path: each card on it moves to the slot that reached it
                it = from_item[s]
                prev = match_item[it]
                match_slot[s] = it
                match_item[it] = s
                if it == i0:
                    break
                s = prev
        if not good:
            continue
        for s in range(n_slots):
            cards[w, s] = kind[match_slot[s]]
        ok[w] = True


class HeuristicReplayBelief(PublicBelief):
    """``public``'s exclusions, and deals weighted by ``HeuristicAgent``'s likelihood of the round's decisions."""

    name = "replay-heuristic"
    history_length = 256
    """events of the round it reads (the engine keeps them: ``Engine(history=K)``)"""
    candidates = 64
    """candidate deals weighed per decision; the search draws its determinizations from them"""
    assignments = 4
    """worlds per candidate: orders in which its cards may have arrived"""
    epsilon = 0.1
    """the model's probability of any action other than its own, spread over them"""
    needs_rules = True
    """``make_belief`` builds it for the search's rules (it replays them)"""

    def __init__(self, rules: UnoRules | None = None, model: Any = None) -> None:
        """``rules`` of the rounds it replays; ``model``: the agent that stands for every other
        seat (``act(obs, mask, rng)``; None: ``HeuristicAgent`` for the rules)."""
        self.rules = UnoRules() if rules is None else rules
        self.model = HeuristicAgent(self.rules) if model is None else model
        self._deck = rule_tables(self.rules)[0]
        self._engines: dict[tuple[int, int], Engine] = {}

    def log_weights(
        self, observation: np.ndarray, seat: int, hands: np.ndarray, events: list[dict[str, Any]] | None
    ) -> np.ndarray | None:
        """Log of each candidate's mean likelihood over its worlds (-inf: none replays); None: no replay."""
        n = int(num_seats(observation))
        r = _read_round(events or [])
        if r is None or not any(p != seat for _, p, _ in r.actions):
            return None
        if hands.shape[0] == 0:
            return np.zeros(0)
        rng = np.random.default_rng(zlib.crc32(observation.tobytes()) + len(r.actions))
        worlds = np.repeat(hands, self.assignments, axis=0)
        size = worlds.shape[0]
        live = np.ones(size, bool)
        received: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for q in range(n):
            if q == seat:
                continue
            slots = _slots(r, q, int(worlds[0, q].sum()))
            if slots is None:
                return None
            cards = np.empty((size, slots.times.size), np.int64)
            ok = np.empty(size, bool)
            u = rng.random((size, 2 * slots.times.size))
            _assign_batch(worlds[:, q], *slots, u, cards, ok)
            live &= ok
            received[q] = (cards, slots.times)
        own = self._own_at_deal(r, observation, seat)
        if own is None:
            return None
        engine = self._engine(size, n)
        for w in np.flatnonzero(live):
            live[w] = self._set_world(engine, int(w), r, observation, seat, own, received, rng)
        ll = self._replay(engine, live, r, seat, rng)
        # The replay must leave every hand as the candidate deals it (a challenge judged on
        # another hand, or a draw out of order, shows here).
        live &= (engine.hand_counts(np.arange(size)) == worlds).all(axis=(1, 2))
        live &= ~(engine.terminated[:size] | engine.truncated[:size])
        ll = np.where(live, ll, -np.inf).reshape(-1, self.assignments)
        top = ll.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            out = np.log(np.exp(ll - top).mean(axis=1)) + top[:, 0]
        return np.where(np.isfinite(top[:, 0]), out, -np.inf)

    def _engine(self, size: int, n: int) -> Engine:
        engine = self._engines.get((size, n))
        if engine is None:
            engine = self._engines[(size, n)] = Engine(size, n, self.rules, seed=0)
        return engine

    @staticmethod
    def _own_at_deal(r: _Round, o: np.ndarray, seat: int) -> np.ndarray | None:
        """The seat's own hand at the round's first decision: today's, plus what it played, less
        what it drew since (copies per type); None if that does not add up."""
        own = np.rint(o[OBS_HAND : OBS_HAND + NUM_CARD_TYPES]).astype(np.int64)
        for _, p, c in r.plays:
            if p == seat:
                own[c] += 1
        for _, p, drawn in r.draws:
            if p == seat and not isinstance(drawn, int):
                np.subtract.at(own, drawn, 1)
        return None if (own < 0).any() else own

    def _set_world(
        self,
        engine: Engine,
        w: int,
        r: _Round,
        o: np.ndarray,
        seat: int,
        own: np.ndarray,
        received: dict[int, tuple[np.ndarray, np.ndarray]],
        rng: np.random.Generator,
    ) -> bool:
        """Put world ``w`` at the round's first decision: the hands at the deal and a draw pile
        that gives every draw of the round the card the world assigned. False if it cannot be."""
        n = len(received) + 1
        hands = []
        later: dict[int, list[int]] = {}
        for q in range(n):
            if q == seat:
                hands.append(np.repeat(np.arange(NUM_CARD_TYPES), own).tolist())
            else:
                cards, times = received[q]
                hands.append(cards[w, times < 0].tolist())
                later[q] = cards[w, times >= 0].tolist()
        sequence: list[int] = []  # every draw after the first decision, first drawn first
        for _, p, c in r.draws:
            if p == seat:
                sequence += list(c) if not isinstance(c, int) else []
            else:
                k = c if isinstance(c, int) else len(c)
                sequence += later[p][:k]
                later[p] = later[p][k:]
        placed = np.bincount(
            np.concatenate(
                [np.asarray(h, np.int64) for h in hands] + [np.asarray(sequence, np.int64), np.array([r.top])]
            ),
            minlength=NUM_CARD_TYPES,
        )
        rest_pile = self._deck - placed
        if (rest_pile < 0).any():
            return False
        below = rng.permutation(np.repeat(np.arange(NUM_CARD_TYPES), rest_pile)).tolist()
        scores = [0] * n
        for k in range(n):
            scores[(seat + k) % n] = int(round(SCORE_SCALE * o[OBS_SCORES + k]))
        try:
            engine.set_game(
                w,
                hands=hands,
                discard_pile=[r.top],
                draw_pile=below + sequence[::-1],
                current_player=r.first,
                current_color=r.color,
                direction=-1 if n > 2 and CARD_RANK[r.top] == REVERSE else 1,
                scores=scores,
            )
        except ValueError:
            return False
        return True

    def _replay(self, engine: Engine, live: np.ndarray, r: _Round, seat: int, rng: np.random.Generator) -> np.ndarray:
        """Play the round's actions again in every live world; the model's log-likelihood of the
        other seats' decisions per world (``live`` is cleared where a replay breaks)."""
        size = live.size
        ll = np.zeros(size)
        acts = np.full(engine.num_envs, -1, np.int64)
        for _, p, a in r.actions:
            m = engine.legal_mask[:size]
            asked = (engine.current_player[:size] == p) & m[:, a if a >= 0 else _IF_ASKED - a]
            if a >= 0:
                live &= asked
            else:
                a = _IF_ASKED - a
                asked &= live
            go = live & asked
            if p != seat:
                choice = go & (m.sum(1) >= 2)
                if choice.any():
                    idx = np.flatnonzero(choice)
                    ll[idx] += self._log_likelihood(engine.observation[idx], m[idx], a, rng)
            if go.any():
                acts[:size] = np.where(go, a, -1)
                engine.step(acts)
        return ll

    def _log_likelihood(self, obs: np.ndarray, mask: np.ndarray, a: int, rng: np.random.Generator) -> np.ndarray:
        """log P(action ``a``) under the model in each row: ``1 - epsilon`` for its own action,
        ``epsilon`` spread over the others."""
        pred = self.model.act(obs, mask, rng)
        return np.where(pred == a, np.log(1 - self.epsilon), np.log(self.epsilon / (mask.sum(1) - 1)))
