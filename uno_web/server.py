"""``uno-web``: the web table (play against any agents) and the replay viewer, served by FastAPI.

The browser only ever receives what the human seat may see (views from ``Engine.observe(seat)``,
the log with other seats' cards removed, a game's record once it is over).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from collections.abc import Iterator, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import tyro
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agents.registry import (
    BASELINES,
    MAX_REMOTE_MS,
    MAX_REMOTE_ROLLOUTS,
    SEARCHES,
    agent_names,
    make_agent,
)
from uno_env import PRESETS, UnoRules, parse_rules
from uno_env.compile_notice import announce_compiling
from uno_env.rules import MAX_PLAYERS, MIN_PLAYERS

from .games import MAX_GAME_ACTIONS, Game, Replay, Store, open_game
from .session import STATUS, Session, SessionError, build_agents, owner_agents, shown

STATIC = Path(__file__).parent / "static"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_BODY = 16 * 1024  # every request but a record upload is a few hundred bytes
MAX_RECORD_BODY = 4 * 1024 * 1024  # a 20,000-action record is about 1.5 MB of JSON
MAX_TURNS = MAX_GAME_ACTIONS
MAX_TARGET_POINTS = 10_000
MAX_GAMES = 10_000  # --max-games: each live game holds up to a few MB at its action limit
MAX_IDLE_MINUTES = 24 * 60.0
MAX_JSON_DEPTH = 32  # a record nests 5 deep; anything deeper is not one of ours
BODY_TIMEOUT_S = 10.0  # a body not complete by then is dropped (a slow client holds no worker)
AGENT_WORKERS = 2  # agents think on these threads only, so slow ones cannot starve other requests
STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")
_STRING_RE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
log = logging.getLogger("uno_web")
# The first event number the client has not seen yet (responses carry the log from there on).
Since = Annotated[int, Query(ge=0, description="first event number wanted in the log")]


class NewGame(BaseModel):
    """Body of ``POST /api/games``."""

    model_config = ConfigDict(extra="forbid")
    players: StrictInt = Field(2, description="number of players, you included (2-10)")
    seat: StrictInt = Field(0, description="your seat, 0..players-1")
    agents: list[str] = Field(["heuristic"], description="one agent for every other seat, or one per other seat")
    preset: str = "classic"
    options: dict[str, Any] = Field(default_factory=dict, description="rule options over the preset")
    seed: StrictInt | None = Field(None, description="seed of the deal and the agents; random when null")


class Move(BaseModel):
    """Body of ``POST /api/games/{id}/move``."""

    model_config = ConfigDict(extra="forbid")
    action: StrictInt


def _ok(payload: Any) -> Response:
    """A 200 JSON response of plain data, bypassing FastAPI's per-field encoder (the views are
    already plain ints, strings and lists; the encoder cost more than the game step)."""
    return Response(json.dumps(payload, separators=(",", ":")), media_type="application/json")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers={"Cache-Control": "no-store"})


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = [str(x) for x in err.get("loc", ()) if x != "body"]
        if err.get("type") == "json_invalid":
            parts.append("the request body is not valid JSON")
        elif err.get("type") == "extra_forbidden":
            parts.append(f"unknown field {'.'.join(loc)!r}")
        elif not loc and err.get("type") in ("model_attributes_type", "dict_type"):
            parts.append("the request body must be a JSON object (sent with Content-Type: application/json)")
        elif err.get("type") == "missing":
            parts.append(f"missing field {'.'.join(loc) or 'body'!r}")
        else:
            parts.append(f"{'.'.join(loc) or 'body'}: {err.get('msg')} (got {shown(err.get('input'))})")
    return "; ".join(parts) or "invalid request"


# Everything is served from here: the policy makes any CDN or inline script fail loudly, and
# no other site may frame the page (a framed table could be clicked through by a hostile page).
SECURITY_HEADERS = (
    ("content-security-policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
)


def json_depth(body: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (strings skipped), without parsing it:
    Python's parser recurses, so a deep body must be refused before it reaches the parser."""
    bare = np.frombuffer(_STRING_RE.sub(b'""', body), np.uint8)
    if not bare.size:
        return 0
    steps = ((bare == ord("[")) | (bare == ord("{"))).astype(np.int32)
    steps -= ((bare == ord("]")) | (bare == ord("}"))).astype(np.int32)
    return int(np.cumsum(steps).max())


