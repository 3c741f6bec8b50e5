"""An independent reading of docs/rules.md for the tests: the legal actions of a position (R2, R4-R7,
R12), the public facts the mask depends on (UNO calls, who can be caught, the card just drawn),
hands rebuilt from a record's events, and round scores from the points table (R8).

Written from the rule book, not from the kernels: it reads only ``Engine.game_state()``, record
events, actions and ``UnoRules``, and spells each rule out in plain Python.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from uno_env import UnoRules

WILD, WILD_DRAW_FOUR, WILD_SHUFFLE_HANDS, WILD_SWAP_HANDS, WILD_CUSTOMIZABLE = 52, 53, 54, 55, 56
SKIP, REVERSE, DRAW_TWO = 10, 11, 12
DRAW, PASS, CHOOSE_RED, CHALLENGE, ACCEPT, CALL_UNO, CATCH_UNO = 57, 58, 59, 63, 64, 65, 66
SWAP_WITH_FIRST, PLAY_DOUBLE_FIRST = 67, 76
RESPOND_PHASES = ("play", "respond_draw_two", "respond_draw_four")  # where CATCH_UNO may appear (R12.15)


# --- cards (R1) ---------------------------------------------------------------------------------


def color_of(card: int) -> int | None:
    return card // 13 if card < 52 else None


def rank_of(card: int) -> int | None:
    return card % 13 if card < 52 else None


def is_number(card: int) -> bool:
    return card < 52 and card % 13 < 10


def double_action(card: int) -> int:
    """R2: PLAY_DOUBLE of number card ``color*13+rank`` is ``76 + color*10 + rank``."""
    return PLAY_DOUBLE_FIRST + (card // 13) * 10 + card % 13


def double_card(action: int) -> int:
    k = action - PLAY_DOUBLE_FIRST
    return (k // 10) * 13 + k % 10


def played_card(action: int) -> tuple[int, int] | None:
    """(card, copies) of a PLAY or PLAY_DOUBLE action id, else None."""
    if 0 <= action < 57:
        return action, 1
    if action >= PLAY_DOUBLE_FIRST:
        return double_card(action), 2
    return None


# --- R4 legality of a card ---------------------------------------------------------------------


def matches(card: int, top: int, color: int | None) -> bool:
    """R4: same colour as the current colour, same number or symbol as the top card; the
    wilds (and Wild Draw Four, checked apart) always match."""
    if card >= 52:
        return True
    if color is not None and card // 13 == color:
        return True
    return top < 52 and card % 13 == top % 13


def wild_draw_four_allowed(hand: Counter, color: int | None, rules: UnoRules) -> bool:
    """R4, R12.9: no other card of the current colour held; with ``wd4_wilds_count_as_match``
    a held Wild, Shuffle Hands, Swap Hands or Customizable counts as one (another Wild Draw Four
    does not)."""
    if color is not None and any(hand[color * 13 + r] for r in range(13)):
        return False
    if rules.wd4_wilds_count_as_match and any(
        hand[t] for t in (WILD, WILD_SHUFFLE_HANDS, WILD_SWAP_HANDS, WILD_CUSTOMIZABLE)
    ):
        return False
    return True


def bluffing(rules: UnoRules) -> bool:
    """R4: an illegal Wild Draw Four stays offered under ``wd4_bluffing``, which needs ``challenge``."""
    return rules.wd4_bluffing and rules.challenge


def forbidden_as_last(card: int, hand_size: int, rules: UnoRules) -> bool:
    """R8, R12.10: ``forbid_last_action_card`` forbids a last Wild Draw Four, Reverse or plain Wild."""
    return (
        rules.forbid_last_action_card
        and hand_size == 1
        and (card in (WILD, WILD_DRAW_FOUR) or (card < 52 and card % 13 == REVERSE))
    )


def playable(card: int, hand: Counter, top: int, color: int | None, rules: UnoRules) -> bool:
    """Whether PLAY of a held ``card`` is offered in phase ``play`` (R4, R8, R12.10); under
    ``wd4_only_when_stuck`` a Wild Draw Four only when no other held card is."""
    if not _playable_alone(card, hand, top, color, rules):
        return False
    if card == WILD_DRAW_FOUR and rules.wd4_only_when_stuck:
        return not any(hand[t] and _playable_alone(t, hand, top, color, rules) for t in hand if t != WILD_DRAW_FOUR)
    return True


def _playable_alone(card: int, hand: Counter, top: int, color: int | None, rules: UnoRules) -> bool:
    if not matches(card, top, color):
        return False
    if card == WILD_DRAW_FOUR and not bluffing(rules) and not wild_draw_four_allowed(hand, color, rules):
        return False
    return not forbidden_as_last(card, sum(hand.values()), rules)


def can_draw(state: dict[str, Any], rules: UnoRules) -> bool:
    """R12.1: a card can be drawn from the draw pile, or from the discard pile once reshuffled:
    the cards under its top (R4), or all of them under ``reshuffle='every_played_card'``."""
    below = 0 if rules.reshuffle == "every_played_card" else 1
    return state["draw_pile_size"] > 0 or len(state["discard_pile"]) > below


def plays_itself(card: int, color: int | None, rules: UnoRules) -> bool:
    """R4 ``drawn_card='play_color_or_wild'``: a drawn wild, or a card of the current colour,
    goes straight onto the discard pile."""
    return rules.drawn_card == "play_color_or_wild" and (card >= 52 or card // 13 == color)


# --- the legal set of a position ---------------------------------------------------------------


def legal_actions(
    state: dict[str, Any],
    rules: UnoRules,
    *,
    drawn: int | None = None,
    called: list[bool] | None = None,
    catchable: int | None = None,
) -> set[int]:
    """The action ids docs/rules.md allows the player to act (R2, R4-R7, R12).

    ``drawn`` is the card just drawn (phase ``post_draw``); ``called`` who has called UNO since
    their hand last grew; ``catchable`` the seat that went down to one card by playing without
    calling and can still be caught (R7, R12.15).
    """
    phase = state["phase"]
    if phase == "round_over":
        return set()
    n = state["num_players"]
    p = state["current_player"]
    hand = Counter(state["hands"][p])
    size = sum(hand.values())
    top, color = state["top_card"], state["current_color"]
    explicit = rules.uno_call == "explicit"
    called = called if called is not None else state["uno_called"]
    legal: set[int] = set()
    if phase == "play":
        plays = {t for t in hand if hand[t] and playable(t, hand, top, color, rules)}
        doubles = {double_action(t) for t in plays if rules.allow_doubles and is_number(t) and hand[t] >= 2}
        legal |= plays | doubles
        drawable = can_draw(state, rules)
        if drawable and (rules.allow_voluntary_draw or not plays):
            legal.add(DRAW)
        if not plays and not drawable:
            legal.add(PASS)
        # R7, R12.16: with 2 cards and a playable card, or 3 cards and a playable double.
        if explicit and not called[p] and ((size == 2 and plays) or (size == 3 and doubles)):
            legal.add(CALL_UNO)
    elif phase == "post_draw":
        # R4: only the card just drawn, or keep it (R12.5: never a double).
        legal |= {drawn, PASS}
        if explicit and not called[p] and size == 2:
            legal.add(CALL_UNO)
    elif phase == "choose_color":
        legal |= set(range(CHOOSE_RED, CHOOSE_RED + 4))
    elif phase == "choose_swap_target":
        legal |= {SWAP_WITH_FIRST + k - 1 for k in range(1, n) if not state["eliminated"][(p + k) % n]}
    elif phase == "respond_draw_two":
        # R5 stacking: any Draw Two answers; DRAW takes the whole sum.
        legal |= {c * 13 + DRAW_TWO for c in range(4) if hand[c * 13 + DRAW_TWO]}
        legal.add(DRAW)
    elif phase == "respond_draw_four":
        # R6, R12.6: CHALLENGE (with `challenge`) or ACCEPT; stacking also offers a Wild Draw Four.
        legal.add(ACCEPT)
        if rules.challenge:
            legal.add(CHALLENGE)
        if (
            rules.stack_draw_four
            and hand[WILD_DRAW_FOUR]
            and (bluffing(rules) or wild_draw_four_allowed(hand, color, rules))
            and not forbidden_as_last(WILD_DRAW_FOUR, size, rules)
        ):
            legal.add(WILD_DRAW_FOUR)
    else:
        raise AssertionError(f"unknown phase {phase!r}")
    if explicit and phase in RESPOND_PHASES and catchable is not None and catchable != p:
        if len(state["hands"][catchable]) == 1:
            legal.add(CATCH_UNO)
    return legal


def next_seat(state: dict[str, Any], seat: int) -> int:
    """The seat after ``seat`` in the current direction, skipping eliminated seats (R3, R8)."""
    n, d = state["num_players"], state["direction"]
    x = (seat + d) % n
    while state["eliminated"][x]:
        x = (x + d) % n
    return x


def partners(seats: set[int], n: int, rules: UnoRules) -> set[int]:
    """R8 teams: partners sit opposite (seat i and i + n/2) and share a win."""
    if not rules.teams:
        return set(seats)
    return set(seats) | {(p + n // 2) % n for p in seats}


def hand_points(hand: Counter, rules: UnoRules) -> int:
    """R8: the points of a hand under the rules' points table."""
    return sum(rules.points[t] * k for t, k in hand.items())


