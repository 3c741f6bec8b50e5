"""Game records: the events of a round as JSON-serialisable dicts (format: docs/engine.md, Records).

This module knows nothing of the ``Engine``; ``replay.py`` plays a record again."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rules import UnoRules
from . import layout as L
from .events import copy_event, extend_events


class _Round:
    __slots__ = ("actions", "deals", "fed", "json", "rows", "start")

    def __init__(self, start: dict[str, Any]) -> None:
        self.start = start
        self.actions: list[int] = []
        self.rows: list[tuple[int, int, int, int]] = []
        # The rows as events, converted as they come: a long match is not re-converted per call.
        self.json: list[dict[str, Any]] = []
        self.fed = 0
        self.deals: dict[int, dict[str, Any]] = {}

    def events(self) -> list[dict[str, Any]]:
        """The events so far (the cached dicts: copy before handing them out)."""
        if self.fed < len(self.rows):
            extend_events(self.json, self.deals, self.rows[self.fed :])
            self.fed = len(self.rows)
        return self.json


class Recorder:
    """Collects each game's rounds from the engine's per-step event buffers (engine-internal).

    The engine hands over ``events`` [B, W, 4], ``event_counts`` [B] and ``rng`` [B, 2] (column 0 the
    live state, column 1 the state the round was dealt from) once, at construction."""

    def __init__(
        self, num_players: int, rules: UnoRules, events: np.ndarray, event_counts: np.ndarray, rng: np.ndarray
    ) -> None:
        self.num_players = num_players
        self.rules = rules
        self._events = events
        self._event_counts = event_counts
        self._rng = rng
        self.rounds: list[_Round | None] = [None] * events.shape[1]
        self.previous: list[_Round | None] = [None] * events.shape[1]

    def rebind(self, events: np.ndarray, event_counts: np.ndarray, rng: np.ndarray) -> None:
        """Read from these arrays from now on (the engine's, after it was unpickled or copied)."""
        self._events, self._event_counts, self._rng = events, event_counts, rng

    def _rows(self, b: int) -> list[tuple[int, int, int, int]]:
        n = int(self._event_counts[b])
        if n > self._events.shape[0]:
            raise RuntimeError(f"game {b}: {n} events in one step overflow the record buffer")
        return [(int(a), int(c), int(d), int(e)) for a, c, d, e in self._events[:n, b]]

    def _dealt_round(self, b: int) -> _Round:
        return _Round({"rng_state": str(int(self._rng[b, 1]))})

    def on_reset(self, games: np.ndarray) -> None:
        """Games ``games`` were dealt a new round by ``reset``."""
        for b in games:
            rnd = self.rounds[b] = self._dealt_round(int(b))
            rnd.rows = self._rows(int(b))

    def on_set(self, b: int, state: dict[str, Any], draw_pile: list[int]) -> None:
        """Game b was put at a position: ``state`` is its ``game_state()`` after the set."""
        position = {
            "hands": state["hands"],
            "discard_pile": state["discard_pile"],
            "draw_pile": draw_pile,
            "current_player": state["current_player"],
            "current_color": state["current_color"],
            "direction": state["direction"],
            "dealer": state["dealer"],
            "scores": state["scores"],
        }
        if not state["discard_pile"]:  # R4 reshuffle='every_played_card': the card to match stays
            position["top_card"] = state["top_card"]
        self.rounds[b] = _Round({"position": position, "rng_state": str(int(self._rng[b, 0]))})

    def on_step(self, actions: np.ndarray, finished: np.ndarray | None) -> None:
        """A step applied ``actions``; ``finished`` [B] marks the games whose round ended and was
        dealt anew in the same step (auto-reset), None when the engine does not auto-reset."""
        for b in map(int, np.flatnonzero(actions != -1)):
            rnd = self.rounds[b]
            assert rnd is not None, "every game is dealt (on_reset) or set (on_set) before it steps"
            rnd.actions.append(int(actions[b]))
            rows = self._rows(b)
            if finished is not None and finished[b]:
                cut = next(k for k, r in enumerate(rows) if r[0] == L.EV_DEAL)
                rnd.rows.extend(rows[:cut])
                self.previous[b] = rnd
                new = self.rounds[b] = self._dealt_round(b)
                new.rows = rows[cut:]
            else:
                rnd.rows.extend(rows)

    def _to_dict(self, rnd: _Round) -> dict[str, Any]:
        return {
            "num_players": self.num_players,
            "rules": self.rules.to_dict(),
            "start": rnd.start,
            "actions": list(rnd.actions),
            "events": [copy_event(ev) for ev in rnd.events()],
        }

    def record(self, b: int) -> dict[str, Any]:
        """Game b's current round as a record."""
        rnd = self.rounds[b]
        assert rnd is not None, "every game is dealt (on_reset) or set (on_set) before it is read"
        return self._to_dict(rnd)

    def events(self, b: int, start: int) -> list[dict[str, Any]]:
        """Game b's current round's events from number ``start`` on (copies)."""
        rnd = self.rounds[b]
        assert rnd is not None, "every game is dealt (on_reset) or set (on_set) before it is read"
        return [copy_event(ev) for ev in rnd.events()[start:]]

    def last_record(self, b: int) -> dict[str, Any] | None:
        """Game b's round before the last auto-reset, or None."""
        rnd = self.previous[b]
        return None if rnd is None else self._to_dict(rnd)