def cross_site_reason(scope: dict) -> str | None:
    """Why a state-changing request may come from another website's page, or None when it cannot."""
    # Any page can make the browser send a "simple" POST (a form, text/plain) without asking, but
    # not JSON to another origin without a CORS preflight, which this server never grants.
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        return (
            f"{scope['method']} requests must be sent with Content-Type: application/json "
            f"(got {ctype or 'none'}), so that another website's page cannot send them"
        )
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"request from another website refused (Sec-Fetch-Site: {site}); use this server's own page"
    origin = headers.get("origin")
    if origin is not None:
        host = headers.get("host", "")
        scheme = scope.get("scheme", "http")
        if origin.lower() != f"{scheme}://{host}".lower():
            return f"request from another website refused (Origin {origin!r} is not this server, {scheme}://{host})"
    return None


class Guard:
    """ASGI middleware in front of the app: refuse state-changing requests another website's
    page could send (403), bodies over the limit (413), nested too deep (422) or not complete
    within ``BODY_TIMEOUT_S`` (408), before the app reads them; add the security headers to
    every response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        api = path.startswith("/api/")

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS]
                if api:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        async def refuse(status: int, message: str) -> None:
            await _error(status, message)(scope, receive, send_with_headers)

        if scope["method"] in STATE_CHANGING:
            reason = cross_site_reason(scope)
            if reason:
                await refuse(403, reason)
                return
        limit = MAX_RECORD_BODY if path == "/api/replays" else MAX_BODY
        chunks, size, more = [], 0, True
        deadline = asyncio.get_running_loop().time() + BODY_TIMEOUT_S
        while more:
            try:
                message = await asyncio.wait_for(receive(), deadline - asyncio.get_running_loop().time())
            except (asyncio.TimeoutError, ValueError):
                await refuse(408, f"the request body did not arrive within {BODY_TIMEOUT_S:g} s")
                return
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > limit:
                await refuse(413, f"request body over {limit} bytes (the limit for {path})")
                return
        body = b"".join(chunks)
        if body and json_depth(body) > MAX_JSON_DEPTH:
            await refuse(422, f"the request body nests arrays/objects deeper than {MAX_JSON_DEPTH} levels")
            return
        replayed = False

        async def replay_body() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay_body, send_with_headers)


def _record_from_body(body: bytes, index: int) -> Any:
    """One record from a JSON body, or record number ``index`` (from 0) of JSON Lines
    (``evaluate.py --save-games`` writes games.jsonl, one round per line)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise SessionError("the record must be UTF-8 JSON text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise SessionError(f"the request body is not valid JSON: {exc}") from None
    if not 0 <= index < len(lines):
        raise SessionError(f"index must be 0..{len(lines) - 1} for these {len(lines)} JSON Lines records, got {index}")
    try:
        return json.loads(lines[index])
    except json.JSONDecodeError as exc:
        raise SessionError(f"line {index + 1} of the JSON Lines body is not valid JSON: {exc}") from None


@contextmanager
def holding(item: Any, wait_s: float = 1.0) -> Iterator[None]:
    """Hold ``item.lock`` for a request thread, or 409 when it stays busy (an agent of this
    game is thinking): a request thread never waits long on one game."""
    if not item.lock.acquire(timeout=wait_s):
        raise SessionError(
            "this game is busy (an agent is choosing its move); ask again when /advance returns", "conflict"
        )
    try:
        yield
    finally:
        item.lock.release()


@dataclass
class Settings:
    """What a server holds and for how long; ``extra_agents`` maps labels given at start to agents."""

    max_games: int = 500
    max_replays: int = 100
    idle_minutes: float = 30.0
    extra_agents: dict[str, Any] = field(default_factory=dict)
    allowed_hosts: Sequence[str] | None = None
    allow_other_table: bool = False  # --allow-other-table: models play tables their cards do not name


_warm = False


def warm_up() -> None:
    """Compile (or load from numba's cache) the engine's and agents' kernels once, in this thread."""
    # The engine seals its compiled driver after the first specialisation: two request threads
    # compiling at once race, and the loser raises "compilation disabled".
    global _warm
    if _warm:
        return
    rules = parse_rules("classic")
    # Each search kind with a small budget: its kernels compile here, not in a request.
    for spec in [*BASELINES, *(f"{kind}:8" for kind in SEARCHES)]:
        agent = make_agent(spec, rules)
        game = Game(Session(rules, 0, [agent, agent], seed=0))
        for _ in range(6):
            if game.over:
                break
            game.engine.observe(0)
            game.view()
            game.session.seat = 1 - int(game.engine.current_player[0])  # let the agent move every time
            game.advance()
    _warm = True


def create_app(settings: Settings | None = None) -> FastAPI:
    """The ASGI app: API, static page and the safety middleware."""
    s = settings or Settings()
    warm_up()
    games: Store[Game] = Store("game", s.max_games, s.idle_minutes * 60)
    replays: Store[Replay] = Store("replay", s.max_replays, s.idle_minutes * 60)
    app = FastAPI(title="uno-web", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.games, app.state.replays, app.state.settings = games, replays, s

    @app.exception_handler(SessionError)
    async def _refused(request: Request, exc: SessionError) -> JSONResponse:
        return _error(STATUS[exc.kind], exc.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            return _error(
                404, f"no such page or endpoint: {request.method} {request.url.path} (the API is under /api/)"
            )
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        # A fault (say an agent that raises) ends this request only; other games hold their own state.
        log.error("uno-web: %s %s failed", request.method, request.url.path, exc_info=exc)
        return _error(
            500,
            f"internal error while serving {request.method} {request.url.path}: "
            f"{type(exc).__name__}; other games are unaffected",
        )

    app.add_middleware(Guard)
    if s.allowed_hosts:
        # A page on another site that rebinds its name to 127.0.0.1 sends its own Host header.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(s.allowed_hosts))

    offered = [*agent_names(), *s.extra_agents]

    # Agents think on their own few threads: however many games wait for an agent, the request
    # threads stay free for everything else (a page, a human move, another game's view).
    agent_pool = ThreadPoolExecutor(AGENT_WORKERS, thread_name_prefix="uno-web-agent")
    app.state.agent_pool = agent_pool

    pending: set[str] = set()  # games with an agent move queued or under way
    pending_lock = threading.Lock()

    def game_of(game_id: str) -> Game:
        if not _ID_RE.fullmatch(game_id):
            raise SessionError("a game id is 1-64 characters of A-Z, a-z, 0-9, _ and -", "malformed")
        return games.get(game_id)

    def replay_of(replay_id: str) -> Replay:
        if not _ID_RE.fullmatch(replay_id):
            raise SessionError("a replay id is 1-64 characters of A-Z, a-z, 0-9, _ and -", "malformed")
        return replays.get(replay_id)

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/config")
    def config() -> Any:
        return {
            "presets": {k: v for k, v in PRESETS.items()},
            "options": UnoRules().to_dict(),
            "agents": offered,
            "search_limits": {"rollouts": MAX_REMOTE_ROLLOUTS, "ms": MAX_REMOTE_MS},
            "players": [MIN_PLAYERS, MAX_PLAYERS],
            "idle_minutes": s.idle_minutes,
        }

    @app.post("/api/games")
    def new_game(body: NewGame) -> Any:
        n = body.players
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise SessionError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {n}")
        if not 0 <= body.seat < n:
            raise SessionError(f"seat must be 0..{n - 1} for {n} players, got {body.seat}")
        if body.preset not in PRESETS:
            raise SessionError(f"unknown preset {body.preset!r}; presets are {list(PRESETS)}")
        if body.seed is not None and not 0 <= body.seed < 2**63:
            raise SessionError(f"seed must be an integer in 0..2**63-1 or null, got {body.seed}")
        try:
            rules = parse_rules({**PRESETS[body.preset], **body.options})
        except (ValueError, TypeError) as exc:
            raise SessionError(f"bad rule options: {exc}") from None
        if rules.open_hands:
            raise SessionError("option open_hands is not offered at the web table (it would show every hand)")
        if rules.max_turns is None or rules.max_turns > MAX_TURNS:
            # A game's record grows with every action: the limit keeps each game's memory bounded.
            raise SessionError(f"option max_turns must be 1..{MAX_TURNS} at the web table, got {rules.max_turns}")
        if rules.target_points > MAX_TARGET_POINTS:
            raise SessionError(
                f"option target_points must be 1..{MAX_TARGET_POINTS} at the web table, got {rules.target_points}"
            )
        if rules.illegal_action != "raise":
            raise SessionError("option illegal_action must be 'raise' at the web table: illegal moves are refused")
        agents, labels = build_agents(
            body.agents, rules, n, body.seat, extra=s.extra_agents, allow_other_table=s.allow_other_table
        )
        game = open_game(rules, body.seat, agents, labels, body.seed)
        names = game.names
        game_id = games.add(game)
        with game.lock:
            return _ok({"game_id": game_id, "names": names, "rules": rules.to_dict(), **game.view()})

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str, since: Since = 0) -> Any:
        game = game_of(game_id)
        with holding(game):
            return _ok(game.view(since))

    @app.post("/api/games/{game_id}/move")
    def move(game_id: str, body: Move, since: Since = 0) -> Any:
        game = game_of(game_id)
        with holding(game):
            game.move(body.action)
            return _ok(game.view(since))

    @app.post("/api/games/{game_id}/advance")
    async def advance(game_id: str, since: Since = 0) -> Any:
        game = game_of(game_id)
        with pending_lock:
            if game_id in pending:
                raise SessionError("an agent move of this game is already under way; wait for its answer", "conflict")
            pending.add(game_id)

        def think() -> Response:
            with game.lock:
                mover = game.advance()
                return _ok({"mover": mover, **game.view(since)})

        try:
            return await asyncio.wrap_future(agent_pool.submit(think))
        finally:
            with pending_lock:
                pending.discard(game_id)

    @app.get("/api/games/{game_id}/record")
    def record(game_id: str) -> Any:
        game = game_of(game_id)
        with holding(game):
            return _ok(game.record())

    @app.post("/api/games/{game_id}/replay")
    def game_replay(game_id: str) -> Any:
        game = game_of(game_id)
        with holding(game):
            rec = game.record()
        r = Replay(rec)
        r.names = game.names
        return {"replay_id": replays.add(r), "length": r.length, "num_players": r.num_players, "names": r.names}

    @app.delete("/api/games/{game_id}")
    def end_game(game_id: str) -> Any:
        game_of(game_id)
        games.remove(game_id)
        return {"ended": game_id}

    @app.delete("/api/replays/{replay_id}")
    def end_replay(replay_id: str) -> Any:
        replay_of(replay_id)
        replays.remove(replay_id)
        return {"ended": replay_id}

    @app.api_route("/favicon.ico", methods=["GET", "HEAD"], include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.post("/api/replays")
    async def new_replay(request: Request, index: int = 0) -> Any:
        rec = _record_from_body(await request.body(), index)
        r = await run_in_threadpool(Replay, rec)  # replaying a long record takes ~0.2 s: off the event loop
        return {"replay_id": replays.add(r), "length": r.length, "num_players": r.num_players, "names": r.names}

    @app.get("/api/replays/{replay_id}/frames/{k}")
    def frame(replay_id: str, k: int, seat: int | None = None) -> Any:
        r = replay_of(replay_id)
        with holding(r):
            return _ok(r.frame(k, seat))

    return app


HELP = """Serve the UNO web table (play against agents) and the replay viewer.

    uno-web                                      # http://127.0.0.1:8000, this machine only
    uno-web --agent mine=runs/x/model.zip        # also offer your own model at the table
    uno-web --port 8080 --max-games 100"""


@dataclass
class Args:
    """Command-line options of ``uno-web``."""

    host: str = "127.0.0.1"
    """address to bind; the default serves this machine only (0.0.0.0 exposes it to the network)"""
    port: int = 8000
    """port to listen on"""
    agent: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """an extra agent offered at the table, LABEL=SPEC (a saved model: mine=runs/x/model.zip); repeat for more"""
    max_games: int = 500
    """live games held at once (a new game beyond it gets 503)"""
    idle_minutes: float = 30.0
    """a game or replay with no request for this long is dropped"""
    allow_other_table: bool = False
    """let --agent models play rules or a table size their card says they were not trained for"""


def parse_args(argv: Sequence[str] | None = None) -> tuple[Args, dict[str, Any]]:
    """The options and the ``--agent`` agents by label; ``ValueError`` saying what is wrong."""
    args = tyro.cli(Args, args=argv, prog="uno-web", description=HELP)
    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1..65535, got {args.port}")
    if not 1 <= args.max_games <= MAX_GAMES or not 0 < args.idle_minutes <= MAX_IDLE_MINUTES:
        raise ValueError(f"--max-games must be 1..{MAX_GAMES} and --idle-minutes in (0, {MAX_IDLE_MINUTES}]")
    extra = owner_agents(args.agent)
    return args, extra


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``uno-web``: serve until interrupted; 2 on bad options."""
    import uvicorn

    announce_compiling("uno-web")
    try:
        args, extra = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write(f"uno-web: error: {exc}\n")
        return 2
    local = args.host in LOCAL_HOSTS
    hosts = None if not local else [*LOCAL_HOSTS, "[::1]"]
    app = create_app(
        Settings(
            max_games=args.max_games,
            idle_minutes=args.idle_minutes,
            extra_agents=extra,
            allowed_hosts=hosts,
            allow_other_table=args.allow_other_table,
        )
    )
    where = "this machine only" if local else "EVERY NETWORK INTERFACE: anyone who can reach this port can play"
    print(f"uno-web: serving http://{args.host}:{args.port}/ ({where})", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