class PublicFacts:
    """What the mask depends on beyond the current position, followed from actions and hand
    sizes as the rules describe them: who has called UNO (R7, R12.16), who can be caught
    (R12.15), and the card just drawn (R4 ``post_draw``)."""

    def __init__(self, num_players: int) -> None:
        self.n = num_players
        self.new_round()

    def new_round(self) -> None:
        self.called = [False] * self.n
        self.catchable: int | None = None
        self.drawn: int | None = None
        self.wd4_prev_color: int | None = None  # colour in play before the pending Wild Draw Four (R6)
        self.wd4_player: int | None = None
        self.wd4_guilty = False
        # R11 public history: the colour in play when a seat last drew and kept the card, and
        # the colour it last named with a wild.
        self.drew_on: list[int | None] = [None] * self.n
        self.named: list[int | None] = [None] * self.n

    def _history(self, before: dict, action: int, step_events: list[dict], rules: UnoRules) -> None:
        p = before["current_player"]
        if played_card(action) is not None:
            self.drew_on[p] = None
        elif action == PASS:
            self.drew_on[p] = before["current_color"]
        elif action == DRAW and before["phase"] == "play":
            # R4: the turn ends with the card kept when the last card drawn cannot be played
            # (or nothing could be drawn); a playable one opens post_draw instead, or under
            # drawn_card='play_color_or_wild' a wild or a card of the colour plays itself.
            drawn = drawn_cards(step_events, p)
            hand = Counter(before["hands"][p]) + Counter(drawn)
            color = before["current_color"]
            if drawn and plays_itself(drawn[-1], color, rules):
                self.drew_on[p] = None
            elif (
                not drawn
                or rules.drawn_card != "choose"
                or not playable(drawn[-1], hand, before["top_card"], color, rules)
            ):
                self.drew_on[p] = color
        elif before["phase"] == "choose_color" and CHOOSE_RED <= action < CHOOSE_RED + 4:
            self.named[p] = action - CHOOSE_RED
        for ev in step_events:
            if ev["type"] == "shuffle_hands":
                self.drew_on = [None] * self.n
                self.named = [None] * self.n
            elif ev["type"] == "swap":
                q = ev["with"]
                for seq in (self.drew_on, self.named):
                    seq[p], seq[q] = seq[q], seq[p]

    def after_step(
        self, before: dict, action: int, penalised: bool, after: dict, step_events: list[dict], rules: UnoRules
    ) -> None:
        p = before["current_player"]
        if not (action == CALL_UNO and before["phase"] == "post_draw"):
            self.drawn = None  # R7: calling UNO does not end the turn, the drawn card stays offered
        if self.catchable is not None and self.catchable != p:
            self.catchable = None  # R12.15: the first decision by another player ends the chance
        if action == CALL_UNO:
            self.called[p] = True
        if action == WILD_DRAW_FOUR and not penalised:
            # R6: the play is judged on the hand held when the card was played.
            self.wd4_prev_color = before["current_color"]
            self.wd4_player = p
            self.wd4_guilty = not wild_draw_four_allowed(Counter(before["hands"][p]), before["current_color"], rules)
        play = played_card(action)
        if (
            play is not None
            and not penalised
            and rules.uno_call == "explicit"
            and len(before["hands"][p]) - play[1] == 1
            and not self.called[p]
        ):
            self.catchable = p  # R7: went down to one card by playing, without calling
        for q in range(self.n):
            if len(after["hands"][q]) > len(before["hands"][q]):
                self.called[q] = False  # R7: a call lasts until the hand grows
                if self.catchable == q:
                    self.catchable = None
        if not penalised:
            self._history(before, action, step_events, rules)
        draws = [e for e in step_events if e["type"] == "draw" and e.get("player") == p]
        if after["phase"] == "post_draw" and draws:
            self.drawn = draws[-1]["cards"][-1]


