"""Markdown tables for the docs, built from the code so README and docstrings cannot drift."""

from __future__ import annotations

from .observation import OBS_FIELDS, OBS_OFFSETS, OBS_BASE_SIZE, OBS_OPEN_SIZE


def action_table() -> str:
    """The R2 action ids as a Markdown table."""
    rows = [
        ("0–56", "PLAY card type t (R1: `color*13+rank`; 52 Wild, 53 Wild Draw Four, 54 Shuffle Hands, 55 Swap Hands, 56 Customizable)"),
        ("57", "DRAW one card; facing a stacked Draw Two, take the whole sum"),
        ("58", "PASS: keep the card just drawn; the only move when nothing can be played or drawn"),
        ("59–62", "CHOOSE_COLOR red, yellow, green, blue"),
        ("63", "CHALLENGE a Wild Draw Four"),
        ("64", "ACCEPT a Wild Draw Four (draw the sum, lose the turn)"),
        ("65", "CALL_UNO (`uno_call='explicit'`)"),
        ("66", "CATCH_UNO: accuse the previous player of not calling"),
        ("67–75", "SWAP_WITH the player 1–9 seats further clockwise (Wild Swap Hands)"),
        ("76–115", "PLAY_DOUBLE of number card `color*13+rank` → `76 + color*10 + rank` (`allow_doubles`)"),
    ]
    lines = ["| ids | action |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


def observation_table() -> str:
    """The observation vector layout as a Markdown table."""
    lines = ["| indices | field | meaning |", "|---|---|---|"]
    for name, size, meaning in OBS_FIELDS:
        at = OBS_OFFSETS[name]
        span = f"{at}" if size == 1 else f"{at}–{at + size - 1}"
        lines.append(f"| {span} | `{name}` | {meaning} |")
    lines.append(
        f"| {OBS_BASE_SIZE}–{OBS_OPEN_SIZE - 1} | `open_hands` | only with `open_hands=True` (R11): the "
        f"hands of relative seats 1–9, 57 counts each |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(action_table())
    print()
    print(observation_table())
