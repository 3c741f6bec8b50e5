"""The games of ``uno-mcp``: ``UnoGames`` holds them and does each tool's work, without the SDK.

``uno_web.mcp_tools`` turns its methods into the SDK's tools and ``uno_web.mcp`` serves them; both
import this module, which imports neither.
"""

from __future__ import annotations

import functools
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from uno_env.seat_view import seat_view
from uno_env.text import engine_prompt, rules_text

from .games import MAX_GAME_ACTIONS
from .session import (
    HINT_ROLLOUTS,
    MAX_HINT_ROLLOUTS,
    MAX_MOVE_CHARS,
    MAX_SPEC_CHARS,
    Session,
    SessionError,
    check_int,
    offered_agents,
    read_rules,
    shown,
)

__all__ = [
    "CALL_DECISIONS",
    "CALL_SECONDS",
    "IDLE_MINUTES",
    "MAX_GAMES",
    "MAX_MOVE_CHARS",
    "MAX_RECORD_PAGE",
    "MAX_REQUEST_BYTES",
    "MAX_SPEC_CHARS",
    "VIEW_EVENTS",
    "UnoGames",
]

MAX_GAMES = 64  # games kept at once; end_game frees one
IDLE_MINUTES = 30.0  # a game unused this long is dropped when a new game needs its room
VIEW_EVENTS = 40  # events of the round a view shows; record pages through the rest
MAX_RECORD_PAGE = 500
# Every tool call is a few hundred bytes: a bigger request (HTTP body or stdio line) is refused unread.
MAX_REQUEST_BYTES = 64 * 1024
# One call's work: the opponents make at most this many decisions, and begin none after this many
# seconds; then the call answers and resume goes on (an elimination match can run thousands).
CALL_DECISIONS = 200
CALL_SECONDS = 10.0
DEFAULT_OPPONENTS = ("heuristic",)


def _game_id(game_id: Any) -> str:
    if not isinstance(game_id, str):
        raise SessionError(f"game_id is the text new_game gave, got {type(game_id).__name__} {shown(game_id)}")
    return game_id


