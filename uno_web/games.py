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

from uno_env import Engine, UnoRules, replay
from uno_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .views import action_info, omniscient_view, public_event, seat_view

# The log a response carries is capped so that one response stays small on long games.
MAX_LOG_EVENTS = 400
MAX_REPLAY_ACTIONS = 20_000


class WebError(Exception):
    """A request that cannot be served: HTTP ``status`` and a message saying what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Game:
    """One person (``human``) at a table of agents, around a one-game recording ``Engine``."""

    def __init__(
        self, num_players: int, rules: UnoRules, human: int, agents: list[Any], names: list[str], seed: int | None
    ) -> None:
        self.lock = threading.Lock()
        self.rules = rules
        self.num_players = num_players
        self.human = human
        self.agents = agents
        self.names = names
        self.engine = Engine(1, num_players, rules, seed=seed, record=True)
        self.rng = np.random.default_rng(seed)
        self.moves = 0
        self.touched = time.monotonic()

    @property
    def over(self) -> bool:
        """Whether the episode (round, or match with ``episode='match'``) has ended."""
        return bool(self.engine.terminated[0] or self.engine.truncated[0])

    def _events(self, start: int = 0) -> tuple[list[dict[str, Any]], list[int], int]:
        """The log from event ``start`` on (redacted), the last round's winners, the event count."""
        events = self.engine.record(0)["events"]
        ends = [e for e in events if e["type"] in ("round_end", "match_end")]
        winners = list(ends[-1]["winners"]) if ends else []
        start = max(start, len(events) - MAX_LOG_EVENTS)
        return [public_event(e, self.human, self.names) for e in events[start:]], winners, len(events)

    def view(self, since: int = 0) -> dict[str, Any]:
        """The human seat's whole picture: table, legal moves when it is to act, the log from
        event ``since`` on (at most ``MAX_LOG_EVENTS``), and the result once over."""
        e = self.engine
        obs = e.observe(self.human)[0]
        table = seat_view(obs, self.human, self.num_players, self.names)
        current = int(e.current_player[0])
        yours = current == self.human and not self.over
        events, winners, total = self._events(since)
        out = {
            "table": table,
            "current_player": None if self.over else current,
            "your_turn": yours,
            "legal": [action_info(a) for a in np.flatnonzero(e.legal_mask[0])] if yours else [],
            "events": events,
            "event_count": total,
            "over": self.over,
            "moves": self.moves,
        }
        if self.over:
            out["winners"] = winners
            out["truncated"] = bool(e.truncated[0])
        return out

    def _check_running(self) -> None:
        if self.over:
            raise WebError(409, "the game is over: start a new game, or open its replay")

    def move(self, action: Any) -> None:
        """The human's action, checked against the legal mask; an illegal one changes nothing."""
        self._check_running()
        e = self.engine
        current = int(e.current_player[0])
        if current != self.human:
            raise WebError(
                409,
                f"it is not your turn: seat {current} ({self.names[current]}) is to act; POST /advance to let it move",
            )
        legal = np.flatnonzero(e.legal_mask[0])
        if action not in set(int(a) for a in legal):
            allowed = ", ".join(f"{int(a)} ({action_info(a)['name']})" for a in legal)
            raise WebError(422, f"action {action} is not legal now; legal actions: {allowed}")
        e.step(np.array([action], np.int64))
        self.moves += 1

    def advance(self) -> dict[str, Any]:
        """One agent's move (the seat to act when it is not the human's); returns what it did."""
        self._check_running()
        e = self.engine
        seat = int(e.current_player[0])
        if seat == self.human:
            raise WebError(409, "it is your turn: POST /move with one of the legal actions")
        agent = self.agents[seat]
        if hasattr(agent, "act_in"):
            action = int(agent.act_in(e, 0, self.rng))
        else:
            action = int(agent.act(e.observation, e.legal_mask, self.rng)[0])
        e.step(np.array([action], np.int64))
        self.moves += 1
        # Whose move it was is public; what it chose shows in the (redacted) events.
        return {"seat": seat, "name": self.names[seat]}

    def record(self) -> dict[str, Any]:
        """The finished game's record (it reveals every hand, so never while the game runs)."""
        if not self.over:
            raise WebError(409, "the record of a game is given only once the game is over (it shows every hand)")
        return self.engine.record(0)


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
        e = Engine(1, self.num_players, UnoRules.from_dict(rec["rules"]), seed=0, record=True)
        start = rec["start"]
        if "position" in start:
            rng_state = int(start["rng_state"]) if "rng_state" in start else None
            e.set_game(0, **start["position"], rng_state=rng_state)
        else:
            e.reset(rng_state=int(start["rng_state"]))
        self.engine, self.cursor = e, 0

    @property
    def length(self) -> int:
        """Number of actions, so frames run 0..length."""
        return len(self.record["actions"])

    def frame(self, k: int, viewer: int | None) -> dict[str, Any]:
        """The table after ``k`` actions, from seat ``viewer`` (None: omniscient), with the log."""
        if not 0 <= k <= self.length:
            raise WebError(422, f"frame must be in 0..{self.length} (this record has {self.length} actions), got {k}")
        if viewer is not None and not 0 <= viewer < self.num_players:
            raise WebError(
                422, f"seat must be in 0..{self.num_players - 1} or omitted for the omniscient view, got {viewer}"
            )
        if k < self.cursor:
            self._restart()
        e = self.engine
        while self.cursor < k:
            e.step(np.array([self.record["actions"][self.cursor]], np.int64))
            self.cursor += 1
        events = e.record(0)["events"]
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
            "events": [public_event(ev, viewer, self.names) for ev in events[-MAX_LOG_EVENTS:]],
            "event_count": len(events),
            "over": bool(e.terminated[0] or e.truncated[0]),
        }


