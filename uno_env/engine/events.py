"""The event table: every kind of event the engine records, one row each (docs/engine.md, The event table).

Everything that shows, redacts or folds events derives from it; adding a kind is one row here plus
the kernel code that emits it. Visibility (R11): ``EVERYONE`` or the ``ACTOR`` alone (everyone
with ``open_hands``); ``None`` as the viewer is the omniscient view."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cards import COLOR_NAMES, card_name

EVERYONE = "everyone"
ACTOR = "actor"

# Value types of a field: how a raw column becomes a JSON value, and how the history encodes it.
CARD = "card"  # a card type id
CARDS = "cards"  # card type ids; consecutive rows of the same event merge into one list
SEAT = "seat"  # an absolute seat
SEATS = "seats"  # a bit mask of seats, as a list
NUMBER = "number"  # a count or points
REASON = "reason"  # why cards were drawn (DRAW_REASONS)
COLOR = "color"  # a colour id 0-3
VERDICT = "verdict"  # a challenge's outcome: 1 guilty, 0 innocent
FLAG = "flag"  # True when the column is 1, absent otherwise
ACTION = "action"  # an action id (the illegal attempt of an R10 penalty)

# Why cards were drawn (the extra column of a draw).
DRAW_VOLUNTARY = 0
DRAW_DRAW_TWO = 1
DRAW_DRAW_FOUR = 2
DRAW_CHALLENGE_GUILTY = 3
DRAW_CHALLENGE_INNOCENT = 4
DRAW_PENALTY = 5
DRAW_FIRST_CARD = 6
DRAW_UNO_PENALTY = 7
DRAW_CUSTOM_WILD = 8
DRAW_UNTIL_COLOR = 9
DRAW_REASONS = (
    "voluntary",
    "draw_two",
    "draw_four",
    "challenge_guilty",
    "challenge_innocent",
    "penalty",
    "first_card",
    "uno_penalty",
    "custom_wild",
    "until_color",
)


@dataclass(frozen=True)
class Field:
    """One named field of an event: its JSON key, the raw column it comes from, its type and who sees it."""

    name: str
    column: str  # "player", "card" or "extra"
    type: str
    visible: str = EVERYONE


@dataclass(frozen=True)
class EventKind:
    """One row of the table (docs/engine.md, The event table)."""

    name: str
    fields: tuple[Field, ...]
    text: str
    hands: str = ""  # "gain", "lose", "clear" (every hand) or "swap" (with the seat in "with")
    history: bool = True  # enters a seat's history (deals are in the seat's hand instead)
    variants: tuple[tuple[str, str], ...] = ()  # (flag field, text) used when the flag is set
    ends_round: bool = False  # the round's outcome is told from here on (an episode's last events)
    # A seat can re-enact the round across it from its own view: it moves no card out of sight of
    # the decisions (a reshuffle, a swap, a redeal, a penalty, an elimination do).
    replayable: bool = True


def _f(name: str, column: str, type_: str, visible: str = EVERYONE) -> Field:
    return Field(name, column, type_, visible)


_PLAYER = _f("player", "player", SEAT)

# Texts are str.format templates over the event's fields, plus: {who} (the actor), {s} / {es}
# ("" for "you", else the verb's -s / -es), {is} ("are" / "is"), {card}, {cards} and {color} as
# names ({cards}: "N cards" when the viewer may not see them), {n} and {plural} (cards in a list), {two} ("two " for a double play), {reason} in words,
# seats as names ({with}, {caught}), {challenged_s} (a seat's possessive), {winners}, {cards_shown}
# (": " and the card names, when the viewer may see them).
EVENT_KINDS: tuple[EventKind, ...] = (
    EventKind("deal", (_PLAYER, _f("cards", "card", CARDS, ACTOR)), "{who} {is} dealt {cards}", "gain", False),
    EventKind("flip", (_f("card", "card", CARD),), "first card turned: {card}"),
    EventKind("return_first_card", (_f("card", "card", CARD),), "first card {card} goes back into the pile"),
    EventKind(
        "play", (_PLAYER, _f("card", "card", CARD), _f("count", "extra", NUMBER)), "{who} play{s} {two}{card}", "lose"
    ),
    EventKind(
        "draw",
        (_PLAYER, _f("cards", "card", CARDS, ACTOR), _f("reason", "extra", REASON)),
        "{who} draw{s} {n} card{plural} ({reason}){cards_shown}",
        "gain",
    ),
    EventKind(
        "color",
        (_PLAYER, _f("color", "extra", COLOR), _f("random", "card", FLAG)),
        "{who} choose{s} {color}",
        variants=(("random", "the colour is drawn at random: {color}"),),
    ),
    EventKind(
        "challenge",
        (_PLAYER, _f("challenged", "card", SEAT), _f("verdict", "extra", VERDICT)),
        "{who} challenge{s} {challenged_s} wild draw four: {verdict}",
    ),
    EventKind("accept", (_PLAYER, _f("count", "extra", NUMBER)), "{who} accept{s} the wild draw four"),
    EventKind(
        "penalty",
        (_PLAYER, _f("action", "card", ACTION)),
        "{who} tried an illegal action ({action}) and {is} penalised",
        replayable=False,
    ),
    EventKind("pass", (_PLAYER,), "{who} pass{es}"),
    EventKind(
        "reshuffle",
        (_f("cards", "extra", NUMBER), _f("every_played_card", "card", FLAG)),
        "the discard pile ({cards} cards under the top one) is shuffled into a new draw pile",
        variants=(
            ("every_played_card", "the {cards} played cards, the top one included, are shuffled into the draw pile"),
        ),
        replayable=False,
    ),
    EventKind("round_end", (_f("winners", "extra", SEATS),), "round over: winner {winners}", ends_round=True),
    EventKind("score", (_PLAYER, _f("points", "extra", NUMBER)), "{who} score{s} {points} points"),
    EventKind("truncate", (_f("turn", "extra", NUMBER),), "round truncated after {turn} actions", ends_round=True),
    EventKind(
        "shuffle_hands",
        (_PLAYER, _f("cards", "extra", NUMBER)),
        "{who} shuffle{s} all {cards} held cards and deal{s} them anew",
        "clear",
        replayable=False,
    ),
    EventKind("swap", (_PLAYER, _f("with", "card", SEAT)), "{who} swap{s} hands with {with}", "swap", replayable=False),
    EventKind("call_uno", (_PLAYER,), "{who} call{s} UNO"),
    EventKind("catch_uno", (_PLAYER, _f("caught", "card", SEAT)), "{who} catch{es} {caught} not calling UNO"),
    EventKind(
        "discard_wild",
        (_PLAYER, _f("card", "card", CARD)),
        "{who} put{s} {card} under the top card",
        "lose",
        replayable=False,
    ),
    EventKind(
        "eliminated",
        (_PLAYER, _f("score", "extra", NUMBER)),
        "{who} {is} eliminated with {score} points",
        replayable=False,
    ),
    EventKind("match_end", (_f("winners", "extra", SEATS),), "match over: winner {winners}"),
    EventKind(
        "redeal",
        (_PLAYER, _f("cards", "card", CARDS, ACTOR)),
        "{who} {is} dealt {cards}",
        "gain",
        False,
        replayable=False,
    ),
)
EVENT_NAMES = tuple(k.name for k in EVENT_KINDS)
KIND_OF = {k.name: k for k in EVENT_KINDS}
ENDING_EVENTS = frozenset(k.name for k in EVENT_KINDS if k.ends_round)
UNREPLAYABLE_EVENTS = frozenset(k.name for k in EVENT_KINDS if not k.replayable)
NUM_EVENT_KINDS = len(EVENT_KINDS)

# The kernels' names for the ids (module-level ints are numba compile-time constants).
EV_DEAL = EVENT_NAMES.index("deal")
EV_FLIP = EVENT_NAMES.index("flip")
EV_RETURN_FIRST = EVENT_NAMES.index("return_first_card")
EV_PLAY = EVENT_NAMES.index("play")
EV_DRAW = EVENT_NAMES.index("draw")
EV_COLOR = EVENT_NAMES.index("color")
EV_CHALLENGE = EVENT_NAMES.index("challenge")
EV_ACCEPT = EVENT_NAMES.index("accept")
EV_PENALTY = EVENT_NAMES.index("penalty")
EV_PASS = EVENT_NAMES.index("pass")
EV_RESHUFFLE = EVENT_NAMES.index("reshuffle")
EV_ROUND_END = EVENT_NAMES.index("round_end")
EV_SCORE = EVENT_NAMES.index("score")
EV_TRUNCATE = EVENT_NAMES.index("truncate")
EV_SHUFFLE_HANDS = EVENT_NAMES.index("shuffle_hands")
EV_SWAP = EVENT_NAMES.index("swap")
EV_CALL_UNO = EVENT_NAMES.index("call_uno")
EV_CATCH_UNO = EVENT_NAMES.index("catch_uno")
EV_DISCARD_WILD = EVENT_NAMES.index("discard_wild")
EV_ELIMINATED = EVENT_NAMES.index("eliminated")
EV_MATCH_END = EVENT_NAMES.index("match_end")
EV_REDEAL = EVENT_NAMES.index("redeal")


def _column_types(column: str) -> np.ndarray:
    out = np.zeros(NUM_EVENT_KINDS, np.int64)
    for k, kind in enumerate(EVENT_KINDS):
        for f in kind.fields:
            if f.column == column:
                out[k] = _TYPE_CODES[f.type] + (_ACTOR_ONLY if f.visible == ACTOR else 0)
    return out


# The table as arrays for the compiled history encoder: per kind, the type of its card and extra
# columns (0: none), plus _ACTOR_ONLY when only the actor may see it; and which kinds it keeps.
_TYPE_CODES = {CARD: 1, CARDS: 1, SEAT: 2, SEATS: 3, NUMBER: 4, REASON: 5, COLOR: 6, VERDICT: 7, FLAG: 8, ACTION: 9}
_ACTOR_ONLY = 16
CARD_COLUMN = _column_types("card")
EXTRA_COLUMN = _column_types("extra")
IN_HISTORY = np.array([k.history for k in EVENT_KINDS], np.bool_)


# --- raw rows to events --------------------------------------------------------------------


def event_dict(kind: int, player: int, card: int, extra: int) -> dict[str, Any]:
    """One raw row as an event dict (every field, as the record holds it)."""
    if not 0 <= kind < NUM_EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind}")
    row = {"player": player, "card": card, "extra": extra}
    spec = EVENT_KINDS[kind]
    out: dict[str, Any] = {"type": spec.name}
    for f in spec.fields:
        v = row[f.column]
        if f.type == CARDS:
            out[f.name] = [v]
        elif f.type == REASON:
            out[f.name] = DRAW_REASONS[v]
        elif f.type == VERDICT:
            out[f.name] = "guilty" if v else "innocent"
        elif f.type == SEATS:
            out[f.name] = [p for p in range(32) if (v >> p) & 1]
        elif f.type == FLAG:
            if v == 1:
                out[f.name] = True
        else:
            out[f.name] = v
    return out


def extend_events(out: list[dict[str, Any]], deals: dict[int, dict[str, Any]], rows: Any) -> None:
    """Append raw ``rows`` to ``out`` (a deal: one event per seat; one player's draws for one reason: one event).

    ``deals`` holds the deal going round the table, if any, between calls."""
    for kind, player, card, extra in rows:
        dealing = kind in (EV_DEAL, EV_REDEAL)
        if dealing and player in deals:
            deals[player]["cards"].append(card)
            continue
        ev = event_dict(kind, player, card, extra)
        if dealing:
            deals[player] = ev
        else:
            deals.clear()
        last = out[-1] if out else None
        if (
            kind == EV_DRAW
            and last is not None
            and last["type"] == "draw"
            and last["player"] == player
            and last["reason"] == ev["reason"]
            and "cards" in last
        ):
            last["cards"].append(card)
        else:
            out.append(ev)


def copy_event(ev: dict[str, Any]) -> dict[str, Any]:
    """A copy that shares no list with ``ev``."""
    return {k: list(v) if isinstance(v, list) else v for k, v in ev.items()}


# --- what a viewer sees ----------------------------------------------------------------------


def redact(event: dict[str, Any], viewer: int | None, open_hands: bool = False) -> dict[str, Any]:
    """``event`` as seat ``viewer`` may see it (R11; None: omniscient): a hidden card list becomes its ``count``.

    A kind this table does not know passes as its type alone."""
    spec = KIND_OF.get(event.get("type"))  # type: ignore[arg-type]
    if spec is None:
        return {"type": str(event.get("type"))}
    sees_all = viewer is None or open_hands or event.get("player") == viewer
    out: dict[str, Any] = {"type": spec.name}
    for f in spec.fields:
        if f.name not in event:
            continue
        v = event[f.name]
        if f.visible == ACTOR and not sees_all:
            if f.type == CARDS:
                out["count"] = len(v)
            continue
        out[f.name] = list(v) if isinstance(v, list) else v
    if "count" in event and "count" not in out:  # already redacted: redacting again keeps the count
        out["count"] = event["count"]
    return out


def _seat(p: int, viewer: int | None, names: Sequence[str] | None) -> str:
    if p == viewer:
        return "you"
    return names[p] if names is not None and 0 <= p < len(names) else f"player {p}"


def describe_event(event: dict[str, Any], viewer: int | None = None, names: Sequence[str] | None = None) -> str:
    """One line of game log for an event (whole or redacted): "you" for ``viewer``'s seat,
    ``names[p]`` (default "player p") for the others."""
    spec = KIND_OF.get(event.get("type"))  # type: ignore[arg-type]
    if spec is None:
        return str(event.get("type"))
    player = event.get("player", -1)
    you = player == viewer and player is not None and player >= 0
    cards = event.get("cards")
    n = len(cards) if isinstance(cards, list) else event.get("count", 0)
    words: dict[str, Any] = dict(event)
    words.update(
        who=_seat(player, viewer, names),
        s="" if you else "s",
        es="" if you else "es",
        **{"is": "are" if you else "is"},
        n=n,
        plural="s" * (n != 1),
        two="two " if spec.name == "play" and event.get("count") == 2 else "",
    )
    if "card" in event:
        words["card"] = card_name(event["card"])
    if isinstance(cards, list):
        words["cards"] = ", ".join(card_name(c) for c in cards)
        words["cards_shown"] = ": " + words["cards"]
    else:
        words["cards_shown"] = ""
        if "count" in event and spec.name != "play":  # a card list the viewer may not see
            words["cards"] = f"{n} card{'s' * (n != 1)}"
    if "color" in event:
        words["color"] = COLOR_NAMES[event["color"]]
    if "reason" in event:
        words["reason"] = event["reason"].replace("_", " ")
    for key in ("with", "caught"):
        if key in event:
            words[key] = _seat(event[key], viewer, names)
    if "challenged" in event:
        who = _seat(event["challenged"], viewer, names)
        words["challenged_s"] = "your" if who == "you" else f"{who}'s"
    if "winners" in event:
        words["winners"] = ", ".join(_seat(p, viewer, names) for p in event["winners"])
    text = spec.text
    for flag, variant in spec.variants:
        if event.get(flag):
            text = variant
    return text.format(**words)


def hands_from_events(events: Sequence[dict[str, Any]], num_players: int) -> list[list[int]]:
    """Every seat's cards after ``events`` (whole, not redacted; from a round's deal on), folded
    by each kind's effect on the hands: at a round's end, what the players lay down (R8)."""
    hands: list[list[int]] = [[] for _ in range(num_players)]
    for ev in events:
        effect = KIND_OF[ev["type"]].hands
        if effect == "gain":
            hands[ev["player"]] += ev["cards"]
        elif effect == "lose":
            for _ in range(ev.get("count", 1)):
                hands[ev["player"]].remove(ev["card"])
        elif effect == "clear":
            hands = [[] for _ in range(num_players)]
        elif effect == "swap":
            p, q = ev["player"], ev["with"]
            hands[p], hands[q] = hands[q], hands[p]
    return [sorted(h) for h in hands]
