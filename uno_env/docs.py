"""Every table of actions, observations and cards in the docs, built from the code that defines them.

Docstrings fill their ``@@NAME@@`` placeholders with ``fill_doc``; ``python -m tools.readme
--write-readme`` (not packaged) regenerates README.md's tables from them."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .actions import (
    ACCEPT,
    ACTION_NAMES,
    CALL_UNO,
    CATCH_UNO,
    CHALLENGE,
    CHOOSE_BLUE,
    CHOOSE_RED,
    DRAW,
    NUM_DOUBLES,
    PASS,
    PLAY_DOUBLE_FIRST,
    PLAY_FIRST,
    SWAP_WITH_FIRST,
    SWAP_WITH_LAST,
)
from .cards import CARD_NAMES, COLOR_NAMES, NUM_CARD_TYPES, NUM_NUMBER_RANKS, NUM_RANKS, WILD, Rank
from .observation import OBS_BASE_SIZE, OBS_FIELDS, OBS_OFFSETS, OBS_OPEN_SIZE, STATE_FIELDS
from .rules import MAX_PLAYERS, UnoRules
from .spaces import observation_bounds, state_bounds

__all__ = [
    "ACTION_GROUPS",
    "action_table",
    "card_table",
    "observation_table",
    "state_table",
    "fill_doc",
]

# (first id, last id, meaning) of each kind of action (docs/rules.md R2): the one description of the
# ids, for README and every docstring; the ranges come from uno_env.actions (tests/clients/test_readme.py
# checks that they cover every id).
ACTION_GROUPS: tuple[tuple[int, int, str], ...] = (
    (
        PLAY_FIRST,
        NUM_CARD_TYPES - 1,
        f"PLAY card type t (R1 card ids: `color*{NUM_RANKS} + rank` for the coloured cards "
        f"0-{WILD - 1}, then the wilds {WILD}-{NUM_CARD_TYPES - 1})",
    ),
    (DRAW, DRAW, "DRAW one card; facing a stacked penalty, take the whole penalty"),
    (PASS, PASS, "PASS: keep the card just drawn; the only move when nothing can be played or drawn"),
    (CHOOSE_RED, CHOOSE_BLUE, "CHOOSE_COLOR " + ", ".join(COLOR_NAMES)),
    (CHALLENGE, CHALLENGE, "CHALLENGE a Wild Draw Four (R6)"),
    (ACCEPT, ACCEPT, "ACCEPT a Wild Draw Four: draw the penalty and lose the turn (R6)"),
    (CALL_UNO, CALL_UNO, "CALL_UNO (R7, `uno_call='explicit'`)"),
    (CATCH_UNO, CATCH_UNO, "CATCH_UNO: accuse the previous player of not calling (R7)"),
    (
        SWAP_WITH_FIRST,
        SWAP_WITH_LAST,
        f"SWAP_WITH the player 1-{MAX_PLAYERS - 1} seats further clockwise (Wild Swap Hands)",
    ),
    (
        PLAY_DOUBLE_FIRST,
        PLAY_DOUBLE_FIRST + NUM_DOUBLES - 1,
        f"PLAY_DOUBLE of number card `color*{NUM_RANKS} + rank` → "
        f"`{PLAY_DOUBLE_FIRST} + color*{NUM_NUMBER_RANKS} + rank` (`allow_doubles`)",
    ),
)

_OPEN_HANDS_MEANING = (
    f"only with `open_hands=True` (R11): the hands of relative seats 1-{MAX_PLAYERS - 1}, {NUM_CARD_TYPES} counts each"
)


def _span(first: int, last: int) -> str:
    return f"{first}" if first == last else f"{first}-{last}"


def _names(names: tuple[str, ...], first: int, last: int) -> str:
    return f"`{names[first]}`" if first == last else f"`{names[first]}` … `{names[last]}`"


def _markdown(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _bound(x: float) -> str:
    return "inf" if np.isinf(x) else f"{x:g}"


def action_table() -> str:
    """The action ids (docs/rules.md R2) as a Markdown table: ids, meaning, ``action_name`` of each."""
    rows = [(_span(a, b), meaning, _names(ACTION_NAMES, a, b)) for a, b, meaning in ACTION_GROUPS]
    return _markdown(("ids", "action", "`action_name`"), rows)


def card_table() -> str:
    """The card type ids (docs/rules.md R1) as a Markdown table: ids, what they are, ``card_name`` of each."""
    ranks = ", ".join(
        [f"0-{NUM_NUMBER_RANKS - 1} numbers"] + [f"{int(r)} {r.name.lower().replace('_', ' ')}" for r in Rank]
    )
    colors = ", ".join(f"{c} {name}" for c, name in enumerate(COLOR_NAMES))
    rows = [
        (
            _span(0, WILD - 1),
            f"coloured: `color*{NUM_RANKS} + rank`; colours {colors}; ranks {ranks}",
            _names(CARD_NAMES, 0, WILD - 1),
        )
    ]
    rows += [(f"{t}", CARD_NAMES[t].title(), f"`{CARD_NAMES[t]}`") for t in range(WILD, NUM_CARD_TYPES)]
    return _markdown(("ids", "cards", "`card_name`"), rows)


def _bounded_table(fields: Sequence[tuple[int, str, int, str]], low: np.ndarray, high: np.ndarray) -> str:
    """Fields given as (offset, name, size, meaning), with the min and max of ``low`` and ``high`` over each."""
    rows = [
        (
            _span(at, at + size - 1),
            f"`{name}`",
            f"{size}",
            _bound(low[at : at + size].min()),
            _bound(high[at : at + size].max()),
            meaning,
        )
        for at, name, size, meaning in fields
    ]
    return _markdown(("index", "field", "size", "min", "max", "meaning"), rows)


def state_table() -> str:
    """The whole state (``Engine.state``, hidden information for critics) as a Markdown table, from
    ``STATE_FIELDS``; min and max are ``uno_env.spaces.state_bounds`` for the classic deck and 10 players."""
    starts = np.cumsum([0, *(size for _, size, _ in STATE_FIELDS)])
    fields = [(int(at), name, size, meaning) for at, (name, size, meaning) in zip(starts, STATE_FIELDS, strict=False)]
    return _bounded_table(fields, *state_bounds(UnoRules(), MAX_PLAYERS))


def observation_table() -> str:
    """The observation vector (docs/rules.md R11) as a Markdown table, from ``OBS_FIELDS``; min and max
    are the observation space's bounds for the classic deck and 10 players."""
    fields = [(OBS_OFFSETS[name], name, size, meaning) for name, size, meaning in OBS_FIELDS]
    fields.append((OBS_BASE_SIZE, "open_hands", OBS_OPEN_SIZE - OBS_BASE_SIZE, _OPEN_HANDS_MEANING))
    return _bounded_table(fields, *observation_bounds(UnoRules(open_hands=True), MAX_PLAYERS))