def check_record(record: Any) -> dict[str, Any]:
    """A record dict whose shape is right and that replays to its own events; else a 422."""
    if not isinstance(record, dict):
        raise WebError(422, f"a record is a JSON object, got {type(record).__name__}")
    missing = [k for k in ("num_players", "rules", "start", "actions", "events") if k not in record]
    if missing:
        raise WebError(422, f"a record needs the keys num_players, rules, start, actions, events; missing {missing}")
    n = record["num_players"]
    if not isinstance(n, int) or isinstance(n, bool) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise WebError(422, f"record num_players must be an integer in {MIN_PLAYERS}..{MAX_PLAYERS}, got {n!r}")
    actions = record["actions"]
    if not isinstance(actions, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in actions):
        raise WebError(422, "record actions must be a list of integer action ids")
    if len(actions) > MAX_REPLAY_ACTIONS:
        raise WebError(413, f"record has {len(actions)} actions; the viewer takes at most {MAX_REPLAY_ACTIONS}")
    if not isinstance(record["rules"], dict) or not isinstance(record["start"], dict):
        raise WebError(422, "record rules and start must be JSON objects")
    try:
        replay(record)
    except Exception as exc:  # any fault of the record (bad rules, position, action) is the client's
        raise WebError(422, f"not a valid game record: {exc}") from None
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
                raise WebError(
                    503,
                    f"the server holds its maximum of {self.capacity} {self.kind}s; try again when "
                    f"some expire (after {self.ttl / 60:g} minutes unused) or end one",
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
                raise WebError(
                    404,
                    f"no {self.kind} with id {key!r}: it never existed, was ended, or expired after "
                    f"{self.ttl / 60:g} minutes without a request",
                )
            item.touched = self.clock()  # type: ignore[attr-defined]
            self._items.move_to_end(key)
        return item

    def remove(self, key: str) -> None:
        """Forget ``key``; 404 when unknown."""
        with self._lock:
            if self._items.pop(key, None) is None:
                raise WebError(404, f"no {self.kind} with id {key!r}")
