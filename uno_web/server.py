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
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import tyro
from fastapi import APIRouter, FastAPI, Query, Request
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
from .session import STATUS, Session, SessionError, owner_agents, shown

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


# Refusals name the fields of ``POST /api/games``'s body.
WEB_NAMES = {"num_players": "players", "opponents": "agents", "rules": "rule options"}


def web_table_rules(rules: UnoRules) -> None:
    """``SessionError`` for rules the web table does not offer, over the limits every table has."""
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


class AgentQueue:
    """Agents think on their own few threads: however many games wait for an agent, the request
    threads stay free for everything else (a page, a human move, another game's view)."""

    def __init__(self, workers: int = AGENT_WORKERS) -> None:
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="uno-web-agent")
        self.pending: set[str] = set()  # games with an agent move queued or under way
        self.lock = threading.Lock()

    async def run(self, game_id: str, think: Callable[[], Response]) -> Response:
        """``think`` on an agent thread; 409 while an agent move of ``game_id`` is queued or under way."""
        with self.lock:
            if game_id in self.pending:
                raise SessionError("an agent move of this game is already under way; wait for its answer", "conflict")
            self.pending.add(game_id)
        try:
            return await asyncio.wrap_future(self.pool.submit(think))
        finally:
            with self.lock:
                self.pending.discard(game_id)


async def _refused(request: Request, exc: SessionError) -> JSONResponse:
    return _error(STATUS[exc.kind], exc.message)


async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    return _error(422, _validation_message(exc))


async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    if exc.status_code == 404:
        return _error(404, f"no such page or endpoint: {request.method} {request.url.path} (the API is under /api/)")
    if exc.status_code == 405:
        return _error(405, f"{request.method} is not allowed on {request.url.path}")
    return _error(exc.status_code, str(exc.detail))


async def _crash(request: Request, exc: Exception) -> JSONResponse:
    # A fault (say an agent that raises) ends this request only; other games hold their own state.
    log.error("uno-web: %s %s failed", request.method, request.url.path, exc_info=exc)
    return _error(
        500,
        f"internal error while serving {request.method} {request.url.path}: "
        f"{type(exc).__name__}; other games are unaffected",
    )


def _checked_id(kind: str, value: str) -> str:
    if not _ID_RE.fullmatch(value):
        raise SessionError(f"a {kind} id is 1-64 characters of A-Z, a-z, 0-9, _ and -", "malformed")
    return value


def games_of(request: Request) -> Store[Game]:
    """The app's live games."""
    games: Store[Game] = request.app.state.games
    return games


def replays_of(request: Request) -> Store[Replay]:
    """The app's replays."""
    replays: Store[Replay] = request.app.state.replays
    return replays


def game_of(request: Request, game_id: str) -> Game:
    """The live game of ``game_id``; 400 for an id that cannot be one, 404 for an unknown one."""
    return games_of(request).get(_checked_id("game", game_id))


def replay_of(request: Request, replay_id: str) -> Replay:
    """The replay of ``replay_id``; 400 for an id that cannot be one, 404 for an unknown one."""
    return replays_of(request).get(_checked_id("replay", replay_id))


def _ended(store: Store[Any], kind: str, item_id: str) -> dict[str, str]:
    store.get(_checked_id(kind, item_id))  # 400 for a malformed id, 404 for an unknown or expired one
    store.remove(item_id)
    return {"ended": item_id}


def _replay_summary(request: Request, r: Replay) -> dict[str, Any]:
    return {"replay_id": replays_of(request).add(r), "length": r.length, "num_players": r.num_players, "names": r.names}


pages = APIRouter(include_in_schema=False)
api = APIRouter(prefix="/api")


@pages.api_route("/", methods=["GET", "HEAD"])
def index() -> FileResponse:
    """The table's page."""
    return FileResponse(STATIC / "index.html")


