"""``uno-mcp``: an MCP server that seats a language-model client at an UNO table.

``UnoGames`` holds the games and does the work without the SDK; ``build_server`` serves its
tools (``uno_web.mcp_tools.UnoTools``) with the ``mcp`` SDK's ``MCPServer``; ``main`` serves that
over stdio or streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import functools
import json
import secrets
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import tyro

import uno_env
from uno_env.compile_notice import announce_compiling
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
    owner_agents,
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
    "build_server",
    "main",
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


def build_server(games: UnoGames | None = None) -> Any:
    """The MCP server (the official ``mcp`` SDK's ``MCPServer``) with the tools of ``UnoTools`` over ``games``."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise ImportError("uno-mcp needs the mcp SDK: pip install 'uno_env[mcp]'") from exc
    from .mcp_tools import UnoTools

    host = UnoTools(games if games is not None else UnoGames())
    return MCPServer(
        "uno",
        version=uno_env.__version__,
        tools=host.tools(),
        log_level="WARNING",  # a refused call is the client's to read, not the server's log
        instructions=host.instructions(),
    )


def _rpc_error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _too_large(size: str) -> dict[str, Any]:
    return _rpc_error(
        -32600, f"a request is at most {MAX_REQUEST_BYTES} bytes (a tool call is a few hundred); got {size}"
    )


def read_message(line: bytes) -> tuple[Any, dict[str, Any] | None]:
    """One stdio line as ``(JSON-RPC message, None)``, or ``(None, error response)``: -32700 for text
    that is not JSON, -32600 for JSON that is no JSON-RPC message."""
    import mcp_types

    try:
        data = json.loads(line)
    except ValueError as exc:  # UnicodeDecodeError included
        return None, _rpc_error(-32700, f"parse error: the line is not JSON ({str(exc)[:80]})")
    try:
        return mcp_types.jsonrpc_message_adapter.validate_python(data, by_name=False), None
    except ValueError:
        request_id = data.get("id") if isinstance(data, dict) else None
        request_id = request_id if isinstance(request_id, int | str) and len(str(request_id)) <= 80 else None
        return None, _rpc_error(
            -32600, "invalid request: a line is one JSON-RPC 2.0 message (jsonrpc, method, id, params)", request_id
        )


@asynccontextmanager
async def stdio_streams(stdin: Any = None, stdout: Any = None) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport, reading at most ``MAX_REQUEST_BYTES`` a line and answering a line it
    cannot read (too long, not JSON, not JSON-RPC) with a JSON-RPC error instead of dropping it."""
    import anyio
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    read_writer, read_stream = create_context_streams[Any](0)
    write_stream, write_reader = create_context_streams[Any](0)
    out_lock = anyio.Lock()

    async def write(data: bytes) -> None:
        async with out_lock:
            await anyio.to_thread.run_sync(lambda: (stdout.write(data + b"\n"), stdout.flush()))

    async def readline(limit: int) -> bytes:
        return bytes(await anyio.to_thread.run_sync(stdin.readline, limit, abandon_on_cancel=True))

    async def reader() -> None:
        async with read_writer:
            while line := await readline(MAX_REQUEST_BYTES + 1):
                if len(line) > MAX_REQUEST_BYTES:
                    size = len(line)
                    while line and not line.endswith(b"\n"):  # skip the rest of it, a bounded piece at a time
                        line = await readline(MAX_REQUEST_BYTES)
                        size += len(line)
                    await write(json.dumps(_too_large(f"{size} bytes")).encode())
                    continue
                if not line.strip():
                    continue
                message, error = read_message(line)
                if error is not None:
                    await write(json.dumps(error).encode())
                    continue
                await read_writer.send(SessionMessage(message))

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                await write(session_message.message.model_dump_json(by_alias=True, exclude_unset=True).encode())

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        yield read_stream, write_stream
        tg.cancel_scope.cancel()


async def serve_stdio(server: Any) -> None:
    """Serve ``server`` (``build_server``) over this process's stdin and stdout."""
    wire = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the wire
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves
    async with stdio_streams(sys.stdin.buffer, wire) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


class BodyCap:
    """ASGI middleware: a request body over ``MAX_REQUEST_BYTES`` gets 413 with a JSON-RPC error that
    states the limit, before the SDK reads it (the SDK's own cap answers without the limit)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        declared = headers.get(b"content-length", b"").decode("latin-1")
        if declared.isascii() and declared.isdigit() and int(declared) > MAX_REQUEST_BYTES:
            await self._refuse(send, f"{declared} bytes")
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > MAX_REQUEST_BYTES:
                await self._refuse(send, f"more than {MAX_REQUEST_BYTES} bytes")
                return
        body, replayed = b"".join(chunks), False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(send: Any, size: str) -> None:
        body = json.dumps(_too_large(size)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def http_app(server: Any) -> Any:
    """The streamable-HTTP ASGI app of ``server`` behind ``BodyCap`` (the SDK checks Host and Origin)."""
    return BodyCap(server.streamable_http_app(host="127.0.0.1", max_request_body_size=MAX_REQUEST_BYTES))


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
    import anyio

    if args.transport == "http":
        import uvicorn

        server = build_server(UnoGames(extra, single_client=False))
        sys.stderr.write(f"uno-mcp: serving http://127.0.0.1:{args.port}/mcp (this machine only)\n")
        uvicorn.run(http_app(server), host="127.0.0.1", port=args.port, log_level="warning", access_log=False)
    else:
        anyio.run(serve_stdio, build_server(UnoGames(extra)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
