"""What a seat sees, decoded from its observation row alone (R11): its hand, the table, every
seat's public counts, and its legal moves as named records.

The one decoder of an observation for people and language models: the web table
(``uno_web.views``) and the text seat (``uno_env.text``) both read a seat through it. It reads
the observation vector and the legal mask only, never ``game_state()``'s hands.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .actions import (
    ACCEPT,
    CALL_UNO,
    CATCH_UNO,
    CHALLENGE,
    CHOOSE_COLOR_FIRST,
    DOUBLE_FIRST,
    DRAW,
    PASS,
    SWAP_FIRST,
    action_name,
    card_of_double,
)
from .cards import CARD_COLOR, COLOR_NAMES, NUM_CARD_TYPES, card_name
from .observation import OBS_OFFSETS, PHASE_NAMES, SCORE_SCALE
from .rules import MAX_PLAYERS

__all__ = ["action_info", "card_info", "seat_view"]


def _field(o: np.ndarray, name: str, size: int) -> np.ndarray:
    at = OBS_OFFSETS[name]
    return o[at : at + size]


def _counts_to_cards(counts: np.ndarray) -> list[int]:
    out: list[int] = []
    for t in np.flatnonzero(counts > 0.5):
        out += [int(t)] * int(counts[t] + 0.5)
    return out


def _one_hot(values: np.ndarray) -> int | None:
    hits = np.flatnonzero(values > 0.5)
    return int(hits[0]) if hits.size else None


def card_info(card: int) -> dict[str, Any]:
    """A card as the browser draws it: id, name and colour name (``wild`` for wilds)."""
    color = int(CARD_COLOR[card])
    return {"id": int(card), "name": card_name(card), "color": COLOR_NAMES[color] if color >= 0 else "wild"}


def action_info(action: int) -> dict[str, Any]:
    """A legal action as the browser offers it: id, name, kind and the card or colour it names."""
    a = int(action)
    info: dict[str, Any] = {"id": a, "name": action_name(a)}
    if a < NUM_CARD_TYPES:
        info.update(kind="play", card=a)
    elif a >= DOUBLE_FIRST:
        info.update(kind="double", card=int(card_of_double(a)))
    elif a == DRAW:
        info["kind"] = "draw"
    elif a == PASS:
        info["kind"] = "pass"
    elif CHOOSE_COLOR_FIRST <= a < CHOOSE_COLOR_FIRST + 4:
        info.update(kind="color", color=COLOR_NAMES[a - CHOOSE_COLOR_FIRST])
    elif a in (CHALLENGE, ACCEPT):
        info["kind"] = "challenge" if a == CHALLENGE else "accept"
    elif a in (CALL_UNO, CATCH_UNO):
        info["kind"] = "call_uno" if a == CALL_UNO else "catch_uno"
    elif a >= SWAP_FIRST:
        info.update(kind="swap", offset=a - SWAP_FIRST + 1)
    return info


def seat_view(
    observation: np.ndarray, seat: int = 0, num_players: int | None = None, names: list[str] | None = None
) -> dict[str, Any]:
    """The table as ``seat`` sees it, decoded from its observation row (float32 [D]) alone.

    ``num_players`` (None: read from the row's ``seat_present``) and ``names`` (None: "player p")
    only label the seats; slot k of the row is the seat k places clockwise from ``seat``."""
    o = np.asarray(observation)
    n = int(_field(o, "seat_present", MAX_PLAYERS).sum() + 0.5) if num_players is None else int(num_players)
    names = [f"player {p}" for p in range(n)] if names is None else list(names)
    hand = _counts_to_cards(_field(o, "hand", NUM_CARD_TYPES))
    top = _one_hot(_field(o, "top_card", NUM_CARD_TYPES))
    color = _one_hot(_field(o, "current_color", 4))
    phase = _one_hot(_field(o, "phase", len(PHASE_NAMES)))
    drawn = _one_hot(_field(o, "drawn_card", NUM_CARD_TYPES))
    prev_color = _one_hot(_field(o, "wd4_prev_color", 4))
    sizes = _field(o, "hand_sizes", n)
    scores = _field(o, "scores", n)
    uno = _field(o, "uno_called", n)
    eliminated = _field(o, "eliminated", n)
    catchable = _field(o, "catchable", n)
    partner = _field(o, "partner", n)
    seats: list[dict[str, Any]] = []
    for slot in range(n):
        s = (seat + slot) % n  # slot k is the seat k places clockwise from the observer
        seats.append(
            {
                "seat": s,
                "name": names[s],
                "hand_size": int(sizes[slot] + 0.5),
                "score": int(round(float(scores[slot]) * SCORE_SCALE)),
                "uno": bool(uno[slot] > 0.5),
                "eliminated": bool(eliminated[slot] > 0.5),
                "catchable": bool(catchable[slot] > 0.5),
                "partner": bool(partner[slot] > 0.5),
            }
        )
    seats.sort(key=lambda x: x["seat"])
    return {
        "seat": seat,
        "hand": [card_info(c) for c in hand],
        "top_card": card_info(top) if top is not None else None,
        "current_color": COLOR_NAMES[color] if color is not None else None,
        "phase": PHASE_NAMES[phase] if phase is not None else None,
        "direction": int(round(float(_field(o, "direction", 1)[0]))),
        "pending_draw": int(_field(o, "pending_draw", 1)[0] + 0.5),
        "drawn_card": card_info(drawn) if drawn is not None else None,
        "wd4_prev_color": COLOR_NAMES[prev_color] if prev_color is not None else None,
        "draw_pile_size": int(_field(o, "draw_pile_size", 1)[0] + 0.5),
        "round": int(_field(o, "round", 1)[0] + 0.5),
        "seats": seats,
    }