def drawn_cards(step_events: list[dict], player: int, reason: str = "voluntary") -> list[int]:
    """The cards ``player`` drew for ``reason`` in these events, in order."""
    return [
        c
        for e in step_events
        if e["type"] == "draw" and e["player"] == player and e["reason"] == reason
        for c in e["cards"]
    ]


class HandModel:
    """Hands rebuilt from a record's events alone: deal and draw add cards, play removes them.

    Every hand-changing event names its cards: ``swap`` ``player``/``with``, ``discard_wild``
    ``player``/``card``, ``shuffle_hands`` (all hands emptied) then one ``redeal`` per seat,
    ``play`` ``count`` (2 for a double). ``stale`` stays False unless the caller marks it.
    ``on_round_end(model, winners, scores)`` is called at each round end with the hands as they
    were, and the score events that follow it.
    """

    def __init__(self, num_players: int) -> None:
        self.n = num_players
        self.hands = [Counter() for _ in range(num_players)]
        self.stale = False
        self._last = None
        self._round_end: dict | None = None

    def resync(self, hands: list[list[int]]) -> None:
        self.hands = [Counter(h) for h in hands]
        self.stale = False

    def sorted_hands(self) -> list[list[int]]:
        return [sorted(h.elements()) for h in self.hands]

    def apply(self, events: list[dict], on_round_end) -> None:
        """Apply events in order."""
        for ev in events:
            kind = ev["type"]
            if kind != "score" and self._round_end is not None:
                on_round_end(self, **self._round_end)
                self._round_end = None
            if kind == "deal":
                if self._last != "deal":
                    self.hands = [Counter() for _ in range(self.n)]  # a new round is dealt
                    self.stale = False
                self.hands[ev["player"]].update(ev["cards"])
            elif kind == "draw":
                self.hands[ev["player"]].update(ev["cards"])
            elif kind == "play":
                p, c = ev["player"], ev["card"]
                self.hands[p][c] -= ev["count"]
                if self.hands[p][c] < 0:
                    raise AssertionError(f"record: player {p} plays {c} without holding it: {ev}")
            elif kind == "swap":
                a, b = ev["player"], ev["with"]
                self.hands[a], self.hands[b] = self.hands[b], self.hands[a]
            elif kind == "discard_wild":
                self.hands[ev["player"]][ev["card"]] -= 1
            elif kind == "shuffle_hands":
                self.hands = [Counter() for _ in range(self.n)]  # the redeal events that follow refill them
            elif kind == "redeal":
                self.hands[ev["player"]].update(ev["cards"])
            elif kind == "round_end":
                self._round_end = {"winners": ev["winners"], "scores": []}
            elif kind == "score":
                self._round_end["scores"].append((ev["player"], ev["points"]))
            self._last = kind
        if self._round_end is not None:
            on_round_end(self, **self._round_end)
            self._round_end = None


