"""``uno-mcp``: an MCP server that seats a language-model client at an UNO table.

``UnoGames`` holds the games and does the work without the SDK; ``build_server`` wraps it in the
``mcp`` SDK's ``MCPServer``; ``main`` serves it over stdio or streamable HTTP on 127.0.0.1.
"""

# No ``from __future__ import annotations``: the SDK reads the tools' annotations, defined in
# build_server, at run time.
import functools
import itertools
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import tyro

import uno_env
from agents.registry import REMOTE_LIMITS, agent_names
from uno_env import UnoRules, parse_rules
from uno_env.compile_notice import announce_compiling
from uno_env.rules import MAX_PLAYERS, PRESETS
from uno_env.seat_view import seat_view
from uno_env.text import engine_prompt, rules_text

from .games import MAX_GAME_ACTIONS
from .session import (
    HINT_ROLLOUTS,
    MAX_HINT_ROLLOUTS,
    Session,
    SessionError,
    build_agents,
    check_int,
    owner_agents,
    shown,
)

__all__ = ["MAX_GAMES", "MAX_RECORD_PAGE", "VIEW_EVENTS", "UnoGames", "build_server", "main"]

MAX_GAMES = 64  # games kept at once; end_game frees one
VIEW_EVENTS = 40  # events of the round a view shows; record pages through the rest
MAX_RECORD_PAGE = 500
DEFAULT_OPPONENTS = ("heuristic",)


def _game_id(game_id: Any) -> str:
    if not isinstance(game_id, str):
        raise SessionError(
            f"game_id is the text new_game gave (like 'g1'), got {type(game_id).__name__} {shown(game_id)}"
        )
    return game_id


def _locked(method: Any) -> Any:
    """``method`` under the games' lock: over HTTP the SDK runs tool calls on worker threads."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return call


def _parsed_rules(rules: Any) -> UnoRules:
    """A tool call's ``rules`` (a preset name or JSON options over classic) read once, or ``SessionError``."""
    if not isinstance(rules, str | dict):
        raise SessionError(
            f"rules is a preset name ({', '.join(PRESETS)}) or JSON options over classic, got {shown(rules)}"
        )
    try:
        return parse_rules(rules)
    except (ValueError, TypeError) as exc:
        raise SessionError(str(exc)) from None


