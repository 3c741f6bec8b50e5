"""``uno-mcp``: an MCP server that seats a language-model client at an UNO table.

``UnoGames`` (``uno_web.mcp_games``) holds the games and does the work without the SDK;
``build_server`` serves its tools (``uno_web.mcp_tools.UnoTools``) with the ``mcp`` SDK's
``MCPServer``; ``main`` serves that over stdio or streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import tyro

import uno_env
from uno_env.compile_notice import announce_compiling

from . import mcp_games
from .mcp_games import *  # noqa: F403  # the games and the limits, exported here as before the split
from .mcp_games import MAX_REQUEST_BYTES, UnoGames
from .session import owner_agents

__all__ = [*mcp_games.__all__, "build_server", "main"]


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