@pages.api_route("/favicon.ico", methods=["GET", "HEAD"])
def favicon() -> FileResponse:
    """The page's icon."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


@api.get("/config")
def config(request: Request) -> Any:
    """What a new game may choose: presets, options, agents, limits."""
    s: Settings = request.app.state.settings
    return {
        "presets": {k: v for k, v in PRESETS.items()},
        "options": UnoRules().to_dict(),
        "agents": [*agent_names(), *s.extra_agents],
        "search_limits": {"rollouts": MAX_REMOTE_ROLLOUTS, "ms": MAX_REMOTE_MS},
        "players": [MIN_PLAYERS, MAX_PLAYERS],
        "idle_minutes": s.idle_minutes,
    }


@api.post("/games")
def new_game(body: NewGame, request: Request) -> Any:
    """Deal a game of the body's table; its id, names, rules and first view."""
    s: Settings = request.app.state.settings
    if body.preset not in PRESETS:
        raise SessionError(f"unknown preset {body.preset!r}; presets are {list(PRESETS)}")
    game = open_game(
        {**PRESETS[body.preset], **body.options},
        body.seat,
        body.agents,
        body.players,
        seed=body.seed,
        extra=s.extra_agents,
        allow_other_table=s.allow_other_table,
        table_rules=web_table_rules,
        names=WEB_NAMES,
    )
    game_id = games_of(request).add(game)
    with game.lock:
        return _ok({"game_id": game_id, "names": game.names, "rules": game.rules.to_dict(), **game.view()})


@api.get("/games/{game_id}")
def get_game(request: Request, game_id: str, since: Since = 0) -> Any:
    """The human seat's view."""
    game = game_of(request, game_id)
    with holding(game):
        return _ok(game.view(since))


@api.post("/games/{game_id}/move")
def move(request: Request, game_id: str, body: Move, since: Since = 0) -> Any:
    """The human seat's action; the new view."""
    game = game_of(request, game_id)
    with holding(game):
        game.move(body.action)
        return _ok(game.view(since))


@api.post("/games/{game_id}/advance")
async def advance(request: Request, game_id: str, since: Since = 0) -> Any:
    """One agent's move, on an agent thread; who moved and the new view."""
    game = game_of(request, game_id)

    def think() -> Response:
        with game.lock:
            mover = game.advance()
            return _ok({"mover": mover, **game.view(since)})

    queue: AgentQueue = request.app.state.agent_queue
    return await queue.run(game_id, think)


@api.get("/games/{game_id}/record")
def record(request: Request, game_id: str) -> Any:
    """The finished game's record."""
    game = game_of(request, game_id)
    with holding(game):
        return _ok(game.record())


@api.post("/games/{game_id}/replay")
def game_replay(request: Request, game_id: str) -> Any:
    """A replay of the finished game."""
    game = game_of(request, game_id)
    with holding(game):
        rec = game.record()
    r = Replay(rec)
    r.names = game.names
    return _replay_summary(request, r)


@api.delete("/games/{game_id}")
def end_game(request: Request, game_id: str) -> Any:
    """Forget a game."""
    return _ended(games_of(request), "game", game_id)


@api.post("/replays")
async def new_replay(request: Request, index: int = 0) -> Any:
    """A replay of the record in the body (JSON, or record ``index`` of JSON Lines)."""
    rec = _record_from_body(await request.body(), index)
    r = await run_in_threadpool(Replay, rec)  # replaying a long record takes ~0.2 s: off the event loop
    return _replay_summary(request, r)


@api.delete("/replays/{replay_id}")
def end_replay(request: Request, replay_id: str) -> Any:
    """Forget a replay."""
    return _ended(replays_of(request), "replay", replay_id)


@api.get("/replays/{replay_id}/frames/{k}")
def frame(request: Request, replay_id: str, k: int, seat: int | None = None) -> Any:
    """The table after ``k`` actions, from ``seat`` (omitted: every hand shown)."""
    r = replay_of(request, replay_id)
    with holding(r):
        return _ok(r.frame(k, seat))


def create_app(settings: Settings | None = None) -> FastAPI:
    """The ASGI app: API, static page and the safety middleware."""
    s = settings or Settings()
    warm_up()
    app = FastAPI(
        title="uno-web",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        exception_handlers={
            SessionError: _refused,
            RequestValidationError: _invalid,
            StarletteHTTPException: _http,
            Exception: _crash,
        },
    )
    app.state.settings = s
    games: Store[Game] = Store("game", s.max_games, s.idle_minutes * 60)
    replays: Store[Replay] = Store("replay", s.max_replays, s.idle_minutes * 60)
    app.state.games, app.state.replays = games, replays
    app.state.agent_queue = AgentQueue()
    app.add_middleware(Guard)
    if s.allowed_hosts:
        # A page on another site that rebinds its name to 127.0.0.1 sends its own Host header.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(s.allowed_hosts))
    app.include_router(pages)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api)
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