class UnoGames:
    """The games of one server; each method raises ``SessionError`` for a bad call.
    ``extra``: agents the server's owner loaded (``owner_agents``), which a call names by label."""

    def __init__(self, extra: Mapping[str, Any] | None = None) -> None:
        self.extra = dict(extra or {})
        self.games: dict[str, Session] = {}
        self._ids = itertools.count(1)
        self.lock = threading.RLock()  # one call at a time: a game's engine is not shared between threads

    def session(self, game_id: Any) -> Session:
        """The game of ``game_id``; ``SessionError`` naming the open games otherwise."""
        game_id = _game_id(game_id)
        if game_id not in self.games:
            known = ", ".join(sorted(self.games)) or "none (start one with new_game)"
            raise SessionError(f"no game {shown(game_id)}; the games are: {known}", "unknown")
        return self.games[game_id]

    def offered(self) -> str:
        """The agent names a call may give, for descriptions and refusals."""
        return ", ".join([*agent_names(), *self.extra])

    @_locked
    def new_game(self, opponents: Any = None, rules: Any = "classic", seat: Any = 0, seed: Any = 0) -> dict[str, Any]:
        """Deal a game; its id and state."""
        if len(self.games) >= MAX_GAMES:
            raise SessionError(f"{MAX_GAMES} games are open; end one with end_game first", "full")
        opponents = list(DEFAULT_OPPONENTS) if opponents is None else opponents
        if (
            not isinstance(opponents, list)
            or not 1 <= len(opponents) <= MAX_PLAYERS - 1
            or not all(isinstance(o, str) for o in opponents)
        ):
            raise SessionError(
                f"opponents is a list of 1 to {MAX_PLAYERS - 1} agent names ({self.offered()}, or "
                f"search:N), got {shown(opponents)}"
            )
        n = len(opponents) + 1
        seat = check_int("seat", seat, 0, n - 1)
        seed = check_int("seed", seed, 0, 2**63 - 1)
        parsed = _parsed_rules(rules)
        # A tool call is untrusted: it names registry agents or the owner's labels, never a file, module or model.
        agents, labels = build_agents(opponents, parsed, n, seat, extra=self.extra, what="opponents")
        session = Session(parsed, seat, agents, labels, seed, max_actions=MAX_GAME_ACTIONS, hints=True)
        session.run_agents()
        game_id = f"g{next(self._ids)}"
        self.games[game_id] = session
        return self._state(game_id, session)

    def _state(self, game_id: str, s: Session) -> dict[str, Any]:
        e = s.engine
        table = seat_view(e.observe(s.seat)[0], s.seat, s.num_players, s.names)
        text = engine_prompt(e, 0, s.seat, s.names, VIEW_EVENTS)
        if s.over:
            text += "\n" + self._result(s)
        return {
            "game_id": game_id,
            "seat": s.seat,
            "players": s.names,
            "done": s.over,
            "winners": s.winners if s.over else [],
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

    @staticmethod
    def _result(s: Session) -> str:
        if s.at_limit:
            return f"The game is over: it stopped at this table's limit of {s.max_actions} actions."
        if s.engine.truncated[0]:
            return "The game is over: it was cut off at the turn limit."
        return f"The game is over: you {'won' if s.seat in s.winners else 'lost'}."

    @_locked
    def view(self, game_id: Any) -> dict[str, Any]:
        """The game's state: done, winners, points, the legal moves and the seat's text view."""
        return self._state(game_id, self.session(game_id))

    @_locked
    def legal_moves(self, game_id: Any) -> list[dict[str, Any]]:
        """The numbered legal moves of the seat (empty once the game is over)."""
        return self._moves(self.session(game_id))

    @_locked
    def play(self, game_id: Any, move: Any) -> dict[str, Any]:
        """Play ``move`` (a number 1..k or a move's name); the opponents answer; the new state."""
        s = self.session(game_id)
        if s.over:
            raise SessionError(f"game {game_id} is over: {self._result(s)} Start another with new_game", "conflict")
        s.play(s.action_of(move))
        s.run_agents()
        return self._state(game_id, s)

    @_locked
    def hint(self, game_id: Any, rollouts: Any = HINT_ROLLOUTS) -> dict[str, Any]:
        """The fair search's move for the seat (it reads only what the seat sees); the game is unchanged."""
        s = self.session(game_id)
        rollouts = check_int("rollouts", rollouts, 1, MAX_HINT_ROLLOUTS)
        action = s.hint(rollouts)
        move = next(m for m in s.moves_list() if m.action == action)
        return {"number": move.number, "action": move.action, "name": move.label, "rollouts": rollouts}

    @_locked
    def record(self, game_id: Any, since: Any = 0, limit: Any = 100) -> dict[str, Any]:
        """Events ``since``.. (at most ``limit``) of the game as the seat saw them, each with its ``text``."""
        s = self.session(game_id)
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
        return rules_text(_parsed_rules(rules))

    @_locked
    def end_game(self, game_id: Any) -> str:
        """Forget a game."""
        self.session(game_id)
        del self.games[game_id]
        return f"game {game_id} ended"


def _arg(description: str, schema: dict[str, Any]) -> Any:
    """An argument the SDK passes as sent (``UnoGames`` checks it, with messages of its own),
    described by ``schema`` and ``description`` for the client."""
    from pydantic import Field

    return Field(description=description, json_schema_extra=schema)


def build_server(games: UnoGames | None = None) -> Any:
    """The MCP server (the official ``mcp`` SDK's ``MCPServer``) over ``games``."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.server.mcpserver.tools import Tool
        from pydantic import BaseModel, ConfigDict
    except ImportError as exc:
        raise ImportError("uno-mcp needs the mcp SDK: pip install 'uno_env[mcp]'") from exc

    games = games if games is not None else UnoGames()
    budget = (
        f"search with a budget up to {REMOTE_LIMITS['max_iterations']} rollouts or {REMOTE_LIMITS['max_ms']:g} ms "
        "(search:256, search:20ms)"
    )

    class LegalMove(BaseModel):
        number: int
        action: int
        name: str

    class GameState(BaseModel):
        game_id: str
        seat: int
        players: list[str]
        done: bool
        winners: list[int]
        truncated: bool
        rewards: list[float]
        scores: list[int]
        your_turn: bool
        to_act: int | None
        legal_moves: list[LegalMove]
        moves_played: int
        event_count: int
        view: str

    class Hint(BaseModel):
        number: int
        action: int
        name: str
        rollouts: int

    class RecordPage(BaseModel):
        events: list[dict[str, Any]]
        since: int
        next: int | None
        total: int

    def refusing(method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except SessionError as exc:  # the SDK shows a ToolError's message to the model
            raise ToolError(str(exc)) from exc

    game_id_arg = _arg("the game's id, as new_game gave it (like 'g1')", {"type": "string"})
    GameId = Annotated[Any, game_id_arg]
    Rules = Annotated[
        Any,
        _arg(
            f"a preset name ({', '.join(PRESETS)}) or a JSON object of rule options over classic",
            {"anyOf": [{"type": "string"}, {"type": "object"}]},
        ),
    ]
    Opponents = Annotated[
        Any,
        _arg(
            f'one registry agent per other seat, 1 to {MAX_PLAYERS - 1} (e.g. ["heuristic", "random"]): '
            f"{games.offered()}, or a {budget}",
            {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_PLAYERS - 1},
        ),
    ]
    Seat = Annotated[Any, _arg("your seat, 0 .. number of opponents (seats run clockwise)", {"type": "integer"})]
    Seed = Annotated[Any, _arg("seed of the deal and of the agents, an integer >= 0", {"type": "integer"})]
    MoveArg = Annotated[
        Any,
        _arg(
            "one legal move: its number (an integer from 1, as listed) or its name (e.g. 'play red 7', 'draw')",
            {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}]},
        ),
    ]
    Rollouts = Annotated[
        Any,
        _arg(
            f"the search's play-outs, 1..{MAX_HINT_ROLLOUTS} (more is stronger and slower)",
            {"type": "integer", "minimum": 1, "maximum": MAX_HINT_ROLLOUTS},
        ),
    ]
    Since = Annotated[Any, _arg("the first event number wanted (from 0)", {"type": "integer", "minimum": 0})]
    Limit = Annotated[
        Any,
        _arg(f"at most this many events, 1..{MAX_RECORD_PAGE}", {"type": "integer", "minimum": 1}),
    ]

    def new_game(opponents: Opponents = None, rules: Rules = "classic", seat: Seat = 0, seed: Seed = 0) -> GameState:
        """Deal a game: you at `seat`, one registry agent per other seat; they play until your turn."""
        return GameState(**refusing(games.new_game, opponents, rules, seat, seed))

    def view(game_id: GameId) -> GameState:
        """Your seat's state: done, winners, points, the numbered legal moves and the text view."""
        return GameState(**refusing(games.view, game_id))

    def legal_moves(game_id: GameId) -> list[LegalMove]:
        """Your legal moves: number, action id and name (none when it is not your turn)."""
        return [LegalMove(**m) for m in refusing(games.legal_moves, game_id)]

    def play(game_id: GameId, move: MoveArg) -> GameState:
        """Play one legal move, by its number or its name; the opponents answer; your new state."""
        return GameState(**refusing(games.play, game_id, move))

    def hint(game_id: GameId, rollouts: Rollouts = HINT_ROLLOUTS) -> Hint:
        """The fair search's suggested move for your seat (it reads only what you see)."""
        return Hint(**refusing(games.hint, game_id, rollouts))

    def record(game_id: GameId, since: Since = 0, limit: Limit = 100) -> RecordPage:
        """A page of the game's events as your seat saw them, each with a line of text; `next` pages on."""
        return RecordPage(**refusing(games.record, game_id, since, limit))

    def rules(rules: Rules = "classic") -> str:
        """The rules of a preset or option set, in words: the goal, the classic rules, what differs."""
        return str(refusing(games.rules, rules))

    def end_game(game_id: GameId) -> str:
        """Forget a game."""
        return str(refusing(games.end_game, game_id))

    def strict(fn: Any) -> Tool:
        """The tool of ``fn``, refusing an argument it does not name (a misspelled ``seed`` is not ignored)."""
        tool = Tool.from_function(fn)
        base = tool.fn_metadata.arg_model
        tool.fn_metadata.arg_model = type(
            f"{fn.__name__} arguments", (base,), {"model_config": ConfigDict(**base.model_config, extra="forbid")}
        )
        tool.parameters["additionalProperties"] = False
        return tool

    tools = [strict(fn) for fn in (new_game, view, legal_moves, play, hint, record, rules, end_game)]
    server = MCPServer(
        "uno",
        version=uno_env.__version__,
        tools=tools,
        log_level="WARNING",  # a refused call is the client's to read, not the server's log
        instructions=(
            "Play UNO: new_game seats you against registry agents; view shows your seat and numbers your legal "
            "moves; play takes one move by number or name; rules explains the rules; hint asks a fair search. "
            f"Opponents: {games.offered()}, or a {budget}"
        ),
    )
    return server


HELP = """Seat an MCP client (a language model with tools) at an UNO table against UNO agents.

    uno-mcp                                  # stdio: an MCP client launches it
    uno-mcp --transport http --port 8765     # streamable HTTP at http://127.0.0.1:8765/mcp
    uno-mcp --agent mine=runs/x/model.zip    # also offer your own model, by its label"""


@dataclass
class Args:
    """Command-line options of ``uno-mcp``."""

    transport: Literal["stdio", "http"] = "stdio"
    """stdio (an MCP client launches the server) or http (streamable HTTP on 127.0.0.1, this machine only)"""
    port: int = 8765
    """the HTTP port (with --transport http); the endpoint is http://127.0.0.1:PORT/mcp"""
    agent: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """an extra opponent a client may name, LABEL=SPEC (a saved model: mine=runs/x/model.zip); repeat for more"""


def parse_args(argv: Sequence[str] | None = None) -> tuple[Args, dict[str, Any]]:
    """The options and the ``--agent`` agents by label (tyro: unknown options are refused; --help
    prints help); ``ValueError`` saying what is wrong."""
    args = tyro.cli(Args, args=argv, prog="uno-mcp", description=HELP)
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1..65535, got {args.port}")
    return args, owner_agents(args.agent)


def main(argv: Sequence[str] | None = None) -> int:
    """``uno-mcp``: serve the tools over stdio or streamable HTTP on 127.0.0.1; 2 on bad options."""
    try:
        args, extra = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write(f"uno-mcp: error: {exc}\n")
        return 2
    announce_compiling("uno-mcp")
    server = build_server(UnoGames(extra))
    if args.transport == "http":
        sys.stderr.write(f"uno-mcp: serving http://127.0.0.1:{args.port}/mcp (this machine only)\n")
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