def _field_table(fields: Sequence[tuple[str, int, str]]) -> str:
    rows, at = [], 0
    for name, size, meaning in fields:
        rows.append((_span(at, at + size - 1), f"`{name}`", f"{size}", meaning))
        at += size
    return _markdown(("index", "field", "size", "meaning"), rows)


def history_table() -> str:
    """One row of a seat's history (``Engine.history``, ``HISTORY_FIELDS``) as a Markdown table."""
    from .engine.history import HISTORY_FIELDS

    return _field_table(HISTORY_FIELDS)


def history_counts_table() -> str:
    """The per-seat counts of a seat's history (``HISTORY_COUNT_FIELDS``) as a Markdown table."""
    from .engine.history import HISTORY_COUNT_FIELDS

    return _field_table(HISTORY_COUNT_FIELDS)


def history_token_table() -> str:
    """The columns of a history token (``Engine.history_tokens``, ``HISTORY_TOKEN_FIELDS``) as a
    Markdown table: column, name, vocabulary size (values 0..size-1) and meaning."""
    from .engine.history import HISTORY_TOKEN_FIELDS

    rows = [(f"{k}", f"`{name}`", f"{size}", meaning) for k, (name, size, meaning) in enumerate(HISTORY_TOKEN_FIELDS)]
    return _markdown(("column", "field", "vocabulary", "meaning"), rows)


def event_table() -> str:
    """The event table (``uno_env.engine.events.EVENT_KINDS``) as Markdown: each kind's id, fields,
    who sees them, whether it enters a seat's history, ends a round or breaks a replay, and its text."""
    from .engine.events import ACTOR, EVENT_KINDS

    rows = []
    for k, kind in enumerate(EVENT_KINDS):
        fields = ", ".join(f"`{f.name}`" + (" (the actor only)" if f.visible == ACTOR else "") for f in kind.fields)
        marks = ", ".join(
            m for m, on in (("ends the round", kind.ends_round), ("not replayable", not kind.replayable)) if on
        )
        rows.append(
            (f"{k}", f"`{kind.name}`", fields or "-", "yes" if kind.history else "no", marks or "-", f"`{kind.text}`")
        )
    return _markdown(("id", "type", "fields", "in the history", "marks", "text"), rows)


def fill_doc(doc: str, **values: object) -> str:
    """``doc`` with each ``@@NAME@@`` replaced by ``values[NAME]``; a table on its own line keeps
    the placeholder's indentation (class docstrings are indented)."""

    def fill(match: re.Match) -> str:
        line = doc[doc.rfind("\n", 0, match.start()) + 1 : match.start()]
        indent = line if line.isspace() else ""
        return str(values[match.group(1)]).replace("\n", "\n" + indent)

    return re.sub(r"@@(\w+)@@", fill, doc)