def expected_observation(state: dict[str, Any], seat: int, facts: PublicFacts, rules: UnoRules) -> dict[str, Any]:
    """The R11 observation of ``seat`` field by field (names of ``layout.OBS_FIELDS``); relative
    seat k is the seat k places clockwise from the observer."""
    n = state["num_players"]
    rel = [(seat + k) % n for k in range(n)]
    acting = state["phase"] != "round_over" and state["current_player"] == seat

    def counts(cards: list[int]) -> np.ndarray:
        return np.bincount(np.asarray(cards, np.int64), minlength=57).astype(np.float32)

    def one_hot(i: int | None, size: int) -> np.ndarray:
        v = np.zeros(size, np.float32)
        if i is not None:
            v[i] = 1
        return v

    def per_seat(values) -> np.ndarray:
        v = np.zeros(10, np.float32)
        v[:n] = values
        return v

    phases = (
        "play",
        "post_draw",
        "choose_color",
        "choose_swap_target",
        "respond_draw_two",
        "respond_draw_four",
        "round_over",
    )
    catch = facts.catchable if rules.uno_call == "explicit" else None
    out = {
        "hand": counts(state["hands"][seat]),
        "top_card": one_hot(state["top_card"], 57),
        "current_color": one_hot(state["current_color"], 4),
        "phase": one_hot(phases.index(state["phase"]), 7),
        "direction": np.float32([state["direction"]]),
        "pending_draw": np.float32([state["pending_draw"]]),
        "drawn_card": one_hot(facts.drawn if acting and state["phase"] == "post_draw" else None, 57),
        "hand_sizes": per_seat([len(state["hands"][q]) for q in rel]),
        "seat_present": per_seat([1] * n),
        "scores": per_seat([state["scores"][q] / 100 for q in rel]),
        "uno_called": per_seat([state["uno_called"][q] for q in rel]),
        "discard_counts": counts(state["discard_pile"]),
        "draw_pile_size": np.float32([state["draw_pile_size"]]),
        "wd4_prev_color": one_hot(facts.wd4_prev_color if state["phase"] == "respond_draw_four" else None, 4),
        "is_current": np.float32([acting]),
        "eliminated": per_seat([state["eliminated"][q] for q in rel]),
        "catchable": per_seat([q == catch and len(state["hands"][q]) == 1 for q in rel]),
        "partner": one_hot(n // 2 if rules.teams else None, 10),
        "round": np.float32([state["round"]]),
        "drew_on_color": np.concatenate(
            [one_hot(facts.drew_on[q], 4) for q in rel] + [np.zeros(4 * (10 - n), np.float32)]
        ),
        "named_color": np.concatenate([one_hot(facts.named[q], 4) for q in rel] + [np.zeros(4 * (10 - n), np.float32)]),
    }
    if rules.open_hands:
        others = [counts(state["hands"][q]) for q in rel[1:]] + [np.zeros(57, np.float32)] * (10 - n)
        out["open_hands"] = np.concatenate(others)
    return out


# --- what an action does (R5, R6, R7, R9) ---------------------------------------------------


def cards_drawn(step_events: list[dict]) -> Counter:
    """How many cards each seat drew in these events (any reason)."""
    out: Counter = Counter()
    for e in step_events:
        if e["type"] == "draw":
            out[e["player"]] += len(e["cards"])
    return out


def first_card_returned(card: int, rules: UnoRules) -> bool:
    """R9: whether a turned first card goes back into the pile."""
    if card == WILD_DRAW_FOUR:
        return True
    if rules.first_card_rule == "redraw_special" and not is_number(card):
        return True
    return rules.wild_first_card == "redraw" and card >= 52


def clockwise_next(state: dict[str, Any], seat: int) -> int:
    n = state["num_players"]
    x = (seat + 1) % n
    while state["eliminated"][x]:
        x = (x + 1) % n
    return x


def expected_deal(state: dict[str, Any], round_events: list[dict], rules: UnoRules) -> dict[str, Any]:
    """R3, R9: who acts first, in which phase and direction, after a deal (the events of the
    new round so far); also the cards each seat was dealt and drew."""
    n = state["num_players"]
    dealer = state["dealer"]
    first = clockwise_next(state, dealer)
    flips = [e["card"] for e in round_events if e["type"] == "flip"]
    returned = [e["card"] for e in round_events if e["type"] == "return_first_card"]
    assert len(flips) == 1 and all(first_card_returned(c, rules) for c in returned), (flips, returned)
    card = flips[0]
    assert not first_card_returned(card, rules)
    dealt = Counter()
    for e in round_events:
        if e["type"] == "deal":
            dealt[e["player"]] += len(e["cards"])
    if rules.first_dealer == "last_seat" and state["round"] == 0:
        assert dealer == n - 1, f"R3 first_dealer='last_seat': dealer {dealer}"
    want = {
        "dealt": {p: rules.hand_size for p in range(n) if not state["eliminated"][p]},
        "draws": {},
        "top_card": card,
        "direction": 1,
        "phase": "play",
        "current_player": first,
    }
    # next_seat reads the direction from the state: use the deal's own, +1 (or -1 after a Reverse).
    cw = {**state, "direction": 1}
    if card >= 52 and rules.wild_first_card == "random_color":
        colors = [e["color"] for e in round_events if e["type"] == "color" and e.get("random")]
        assert len(colors) == 1 and 0 <= colors[0] < 4, colors
        want["current_color"] = colors[0]
    elif card >= 52:
        want["phase"] = "choose_color"
    elif card % 13 == SKIP:
        want["current_player"] = next_seat(cw, first)
    elif card % 13 == DRAW_TWO:
        want["draws"] = {first: 2}
        if rules.first_draw_two_skips:
            want["current_player"] = next_seat(cw, first)
    elif card % 13 == REVERSE:
        want["direction"], want["current_player"] = -1, dealer
    return {"dealt_counts": dict(dealt), **want}


class Transition:
    """What a legal, non-final action must lead to under docs/rules.md (only the facts the rules fix):
    ``current_player``, ``phase``, ``direction``, ``pending_draw``, ``current_color``, cards drawn per
    seat (``draws``, at most when the piles may run out), and hands (``hands``, for swaps)."""

    def __init__(self, before: dict[str, Any], action: int, rules: UnoRules, facts: PublicFacts) -> None:
        self.before, self.action, self.rules, self.facts = before, action, rules, facts
        self.want: dict[str, Any] = {}
        self.draws: dict[int, int] = {}
        self.check_sizes: dict[int, int] | None = None
        self.hands: dict[int, list[int]] = {}
        self.skip = False  # an action checked elsewhere (DRAW in phase play: R4 post_draw)
        self.until_color: tuple[int, int] | None = None
        self.verdict: str | None = None
        self._derive()

    def _next(self, seat: int, direction: int | None = None) -> int:
        s = self.before if direction is None else {**self.before, "direction": direction}
        return next_seat(s, seat)

    def _hit_next(self, p: int, sum_: int, stacking_card: int) -> None:
        """R5, R12.7: the next player answers (stacking) or draws the sum and loses the turn."""
        nxt = self._next(p)
        hand = Counter(self.before["hands"][nxt])
        answer = self.rules.always_respond or any(hand[c * 13 + DRAW_TWO] for c in range(4))
        if stacking_card == DRAW_TWO and self.rules.stack_draw_two and answer:
            self.want.update(current_player=nxt, phase="respond_draw_two", pending_draw=sum_)
        else:
            self.draws[nxt] = sum_
            self.want.update(current_player=self._next(nxt), phase="play", pending_draw=0)

    def _derive(self) -> None:
        b, a, r = self.before, self.action, self.rules
        p, phase = b["current_player"], b["phase"]
        play = played_card(a)
        if a == CALL_UNO:
            self.want.update(current_player=p, phase=phase)
        elif a == CATCH_UNO:
            self.want.update(current_player=p, phase=phase)
            self.draws[self.facts.catchable] = r.uno_penalty
        elif play is not None:
            card, _ = play
            if card >= 52:
                self.want.update(current_player=p, phase="choose_color")
            elif card % 13 < 10:
                self.want.update(current_player=self._next(p), phase="play")
            elif card % 13 == SKIP:
                self.want.update(current_player=self._next(self._next(p)), phase="play")
            elif card % 13 == REVERSE:
                d = -b["direction"]
                active = sum(not x for x in b["eliminated"])
                skips = active == 2 and r.two_player_reverse_skips  # R5, R12.3
                self.want.update(direction=d, phase="play", current_player=p if skips else self._next(p, d))
            else:
                self._hit_next(p, b["pending_draw"] + 2, DRAW_TWO)
        elif a == PASS:
            self.want.update(current_player=self._next(p), phase="play")
        elif a == DRAW and phase == "respond_draw_two":
            self.draws[p] = b["pending_draw"]
            self.want.update(current_player=self._next(p), phase="play", pending_draw=0)
        elif a == DRAW:
            self.skip = True  # checked apart (R4 post_draw)
        elif CHOOSE_RED <= a < CHOOSE_RED + 4:
            self._choose_color(p, a - CHOOSE_RED)
        elif SWAP_WITH_FIRST <= a < SWAP_WITH_FIRST + 9:
            q = (p + a - SWAP_WITH_FIRST + 1) % b["num_players"]
            self.hands = {p: b["hands"][q], q: b["hands"][p]}
            first_card = self._first_card_wild() and b["turn"] <= 1  # R9: the first player then plays
            self.want.update(phase="play", current_player=p if first_card else self._next(p))
        elif a == ACCEPT:
            self.draws[p] = b["pending_draw"]
            self.want.update(current_player=self._next(p), phase="play", pending_draw=0)
        elif a == CHALLENGE:
            culprit = self.facts.wd4_player
            if self.facts.wd4_guilty:  # R6, R12.8
                self.draws[culprit] = r.challenge_guilty_draw
                self.want.update(current_player=p, phase="play", pending_draw=0)
            else:
                self.draws[p] = max(b["pending_draw"] + r.challenge_innocent_draw - 4, 0)
                self.want.update(current_player=self._next(p), phase="play", pending_draw=0)
            self.verdict = "guilty" if self.facts.wd4_guilty else "innocent"
        if play is not None and play[0] < 52:
            self.want["current_color"] = play[0] // 13
        self.want.setdefault("direction", b["direction"])
        self.want.setdefault("current_color", b["current_color"])

    def _first_card_wild(self) -> bool:
        return len(self.before["discard_pile"]) == 1 and self.before["top_card"] >= 52

    def _choose_color(self, p: int, color: int) -> None:
        b, r = self.before, self.rules
        wild = b["top_card"]
        self.want["current_color"] = color
        if wild == WILD_SWAP_HANDS:
            self.want.update(current_player=p, phase="choose_swap_target")
        elif self._first_card_wild() and b["turn"] == 0:
            self.want.update(current_player=p, phase="play")  # R9, R12.11: then the first player plays
        elif wild == WILD_DRAW_FOUR:
            total = b["pending_draw"] + 4
            nxt = self._next(p)
            if r.challenge or (r.stack_draw_four and (r.always_respond or WILD_DRAW_FOUR in b["hands"][nxt])):
                self.want.update(current_player=nxt, phase="respond_draw_four", pending_draw=total)
            else:
                self.draws[nxt] = total
                self.want.update(current_player=self._next(nxt), phase="play", pending_draw=0)
        elif wild == WILD_SHUFFLE_HANDS:
            # R5: every card dealt one at a time from seat + 1 clockwise, whatever the direction.
            seats, x = [], clockwise_next(b, p)
            while x not in seats:
                seats.append(x)
                x = clockwise_next(b, x)
            total = sum(len(h) for h in b["hands"])
            self.check_sizes = {s: total // len(seats) + (i < total % len(seats)) for i, s in enumerate(seats)}
            self.want.update(current_player=self._next(p), phase="play")
        elif wild == WILD_CUSTOMIZABLE and r.custom_wild_rule != "blank":
            self._custom(p, color)
        else:
            self.want.update(current_player=self._next(p), phase="play")

    def _custom(self, p: int, color: int) -> None:
        """R5 Wild Customizable effects (R12.12)."""
        b, rule = self.before, self.rules.custom_wild_rule
        nxt = self._next(p)
        if rule == "play_again":
            self.want.update(current_player=p, phase="play")
        elif rule == "others_draw_two":
            self.draws = {q: 2 for q in range(b["num_players"]) if q != p and not b["eliminated"][q]}
            self.want.update(current_player=nxt, phase="play")
        elif rule == "opponents_discard_wilds":
            self.hands = {q: [c for c in b["hands"][q] if c < 52] for q in range(b["num_players"]) if q != p}
            self.want.update(current_player=nxt, phase="play", top_card=WILD_CUSTOMIZABLE)
        elif rule == "next_draws_until_color":
            self.until_color = (nxt, color)
            self.want.update(current_player=nxt, phase="play")
        elif rule == "next_draws_three_if_stuck":
            hand = Counter(b["hands"][nxt])
            stuck = not any(playable(t, hand, WILD_CUSTOMIZABLE, color, self.rules) for t in hand if hand[t])
            if stuck:
                self.draws[nxt] = 3
            self.want.update(current_player=self._next(nxt) if stuck else nxt, phase="play")
