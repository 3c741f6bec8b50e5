"""Live games and replays held by the server, each behind its own lock, in stores with a
size cap and an inactivity timeout (so memory stays bounded however many tabs open games)."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import numpy as np

from uno_env import hands_from_events, record_start, replay
from uno_env.cards import CARD_COLOR, COLOR_NAMES
from uno_env.checks import is_int
from uno_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .session import Session, SessionError
from .views import action_info, card_info, omniscient_view, public_event, seat_view

# The log a response carries is capped so that one response stays small on long games.
MAX_LOG_EVENTS = 400
MAX_REPLAY_ACTIONS = 20_000
# Actions one game may hold, every round of a match included: its record (and the memory it
# holds) stays bounded however long a match or a turn limit would let it run.
MAX_GAME_ACTIONS = 20_000


def open_game(rules: Any, seat: Any, agents: Any, num_players: Any, **options: Any) -> Game:
    """A new game from a caller's values (``Session.open``, ``options`` its keywords), stopped at ``MAX_GAME_ACTIONS``."""
    return Game(Session.open(rules, seat, agents, num_players, max_actions=MAX_GAME_ACTIONS, **options))


class Game:
    """The browser's view of a ``Session`` (one person, ``human``, at a table of agents): the
    banner's last move and last card played, and a summary per finished round, hands revealed."""

    def __init__(self, session: Session) -> None:
        self.lock = threading.Lock()
        self.session = session
        self.rules = session.rules
        self.num_players = session.num_players
        self.names = session.names
        self.engine = session.engine
        self.touched = time.monotonic()
        self.rounds: list[dict[str, Any]] = []  # a summary per finished round, hands revealed
        self.last_move: dict[str, Any] | None = None
        self.last_play: dict[str, Any] | None = None  # the last card played: who, what, over which colour
        self._color: str | None = None
        self._round_start = 0  # number of the current round's first event
        self._read(session.engine.record_events(0), 0)

    @property
    def human(self) -> int:
        """The person's seat."""
        return self.session.seat

    @property
    def over(self) -> bool:
        """Whether the episode ended or the game reached ``MAX_GAME_ACTIONS`` (``Session.over``)."""
        return self.session.over

    def _read(self, new: list[dict[str, Any]], first: int) -> None:
        """Follow the colour, the last card played and the finished rounds through new events
        (``first``: the number of the first of them)."""
        round_start = self._round_start
        for k, ev in enumerate(new):
            kind = ev["type"]
            if kind == "play":
                self.last_play = {"player": ev["player"], "card": card_info(ev["card"]), "color_before": self._color}
                color = int(CARD_COLOR[ev["card"]])
                self._color = COLOR_NAMES[color] if color >= 0 else None
            elif kind == "flip":
                color = int(CARD_COLOR[ev["card"]])
                self._color = COLOR_NAMES[color] if color >= 0 else None
            elif kind == "color":
                self._color = COLOR_NAMES[ev["color"]]
            if kind == "round_end":
                self._summarise_round(round_start, first + k)
                round_start = first + k + 1
        self._round_start = round_start

    def _summarise_round(self, start: int, end: int) -> None:
        events = self.engine.record_events(0, start)
        stop = end - start
        hands = hands_from_events(events[: stop + 1], self.num_players)
        # The round's points are scored around its round_end (the previous round's before this
        # one's deal, the next round's deal after): count those between the two deals.
        first = next((k for k, ev in enumerate(events[: stop + 1]) if ev["type"] == "deal"), 0)
        last = next((k for k in range(stop + 1, len(events)) if events[k]["type"] == "deal"), len(events))
        scored = [0] * self.num_players
        for ev in events[first:last]:
            if ev["type"] == "score":
                scored[ev["player"]] += ev["points"]
        points = self.rules.points
        self.rounds.append(
            {
                "round": len(self.rounds) + 1,
                "winners": list(events[stop]["winners"]),
                "hands": [
                    {"seat": s, "cards": [card_info(c) for c in h], "points": sum(points[c] for c in h)}
                    for s, h in enumerate(hands)
                ],
                "scored": scored,
            }
        )

    def _after(self, seat: int, action: int, first: int, new: list[dict[str, Any]]) -> None:
        self._read(new, first)
        # Every action is public (what a hand holds is not): the banner names it and its effects.
        self.last_move = {
            "seat": seat,
            "name": self.names[seat],
            "action": action_info(action),
            "text": [public_event(ev, self.human, self.names, self.rules.open_hands)["text"] for ev in new],
        }

    def view(self, since: int = 0) -> dict[str, Any]:
        """The human seat's whole picture: table, legal moves when it is to act, the log from
        event ``since`` on (at most ``MAX_LOG_EVENTS``), and the result once over."""
        s, e = self.session, self.engine
        obs = e.observe(self.human)[0]
        table = seat_view(obs, self.human, self.num_players, self.names)
        over = s.over
        start = min(max(since, s.event_count - MAX_LOG_EVENTS), s.event_count)
        out: dict[str, Any] = {
            "table": table,
            "current_player": s.to_act,
            "your_turn": s.your_turn,
            "legal": [action_info(a) for a in s.legal_actions()],
            "events": s.events(start),
            "event_count": s.event_count,
            "over": over,
            "moves": s.moves,
            "max_moves": s.max_actions,
            "last_move": self.last_move,
            "last_play": self.last_play,
            "rounds_finished": len(self.rounds),
            "last_round": self.rounds[-1] if self.rounds else None,
        }
        if over:
            out["winners"] = s.winners
            out["truncated"] = bool(e.truncated[0]) or s.at_limit
            out["at_action_limit"] = s.at_limit
            out["eliminated"] = s.eliminated
        return out

    def move(self, action: Any) -> None:
        """The human's action, checked against the legal mask; an illegal one changes nothing."""
        first = self.session.event_count
        new = self.session.play(action)
        self._after(self.human, int(action), first, new)

    def check_agent_turn(self) -> None:
        """``SessionError`` (conflict) unless an agent is to act in a running game."""
        self.session.check_running()
        if self.session.your_turn:
            raise SessionError("it is your turn: POST /move with one of the legal actions", "conflict")

    def advance(self) -> dict[str, Any]:
        """One agent's move (the seat to act when it is not the human's); returns who moved."""
        self.check_agent_turn()
        first = self.session.event_count
        seat = self.session.advance()
        self._after(seat, self.session.last_action, first, self.engine.record_events(0, first))
        # Whose move it was is public; what it chose shows in the (redacted) events.
        return {"seat": seat, "name": self.names[seat]}

    def record(self) -> dict[str, Any]:
        """The finished game's record (it reveals every hand, so never while the game runs)."""
        return self.session.record()


