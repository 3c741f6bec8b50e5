"""What a seat sees, decoded once for every view of the game in words (R11).

Every text view (the web table, the language-model seat, OpenSpiel's string, the terminal views)
reads a seat through ``seat_view`` (an observation row only) or ``state_view`` (``game_state()``,
applying R11 itself)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .actions import (
    ACCEPT,
    CALL_UNO,
    CATCH_UNO,
    CHALLENGE,
    CHOOSE_RED,
    DRAW,
    PASS,
    PLAY_DOUBLE_FIRST,
    SWAP_WITH_FIRST,
    action_name,
    card_of_double,
)
from .cards import CARD_COLOR, COLOR_NAMES, NUM_CARD_TYPES, card_name
from .observation import OBS_BASE_SIZE, OBS_FIELDS, OBS_OFFSETS, PHASE_NAMES, SCORE_SCALE

__all__ = ["action_info", "card_color", "card_info", "observation_fields", "seat_view", "state_view"]


def observation_fields(observation: np.ndarray) -> dict[str, np.ndarray]:
    """The row's fields by name, in ``OBS_FIELDS`` order (views into the row), and
    ``open_hands`` (the other seats' hands, relative seats 1..9 by 57 counts, flat) when the row
    is an ``open_hands`` one (R11)."""
    o = np.asarray(observation)
    out = {name: o[OBS_OFFSETS[name] : OBS_OFFSETS[name] + size] for name, size, _ in OBS_FIELDS}
    if o.shape[-1] > OBS_BASE_SIZE:
        out["open_hands"] = o[OBS_BASE_SIZE:]
    return out


def _counts_to_cards(counts: np.ndarray) -> list[int]:
    return np.repeat(np.arange(counts.size), np.rint(counts).astype(np.int64)).tolist()


def _one_hot(values: np.ndarray) -> int | None:
    hits = np.flatnonzero(values > 0.5)
    return int(hits[0]) if hits.size else None


def card_color(card: int) -> str:
    """The name of a card type's colour (``COLOR_NAMES``), or ``"wild"``."""
    color = int(CARD_COLOR[card])
    return COLOR_NAMES[color] if color >= 0 else "wild"


def card_info(card: int) -> dict[str, Any]:
    """A card as the browser draws it: id, name and colour name (``wild`` for wilds)."""
    return {"id": int(card), "name": card_name(card), "color": card_color(card)}


def action_info(action: int) -> dict[str, Any]:
    """A legal action as the browser offers it: id, name, kind and the card or colour it names."""
    a = int(action)
    info: dict[str, Any] = {"id": a, "name": action_name(a)}
    if a < NUM_CARD_TYPES:
        info.update(kind="play", card=a)
    elif a >= PLAY_DOUBLE_FIRST:
        info.update(kind="double", card=int(card_of_double(a)))
    elif a == DRAW:
        info["kind"] = "draw"
    elif a == PASS:
        info["kind"] = "pass"
    elif CHOOSE_RED <= a < CHOOSE_RED + 4:
        info.update(kind="color", color=COLOR_NAMES[a - CHOOSE_RED])
    elif a in (CHALLENGE, ACCEPT):
        info["kind"] = "challenge" if a == CHALLENGE else "accept"
    elif a in (CALL_UNO, CATCH_UNO):
        info["kind"] = "call_uno" if a == CALL_UNO else "catch_uno"
    elif a >= SWAP_WITH_FIRST:
        info.update(kind="swap", offset=a - SWAP_WITH_FIRST + 1)
    return info


def seat_view(
    observation: np.ndarray, seat: int = 0, num_players: int | None = None, names: list[str] | None = None
) -> dict[str, Any]:
    """The table as ``seat`` sees it, decoded from its observation row (float32 [D]) alone.

    ``num_players`` (None: read from the row's ``seat_present``) and ``names`` (None: "player p")
    only label the seats; slot k of the row is the seat k places clockwise from ``seat``."""
    f = observation_fields(observation)
    n = int(f["seat_present"].sum() + 0.5) if num_players is None else int(num_players)
    names = [f"player {p}" for p in range(n)] if names is None else list(names)
    hand = _counts_to_cards(f["hand"])
    top = _one_hot(f["top_card"])
    color = _one_hot(f["current_color"])
    phase = _one_hot(f["phase"])
    drawn = _one_hot(f["drawn_card"])
    prev_color = _one_hot(f["wd4_prev_color"])
    seats: list[dict[str, Any]] = []
    for slot in range(n):
        s = (seat + slot) % n  # slot k is the seat k places clockwise from the observer
        seats.append(
            {
                "seat": s,
                "name": names[s],
                "hand_size": int(f["hand_sizes"][slot] + 0.5),
                "score": int(round(float(f["scores"][slot]) * SCORE_SCALE)),
                "uno": bool(f["uno_called"][slot] > 0.5),
                "eliminated": bool(f["eliminated"][slot] > 0.5),
                "catchable": bool(f["catchable"][slot] > 0.5),
                "partner": bool(f["partner"][slot] > 0.5),
            }
        )
    seats.sort(key=lambda x: x["seat"])
    return {
        "seat": seat,
        "hand": [card_info(c) for c in hand],
        "top_card": card_info(top) if top is not None else None,
        "current_color": COLOR_NAMES[color] if color is not None else None,
        "phase": PHASE_NAMES[phase] if phase is not None else None,
        "direction": int(round(float(f["direction"][0]))),
        "pending_draw": int(f["pending_draw"][0] + 0.5),
        "drawn_card": card_info(drawn) if drawn is not None else None,
        "wd4_prev_color": COLOR_NAMES[prev_color] if prev_color is not None else None,
        "draw_pile_size": int(f["draw_pile_size"][0] + 0.5),
        "round": int(f["round"][0] + 0.5),
        "seats": seats,
    }


def state_view(
    state: dict[str, Any], viewer: int | None = None, names: list[str] | None = None, open_hands: bool = False
) -> dict[str, Any]:
    """The table from ``game_state()`` as ``viewer`` may see it (R11; None: every hand), in ``seat_view``'s keys.

    Fields only an observation carries (``drawn_card``, ``wd4_prev_color``, ``catchable``, ``partner``)
    are None or False."""
    n = state["num_players"]
    names = [f"player {p}" for p in range(n)] if names is None else list(names)
    color = state["current_color"]
    return {
        "seat": viewer,
        "hands": [
            [card_info(c) for c in sorted(h)] if viewer is None or p == viewer or open_hands else None
            for p, h in enumerate(state["hands"])
        ],
        "top_card": card_info(state["top_card"]),
        "current_color": COLOR_NAMES[color] if color is not None else None,
        "phase": state["phase"],
        "direction": state["direction"],
        "pending_draw": state["pending_draw"],
        "drawn_card": None,
        "wd4_prev_color": None,
        "draw_pile_size": state["draw_pile_size"],
        "round": state["round"],
        "seats": [
            {
                "seat": s,
                "name": names[s],
                "hand_size": len(state["hands"][s]),
                "score": state["scores"][s],
                "uno": state["uno_called"][s],
                "eliminated": state["eliminated"][s],
                "catchable": False,
                "partner": False,
            }
            for s in range(n)
        ],
    }
