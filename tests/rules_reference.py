"""An independent reading of RULES.md for the tests: the legal actions of a position (R2, R4-R7,
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
    if rules.wd4_wilds_count_as_match and any(hand[t] for t in (WILD, WILD_SHUFFLE_HANDS, WILD_SWAP_HANDS, WILD_CUSTOMIZABLE)):
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
    """Whether PLAY of a held ``card`` is offered in phase ``play`` (R4, R8, R12.10)."""
    if not matches(card, top, color):
        return False
    if card == WILD_DRAW_FOUR and not bluffing(rules) and not wild_draw_four_allowed(hand, color, rules):
        return False
    return not forbidden_as_last(card, sum(hand.values()), rules)


# --- the legal set of a position ---------------------------------------------------------------


def legal_actions(
    state: dict[str, Any],
    rules: UnoRules,
    *,
    drawn: int | None = None,
    called: list[bool] | None = None,
    catchable: int | None = None,
) -> set[int]:
    """The action ids RULES.md allows the player to act (R2, R4-R7, R12).

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
        drawable = state["draw_pile_size"] > 0 or len(state["discard_pile"]) > 1  # R12.1
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

    def after_step(self, before: dict, action: int, penalised: bool, after: dict, step_events: list[dict],
                   rules: UnoRules) -> None:
        p = before["current_player"]
        if not (action == CALL_UNO and before["phase"] == "post_draw"):
            self.drawn = None  # R7: calling UNO does not end the turn, the drawn card stays offered
        if self.catchable is not None and self.catchable != p:
            self.catchable = None  # R12.15: the first decision by another player ends the chance
        if action == CALL_UNO:
            self.called[p] = True
        if action == WILD_DRAW_FOUR and not penalised:
            self.wd4_prev_color = before["current_color"]
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
        draws = [e for e in step_events if e["type"] == "draw" and e.get("player") == p]
        if after["phase"] == "post_draw" and draws:
            self.drawn = draws[-1]["cards"][-1]


def drawn_cards(step_events: list[dict], player: int, reason: str = "voluntary") -> list[int]:
    """The cards ``player`` drew for ``reason`` in these events, in order."""
    return [c for e in step_events if e["type"] == "draw" and e["player"] == player and e["reason"] == reason
            for c in e["cards"]]


class HandModel:
    """Hands rebuilt from a record's events alone: deal and draw add cards, play removes them.

    Events that move cards without naming them (see ``UNNAMED``) make the model ``stale`` until
    the caller resyncs it. The fields it reads when an engine record gives them: ``swap``
    ``player``/``target``, ``discard_wild`` ``player``/``card``, ``shuffle_hands`` ``hands`` (the
    new hand of every seat), ``play`` ``count`` (2 for a double). ``on_round_end(model, winners, scores)`` is called at each round end
    with the hands as they were, and the score events that follow it.
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

    def apply(self, events: list[dict], play_copies: dict[tuple[int, int], int], on_round_end) -> None:
        """Apply events in order; ``play_copies[(player, card)]`` is 2 for a PLAY_DOUBLE (the
        record's play event does not say how many copies were played)."""
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
                self.hands[p][c] -= ev.get("count", play_copies.get((p, c), 1))
                if self.hands[p][c] < 0:
                    raise AssertionError(f"record: player {p} plays {c} without holding it: {ev}")
            elif kind == "swap" and "player" in ev and "target" in ev:
                a, b = ev["player"], ev["target"]
                self.hands[a], self.hands[b] = self.hands[b], self.hands[a]
            elif kind == "discard_wild" and "player" in ev and "card" in ev:
                self.hands[ev["player"]][ev["card"]] -= 1
            elif kind == "shuffle_hands" and "hands" in ev:
                self.hands = [Counter(h) for h in ev["hands"]]
            elif kind in UNNAMED:
                self.stale = True
            elif kind == "round_end":
                self._round_end = {"winners": ev["winners"], "scores": []}
            elif kind == "score":
                self._round_end["scores"].append((ev["player"], ev["points"]))
            self._last = kind
        if self._round_end is not None:
            on_round_end(self, **self._round_end)
            self._round_end = None


UNNAMED = ("swap", "shuffle_hands", "discard_wild")  # hand-changing events (R5); see HandModel


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

    phases = ("play", "post_draw", "choose_color", "choose_swap_target", "respond_draw_two", "respond_draw_four",
              "round_over")
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
    }
    if rules.open_hands:
        others = [counts(state["hands"][q]) for q in rel[1:]] + [np.zeros(57, np.float32)] * (10 - n)
        out["open_hands"] = np.concatenate(others)
    return out