class Replay:
    """A validated record and a cursor engine stepping through it (forward cheaply; a step back
    replays from the start, which is milliseconds for rounds of ordinary length)."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.lock = threading.Lock()
        self.record = check_record(record)
        self.num_players = int(record["num_players"])
        self.names = [f"seat {s}" for s in range(self.num_players)]
        self.touched = time.monotonic()
        self._restart()

    def _restart(self) -> None:
        rec = self.record
        e = record_start(rec)
        self.engine, self.cursor = e, 0
        self.event_count = len(e.record_events(0, 0))

    @property
    def length(self) -> int:
        """Number of actions, so frames run 0..length."""
        return len(self.record["actions"])

    def frame(self, k: int, viewer: int | None) -> dict[str, Any]:
        """The table after ``k`` actions, from seat ``viewer`` (None: omniscient), with the log."""
        if not 0 <= k <= self.length:
            raise SessionError(f"frame must be in 0..{self.length} (this record has {self.length} actions), got {k}")
        if viewer is not None and not 0 <= viewer < self.num_players:
            raise SessionError(
                f"seat must be in 0..{self.num_players - 1} or omitted for the omniscient view, got {viewer}"
            )
        if k < self.cursor:
            self._restart()
        e = self.engine
        while self.cursor < k:
            e.step(np.array([self.record["actions"][self.cursor]], np.int64))
            self.cursor += 1
        self.event_count += len(e.record_events(0, self.event_count))
        count = self.event_count
        events = e.record_events(0, max(0, count - MAX_LOG_EVENTS))
        if viewer is None:
            table = omniscient_view(e.game_state(0), self.names)
        else:
            table = seat_view(e.observe(viewer)[0], viewer, self.num_players, self.names)
        last = None
        if k > 0:
            last = action_info(self.record["actions"][k - 1])
        return {
            "frame": k,
            "length": self.length,
            "viewer": viewer,
            "table": table,
            "current_player": int(e.current_player[0]),
            "last_action": last,
            "events": [public_event(ev, viewer, self.names, e.rules.open_hands) for ev in events],
            "event_count": count,
            "over": bool(e.terminated[0] or e.truncated[0]),
        }


def check_record(record: Any) -> dict[str, Any]:
    """A record dict whose shape is right and that replays to its own events; else a 422."""
    if not isinstance(record, dict):
        raise SessionError(f"a record is a JSON object, got {type(record).__name__}")
    missing = [k for k in ("num_players", "rules", "start", "actions", "events") if k not in record]
    if missing:
        raise SessionError(f"a record needs the keys num_players, rules, start, actions, events; missing {missing}")
    n = record["num_players"]
    if not is_int(n) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise SessionError(f"record num_players must be an integer in {MIN_PLAYERS}..{MAX_PLAYERS}, got {n!r}")
    actions = record["actions"]
    if not isinstance(actions, list) or not all(is_int(a) for a in actions):
        raise SessionError("record actions must be a list of integer action ids")
    if len(actions) > MAX_REPLAY_ACTIONS:
        raise SessionError(
            f"record has {len(actions)} actions; the viewer takes at most {MAX_REPLAY_ACTIONS}", "too_large"
        )
    if not isinstance(record["rules"], dict) or not isinstance(record["start"], dict):
        raise SessionError("record rules and start must be JSON objects")
    try:
        replay(record)
    except Exception as exc:  # any fault of the record (bad rules, position, action) is the client's
        raise SessionError(f"not a valid game record: {exc}") from None
    return record


T = TypeVar("T")


class Store(Generic[T]):
    """Objects by random id, at most ``capacity``, each dropped after ``ttl`` seconds unused."""

    def __init__(self, kind: str, capacity: int, ttl: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.kind, self.capacity, self.ttl, self.clock = kind, capacity, ttl, clock
        self._items: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def sweep(self) -> int:
        """Drop every expired object; returns how many."""
        now = self.clock()
        with self._lock:
            old = [k for k, v in self._items.items() if now - v.touched > self.ttl]  # type: ignore[attr-defined]
            for k in old:
                del self._items[k]
        return len(old)

    def add(self, item: T) -> str:
        """Store ``item`` under a new unguessable id; 503 when full of live objects."""
        self.sweep()
        with self._lock:
            if len(self._items) >= self.capacity:
                raise SessionError(
                    f"the server holds its maximum of {self.capacity} {self.kind}s; try again when "
                    f"some expire (after {self.ttl / 60:g} minutes unused) or end one",
                    "full",
                )
            key = secrets.token_urlsafe(12)
            item.touched = self.clock()  # type: ignore[attr-defined]
            self._items[key] = item
        return key

    def get(self, key: str) -> T:
        """The object of ``key`` (its timer restarted); 404 when unknown or expired."""
        with self._lock:
            item = self._items.get(key)
            if item is None or self.clock() - item.touched > self.ttl:  # type: ignore[attr-defined]
                self._items.pop(key, None)
                raise SessionError(
                    f"no {self.kind} with id {key!r}: it never existed, was ended, or expired after "
                    f"{self.ttl / 60:g} minutes without a request",
                    "unknown",
                )
            item.touched = self.clock()  # type: ignore[attr-defined]
            self._items.move_to_end(key)
        return item

    def remove(self, key: str) -> None:
        """Forget ``key``; 404 when unknown."""
        with self._lock:
            if self._items.pop(key, None) is None:
                raise SessionError(f"no {self.kind} with id {key!r}", "unknown")
