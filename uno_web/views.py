"""What the browser may see (R11): a seat's view decoded from ``Engine.observe(seat)``, record
events with other seats' hidden cards removed (``public_event``, a whitelist), and the omniscient
view of a replay. Nothing here reads ``game_state()``'s hands for a live game.
"""

from __future__ import annotations

from typing import Any

from uno_env import describe_event, redact
from uno_env.seat_view import action_info, card_info, seat_view, state_view

__all__ = ["action_info", "card_info", "omniscient_view", "public_event", "seat_view"]


def public_event(
    event: dict[str, Any], viewer: int | None, names: list[str], open_hands: bool = False
) -> dict[str, Any]:
    """A record event as ``viewer`` may see it (None: omniscient, for replays only), with its
    line of log text: ``uno_env.redact`` (the event table's visibility) and ``describe_event``
    ("you" for the viewer's seat, ``names`` for the others)."""
    out = redact(event, viewer, open_hands)
    out["text"] = describe_event(out, viewer, names)
    return out


def omniscient_view(state: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """Every hand and the whole table from ``game_state()`` (``uno_env.seat_view.state_view``):
    for replays, never for live play."""
    return state_view(state, None, names)
