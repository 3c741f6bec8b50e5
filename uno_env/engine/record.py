"""Game records: the events of a round as JSON-serialisable dicts, and one line of text per event.

A record is ``{"num_players", "rules", "start", "actions", "events"}``. ``start`` says how the
round began: ``{"rng_state": s}`` for a dealt round (the generator state the deal was drawn
from), or ``{"position": p, "rng_state": s}`` for a position set with ``Engine.set_game``
(``p`` holds its keyword arguments; ``s`` is the generator the game continued with). States are
decimal strings, so a record survives JSON readers without 64-bit integers. ``replay.py`` plays
a record again; this module knows nothing of the ``Engine`` itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..cards import COLOR_NAMES, card_name
from ..rules import UnoRules
from . import layout as L


def _event_dict(kind: int, player: int, card: int, extra: int) -> dict[str, Any]:
    name = L.EVENT_NAMES[kind]
    if kind in (L.EV_FLIP, L.EV_RETURN_FIRST):
        return {"type": name, "card": card}
    if kind == L.EV_DEAL:
        return {"type": name, "player": player, "cards": [card]}
    if kind == L.EV_DRAW:
        return {"type": name, "player": player, "cards": [card], "reason": L.DRAW_REASONS[extra]}
    if kind == L.EV_PLAY:
        return {"type": name, "player": player, "card": card, "count": extra}
    if kind == L.EV_COLOR:
        if card == 1:  # drawn at random (R4 drawn_card, R9 wild_first_card='random_color')
            return {"type": name, "player": player, "color": extra, "random": True}
        return {"type": name, "player": player, "color": extra}
    if kind == L.EV_CHALLENGE:
        return {"type": name, "player": player, "challenged": card, "verdict": "guilty" if extra else "innocent"}
    if kind == L.EV_ACCEPT:
        return {"type": name, "player": player, "count": extra}
    if kind == L.EV_PENALTY:
        return {"type": name, "player": player, "action": card}
    if kind == L.EV_PASS:
        return {"type": name, "player": player}
    if kind == L.EV_RESHUFFLE:
        if card == 1:  # reshuffle='every_played_card': the top card went too
            return {"type": name, "cards": extra, "every_played_card": True}
        return {"type": name, "cards": extra}
    if kind == L.EV_SCORE:
        return {"type": name, "player": player, "points": extra}
    if kind in (L.EV_ROUND_END, L.EV_MATCH_END):
        return {"type": name, "winners": [p for p in range(32) if (extra >> p) & 1]}
    if kind == L.EV_SHUFFLE_HANDS:
        return {"type": name, "player": player, "cards": extra}
    if kind == L.EV_REDEAL:
        return {"type": name, "player": player, "cards": [card]}
    if kind == L.EV_SWAP:
        return {"type": name, "player": player, "with": card}
    if kind == L.EV_CALL_UNO:
        return {"type": name, "player": player}
    if kind == L.EV_CATCH_UNO:
        return {"type": name, "player": player, "caught": card}
    if kind == L.EV_DISCARD_WILD:
        return {"type": name, "player": player, "card": card}
    if kind == L.EV_ELIMINATED:
        return {"type": name, "player": player, "score": extra}
    if kind == L.EV_TRUNCATE:
        return {"type": name, "turn": extra}
    raise ValueError(f"unknown event kind {kind}")


def events_to_json(rows: list[tuple[int, int, int, int]]) -> list[dict[str, Any]]:
    """Raw event rows to dicts: a deal (and a Shuffle Hands redeal) gives one event per seat,
    and consecutive draws of one player for one reason merge into one event."""
    out: list[dict[str, Any]] = []
    _extend_json(out, {}, rows)
    return out


def _extend_json(out: list[dict[str, Any]], deals: dict[int, dict[str, Any]], rows: Any) -> None:
    """Append ``rows`` to the events ``out`` (``deals``: the deal going round the table, if any)."""
    for kind, player, card, extra in rows:
        if kind in (L.EV_DEAL, L.EV_REDEAL) and player in deals:
            deals[player]["cards"].append(card)
            continue
        ev = _event_dict(kind, player, card, extra)
        if kind in (L.EV_DEAL, L.EV_REDEAL):
            deals[player] = ev
        else:
            deals.clear()
        last = out[-1] if out else None
        if (
            kind == L.EV_DRAW
            and last is not None
            and last["type"] == "draw"
            and last["player"] == player
            and last["reason"] == ev["reason"]
        ):
            last["cards"].append(card)
        else:
            out.append(ev)


def _copy_event(ev: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, list) else v for k, v in ev.items()}


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
            _extend_json(self.json, self.deals, self.rows[self.fed :])
            self.fed = len(self.rows)
        return self.json


class Recorder:
    """Collects each game's rounds from the engine's per-step event buffers (engine-internal).

    The engine hands over its buffers once, at construction: ``events`` [B, W, 4] and
    ``event_counts`` [B] as the kernels write them on every step, and ``rng`` [B, 2], each
    game's generator (column 0 its live state, column 1 its state when the round was dealt).
    Everything else comes with each call.
    """

    def __init__(
        self, num_players: int, rules: UnoRules, events: np.ndarray, event_counts: np.ndarray, rng: np.ndarray
    ) -> None:
        self.num_players = num_players
        self.rules = rules
        self._events = events
        self._event_counts = event_counts
        self._rng = rng
        self.rounds: list[_Round | None] = [None] * events.shape[0]
        self.previous: list[_Round | None] = [None] * events.shape[0]

    def rebind(self, events: np.ndarray, event_counts: np.ndarray, rng: np.ndarray) -> None:
        """Read from these arrays from now on (the engine's, after it was unpickled or copied)."""
        self._events, self._event_counts, self._rng = events, event_counts, rng

    def _rows(self, b: int) -> list[tuple[int, int, int, int]]:
        n = int(self._event_counts[b])
        if n > self._events.shape[1]:
            raise RuntimeError(f"game {b}: {n} events in one step overflow the record buffer")
        return [(int(a), int(c), int(d), int(e)) for a, c, d, e in self._events[b, :n]]

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
            "events": [_copy_event(ev) for ev in rnd.events()],
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
        return [_copy_event(ev) for ev in rnd.events()[start:]]

    def last_record(self, b: int) -> dict[str, Any] | None:
        """Game b's round before the last auto-reset, or None."""
        rnd = self.previous[b]
        return None if rnd is None else self._to_dict(rnd)


def describe_event(event: dict[str, Any]) -> str:
    """One line of readable game log for a record event."""
    kind = event["type"]
    who = f"player {event['player']}" if "player" in event else ""
    if kind == "deal":
        return f"{who} is dealt {', '.join(card_name(c) for c in event['cards'])}"
    if kind == "flip":
        return f"first card turned: {card_name(event['card'])}"
    if kind == "return_first_card":
        return f"first card {card_name(event['card'])} goes back into the pile"
    if kind == "play":
        return f"{who} plays {'two ' if event['count'] == 2 else ''}{card_name(event['card'])}"
    if kind == "draw":
        n = len(event["cards"])
        return f"{who} draws {n} card{'s' * (n != 1)} ({event['reason'].replace('_', ' ')}): " + ", ".join(
            card_name(c) for c in event["cards"]
        )
    if kind == "color":
        if event.get("random"):
            return f"the colour is drawn at random: {COLOR_NAMES[event['color']]}"
        return f"{who} chooses {COLOR_NAMES[event['color']]}"
    if kind == "challenge":
        return f"{who} challenges player {event['challenged']}'s wild draw four: {event['verdict']}"
    if kind == "accept":
        return f"{who} accepts the wild draw four"
    if kind == "penalty":
        return f"{who} tried an illegal action ({event['action']}) and is penalised"
    if kind == "pass":
        return f"{who} passes"
    if kind == "reshuffle" and event.get("every_played_card"):
        return f"the {event['cards']} played cards, the top one included, are shuffled into the draw pile"
    if kind == "reshuffle":
        return f"the discard pile ({event['cards']} cards under the top one) is shuffled into a new draw pile"
    if kind == "score":
        return f"{who} scores {event['points']} points"
    if kind in ("round_end", "match_end"):
        what = "round" if kind == "round_end" else "match"
        return f"{what} over: winner " + ", ".join(f"player {p}" for p in event["winners"])
    if kind == "shuffle_hands":
        return f"{who} shuffles all {event['cards']} held cards and deals them anew"
    if kind == "redeal":
        return f"{who} is dealt {', '.join(card_name(c) for c in event['cards'])}"
    if kind == "swap":
        return f"{who} swaps hands with player {event['with']}"
    if kind == "call_uno":
        return f"{who} calls UNO"
    if kind == "catch_uno":
        return f"{who} catches player {event['caught']} not calling UNO"
    if kind == "discard_wild":
        return f"{who} puts {card_name(event['card'])} under the top card"
    if kind == "eliminated":
        return f"{who} is eliminated with {event['score']} points"
    return f"round truncated after {event['turn']} actions"