def _locked(method: Any) -> Any:
    """``method`` under the games' lock: over HTTP the SDK runs tool calls on worker threads."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return call


class UnoGames:
    """The games of one server; each method raises ``SessionError`` for a bad call.

    ``extra``: agents the server's owner loaded (``owner_agents``), which a call names by label.
    ``single_client``: one client holds every game (stdio), so a refusal may list them all; else
    (HTTP) a game belongs to the MCP session that dealt it (``owner``, None without one), its id is
    unguessable, and a refusal lists only the caller's own games.
    ``call_decisions``, ``call_seconds``: one call's budget of opponent decisions and seconds."""

    def __init__(
        self,
        extra: Mapping[str, Any] | None = None,
        *,
        single_client: bool = True,
        call_decisions: int = CALL_DECISIONS,
        call_seconds: float = CALL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.extra = dict(extra or {})
        self.single_client = single_client
        self.call_decisions, self.call_seconds, self.clock = call_decisions, call_seconds, clock
        self.games: dict[str, Session] = {}
        self.owners: dict[str, str | None] = {}
        self.touched: dict[str, float] = {}
        self.lock = threading.RLock()  # one call at a time: a game's engine is not shared between threads

    def _mine(self, owner: str | None) -> list[str]:
        """The ids of ``owner``'s games, as a refusal may list them (none for an anonymous HTTP caller)."""
        if not self.single_client and owner is None:
            return []
        return sorted(g for g, o in self.owners.items() if self.single_client or o == owner)

    def session(self, game_id: Any, owner: str | None = None) -> Session:
        """The game of ``game_id`` if ``owner`` may reach it; ``SessionError`` naming only the caller's games otherwise."""
        game_id = _game_id(game_id)
        if game_id not in self.games or not (self.single_client or self.owners[game_id] in (None, owner)):
            mine = self._mine(owner)
            known = f"your games are: {', '.join(mine)}" if mine else "start one with new_game"
            raise SessionError(f"no game {shown(game_id)} of yours; {known}", "unknown")
        self.touched[game_id] = self.clock()
        return self.games[game_id]

    def _run_agents(self, s: Session) -> None:
        s.run_agents(self.call_decisions, self.call_seconds, self.clock)

    def _make_room(self) -> None:
        """When ``MAX_GAMES`` are open, drop those unused for ``IDLE_MINUTES``; ``SessionError`` when still full."""
        if len(self.games) >= MAX_GAMES:
            now = self.clock()
            for game_id in [g for g, t in self.touched.items() if now - t > IDLE_MINUTES * 60]:
                self._forget(game_id)
        if len(self.games) >= MAX_GAMES:
            raise SessionError(
                f"{MAX_GAMES} games are open; end one with end_game, or wait: a game unused for "
                f"{IDLE_MINUTES:g} minutes is dropped when a new one needs its room",
                "full",
            )

    def _forget(self, game_id: str) -> None:
        del self.games[game_id], self.owners[game_id], self.touched[game_id]

    def offered(self) -> str:
        """The agent names a call may give, for descriptions and refusals."""
        return offered_agents(self.extra)

    @_locked
    def new_game(
        self, opponents: Any = None, rules: Any = "classic", seat: Any = 0, seed: Any = 0, owner: str | None = None
    ) -> dict[str, Any]:
        """Deal a game; its id and state."""
        self._make_room()
        # A tool call is untrusted: it names registry agents or the owner's labels, never a file, module or model.
        session = Session.open(
            rules,
            seat,
            list(DEFAULT_OPPONENTS) if opponents is None else opponents,
            seed=seed,
            extra=self.extra,
            max_actions=MAX_GAME_ACTIONS,
            hints=True,
        )
        self._run_agents(session)
        game_id = "g" + secrets.token_urlsafe(12)  # unguessable: over HTTP the id is what reaches a game
        self.games[game_id], self.owners[game_id], self.touched[game_id] = session, owner, self.clock()
        return self._state(game_id, session)

    def _state(self, game_id: str, s: Session) -> dict[str, Any]:
        e = s.engine
        table = seat_view(e.observe(s.seat)[0], s.seat, s.num_players, s.names)
        text = engine_prompt(e, 0, s.seat, s.names, VIEW_EVENTS)
        if s.over:
            text += "\n" + self._result(s)
        elif s.agents_to_move:
            text += "\n" + self._still_to_move()
        return {
            "game_id": game_id,
            "seat": s.seat,
            "players": s.names,
            "done": s.over,
            "eliminated": s.eliminated,
            "others_to_move": s.agents_to_move,
            "winners": s.winners if s.over and not s.eliminated else [],
            "truncated": bool(e.truncated[0]) or s.at_limit,
            "rewards": [float(r) for r in e.rewards[0]],
            "scores": [int(p["score"]) for p in sorted(table["seats"], key=lambda p: p["seat"])],
            "your_turn": s.your_turn,
            "to_act": s.to_act,
            "legal_moves": self._moves(s),
            "moves_played": s.moves,
            "event_count": s.event_count,
            "view": text,
        }

    @staticmethod
    def _moves(s: Session) -> list[dict[str, Any]]:
        return [{"number": m.number, "action": m.action, "name": m.label} for m in s.moves_list()]

    def _still_to_move(self) -> str:
        return (
            f"The other seats are still to move: this call's budget ({self.call_decisions} of their decisions, "
            f"none begun after {self.call_seconds:g} s) is spent. Call resume to let them go on."
        )

    @staticmethod
    def _result(s: Session) -> str:
        if s.eliminated:
            return "The game is over for you: your seat was eliminated from the match."
        if s.at_limit:
            return f"The game is over: it stopped at this table's limit of {s.max_actions} actions."
        if s.engine.truncated[0]:
            return "The game is over: it was cut off at the turn limit."
        return f"The game is over: you {'won' if s.seat in s.winners else 'lost'}."

    @_locked
    def view(self, game_id: Any, owner: str | None = None) -> dict[str, Any]:
        """The game's state: done, winners, points, the legal moves and the seat's text view."""
        return self._state(game_id, self.session(game_id, owner))

    @_locked
    def legal_moves(self, game_id: Any, owner: str | None = None) -> list[dict[str, Any]]:
        """The numbered legal moves of the seat (empty once the game is over)."""
        return self._moves(self.session(game_id, owner))

    def _check_running(self, game_id: str, s: Session) -> None:
        if s.over:
            raise SessionError(f"game {game_id} is over: {self._result(s)} Start another with new_game", "conflict")

    @_locked
    def play(self, game_id: Any, move: Any, owner: str | None = None) -> dict[str, Any]:
        """Play ``move`` (a number 1..k or a move's name); the opponents answer, within the call's budget; the new state."""
        s = self.session(game_id, owner)
        self._check_running(game_id, s)
        if s.agents_to_move:
            raise SessionError(f"it is not your turn: {self._still_to_move()}", "conflict")
        s.play(s.action_of(move))
        self._run_agents(s)
        return self._state(game_id, s)

    @_locked
    def resume(self, game_id: Any, owner: str | None = None) -> dict[str, Any]:
        """The opponents go on moving, within the call's budget, after a call that left them still to move."""
        s = self.session(game_id, owner)
        self._check_running(game_id, s)
        if s.your_turn:
            raise SessionError("it is your turn: play one of the legal moves", "conflict")
        self._run_agents(s)
        return self._state(game_id, s)

    @_locked
    def hint(self, game_id: Any, rollouts: Any = HINT_ROLLOUTS, owner: str | None = None) -> dict[str, Any]:
        """The fair search's move for the seat (it reads only what the seat sees); the game is unchanged."""
        s = self.session(game_id, owner)
        rollouts = check_int("rollouts", rollouts, 1, MAX_HINT_ROLLOUTS)
        action = s.hint(rollouts)
        move = next(m for m in s.moves_list() if m.action == action)
        return {"number": move.number, "action": move.action, "name": move.label, "rollouts": rollouts}

    @_locked
    def record(self, game_id: Any, since: Any = 0, limit: Any = 100, owner: str | None = None) -> dict[str, Any]:
        """Events ``since``.. (at most ``limit``) of the game as the seat saw them, each with its ``text``."""
        s = self.session(game_id, owner)
        since = check_int("since", since, 0)
        limit = check_int("limit", limit, 1, MAX_RECORD_PAGE)
        events = s.events(since, limit)
        end = since + len(events)
        return {
            "events": events,
            "since": since,
            "next": end if end < s.event_count else None,
            "total": s.event_count,
        }

    @staticmethod
    def rules(rules: Any = "classic") -> str:
        """The rules of ``rules`` (a preset name or JSON options over classic) in words."""
        return rules_text(read_rules(rules))

    @_locked
    def end_game(self, game_id: Any, owner: str | None = None) -> str:
        """Forget a game."""
        self.session(game_id, owner)
        self._forget(game_id)
        return f"game {game_id} ended"
