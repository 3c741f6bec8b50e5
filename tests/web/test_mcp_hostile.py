"""uno-mcp against a hostile client, through the mcp SDK's own client (in memory, over stdio and
over streamable HTTP on 127.0.0.1): size caps before parsing, one client's games its own, a bounded
amount of work per call, and refusals that say what was wrong briefly."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time

import anyio
import numpy as np
import pytest
from helpers import ROOT
from mcp import Client
from mcp.shared.exceptions import MCPError

import uno_web.session
from uno_env.text import BadReply, parse_reply
from uno_web.mcp import IDLE_MINUTES, MAX_GAMES, MAX_MOVE_CHARS, MAX_REQUEST_BYTES, UnoGames, build_server
from uno_web.session import SessionError

DASHES = ["\u2212", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\ufe63", "\uff0d"]
ELIMINATION = {"scoring": "elimination", "episode": "match", "target_points": 50}


def _run(script, games: UnoGames | None = None) -> None:
    """Run ``script(client, games)`` against a fresh server over the SDK's in-memory transport."""
    games = games if games is not None else UnoGames()

    async def main() -> None:
        with anyio.fail_after(300):
            async with Client(build_server(games)) as client:
                await script(client, games)

    anyio.run(main)


async def _call(client, tool: str, args: dict):
    """The structured state of a call that must succeed."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, result.content[0].text)
    return result.structured_content


def test_a_huge_move_is_refused_before_any_parser_reads_it(monkeypatch):
    async def script(client, games):
        state = await _call(client, "new_game", {"opponents": ["heuristic"], "seed": 5})
        game_id = state["game_id"]
        before = games.games[game_id].engine.snapshot().copy()

        def never(*args, **kwargs):
            raise AssertionError("the parser read a move over the cap")

        with monkeypatch.context() as m:
            m.setattr(uno_web.session, "parse_reply", never)
            for move in ("<think>" * (1_000_000 // 7), "1" * 1_000_000, "x" * (MAX_MOVE_CHARS + 1)):
                result = await client.call_tool("play", {"game_id": game_id, "move": move})
                text = result.content[0].text
                assert result.is_error and f"at most {MAX_MOVE_CHARS} characters; got {len(move)}" in text, text
                assert len(text) < 1000 and "…" in text
                assert np.array_equal(games.games[game_id].engine.snapshot(), before)
        # At the cap the move is read, and names nothing.
        result = await client.call_tool("play", {"game_id": game_id, "move": "x" * MAX_MOVE_CHARS})
        assert result.is_error and "names no legal move" in result.content[0].text
        assert (await _call(client, "view", {"game_id": game_id})) == state

    _run(script)


def test_dashes_are_refused_and_digits_read_as_the_chat_parser_reads_them():
    async def script(client, games):
        state = await _call(client, "new_game", {"opponents": ["heuristic"], "seed": 5})
        game_id = state["game_id"]
        session = games.games[game_id]
        before = session.engine.snapshot().copy()
        for dash in DASHES:
            for move in (f"{dash}1", f" {dash}2 "):
                result = await client.call_tool("play", {"game_id": game_id, "move": move})
                assert result.is_error and "a move number is an integer 1.." in result.content[0].text, move
                assert np.array_equal(session.engine.snapshot(), before), move
        # Digits of other scripts: play exactly when the chat parser reads a move from them.
        for move in ("\uff11", "\uff12", "\u0661", "\u00b2", "\uff11\uff10"):
            try:
                expected = parse_reply(move, session.moves_list())
            except BadReply:
                expected = None
            played = []
            step = session.step
            session.step = lambda action, played=played, step=step: played.append(action) or step(action)
            result = await client.call_tool("play", {"game_id": game_id, "move": move})
            session.step = step
            if expected is None:
                assert result.is_error, move
                assert np.array_equal(session.engine.snapshot(), before), move
            else:  # the seat's move is the first the call steps
                assert not result.is_error and played[:1] == [expected], move
                return

    _run(script)


def test_one_call_makes_a_bounded_number_of_opponent_decisions_and_resume_goes_on():
    async def script(client, games):
        state = await _call(client, "new_game", {"opponents": ["random"] * 9, "seat": 9, "seed": 3})
        game_id = state["game_id"]
        assert state["moves_played"] <= 2
        stopped = 0
        for _ in range(2000):
            if state["done"]:
                break
            before = state["moves_played"]
            if state["others_to_move"]:
                stopped += 1
                assert not state["your_turn"] and state["legal_moves"] == []
                assert "The other seats are still to move" in state["view"] and "Call resume" in state["view"]
                snapshot = games.games[game_id].engine.snapshot().copy()
                refused = await client.call_tool("play", {"game_id": game_id, "move": 1})
                assert refused.is_error and "Call resume" in refused.content[0].text
                assert np.array_equal(games.games[game_id].engine.snapshot(), snapshot)
                state = await _call(client, "resume", {"game_id": game_id})
                assert 1 <= state["moves_played"] - before <= 2
            else:
                assert state["your_turn"]
                refused = await client.call_tool("resume", {"game_id": game_id})
                assert refused.is_error and "it is your turn" in refused.content[0].text
                state = await _call(client, "play", {"game_id": game_id, "move": 1})
                assert 1 <= state["moves_played"] - before <= 3  # the move and two decisions
        assert state["done"] and stopped > 0

    _run(script, UnoGames(call_decisions=2))


def test_one_call_begins_no_decision_after_its_seconds():
    ticks = iter(range(10**9))  # a clock that moves one second each time it is read

    async def script(client, games):
        state = await _call(client, "new_game", {"opponents": ["random"] * 9, "seat": 9, "seed": 3})
        assert state["moves_played"] <= 3  # read at 1 s and 2 s it goes on; at 3 s, past 2.5 s, it stops
        stopped = 0
        for _ in range(200):
            before = state["moves_played"]
            if state["your_turn"]:
                state = await _call(client, "play", {"game_id": state["game_id"], "move": 1})
                assert state["moves_played"] - before <= 4
            else:
                stopped += 1
                state = await _call(client, "resume", {"game_id": state["game_id"]})
                assert 1 <= state["moves_played"] - before <= 3
            if state["done"] or stopped >= 3:
                break
        assert stopped >= 3

    _run(script, UnoGames(call_seconds=2.5, clock=lambda: float(next(ticks))))


def test_a_game_ends_for_a_seat_eliminated_from_the_match():
    async def script(client, games):
        state = await _call(client, "new_game", {"opponents": ["heuristic"] * 3, "rules": ELIMINATION, "seed": 0})
        game_id = state["game_id"]
        for _ in range(500):  # draw or pass whenever allowed: the seat loses points and goes out
            if state["done"]:
                break
            names = [m["name"] for m in state["legal_moves"]]
            move = "draw" if "draw" in names else "pass" if "pass" in names else 1
            state = await _call(client, "play", {"game_id": game_id, "move": move})
        session = games.games[game_id]
        assert state["done"] and state["eliminated"] and session.eliminated
        assert not session.engine.terminated[0]  # the match goes on without the seat, unplayed
        assert "your seat was eliminated" in state["view"] and state["winners"] == []
        assert state["legal_moves"] == [] and state["to_act"] is None and not state["others_to_move"]
        for tool, args in (("play", {"move": 1}), ("resume", {}), ("hint", {})):
            over = await client.call_tool(tool, {"game_id": game_id, **args})
            assert over.is_error and "eliminated" in over.content[0].text, tool

    _run(script)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_url():
    """``uno-mcp --transport http`` on a free port of 127.0.0.1, as its command line starts it."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "uno_web.mcp", "--transport", "http", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(1200):  # up to two minutes for the server to import and listen
            if server.poll() is not None:
                raise AssertionError(f"uno-mcp exited: {server.stderr.read().decode() if server.stderr else ''}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("uno-mcp --transport http did not listen within two minutes")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a server stuck in a call does not outlive the tests
            server.kill()
            server.wait(timeout=30)


def test_a_second_http_client_neither_sees_nor_touches_the_first_ones_games(http_url):
    async def run() -> None:
        with anyio.fail_after(240):
            # Two clients with an MCP session each (the handshake), and one without (protocol 2026-07-28).
            async with (
                Client(http_url, mode="legacy") as first,
                Client(http_url, mode="legacy") as second,
                Client(http_url) as third,
            ):
                mine = await _call(first, "new_game", {"opponents": ["random"], "seed": 1})
                game_id = mine["game_id"]
                assert not re.fullmatch(r"g\d+", game_id) and len(game_id) >= 16
                theirs = await _call(second, "new_game", {"opponents": ["random"], "seed": 1})
                assert theirs["game_id"] != game_id
                await _call(third, "new_game", {"opponents": ["random"], "seed": 1})
                for client in (second, third):
                    for tool, args in (
                        ("view", {}),
                        ("legal_moves", {}),
                        ("play", {"move": 1}),
                        ("resume", {}),
                        ("hint", {"rollouts": 8}),
                        ("record", {}),
                        ("end_game", {}),
                    ):
                        result = await client.call_tool(tool, {"game_id": game_id, **args})
                        text = result.content[0].text
                        assert result.is_error and f"no game {game_id!r} of yours" in text, (tool, text)
                # A refusal names the caller's own games only, and none for a caller without a session.
                for client, listed in ((first, [game_id]), (second, [theirs["game_id"]]), (third, [])):
                    text = (await client.call_tool("view", {"game_id": "g1"})).content[0].text
                    assert re.findall(r"g[A-Za-z0-9_-]{16}", text) == listed, text
                assert (await _call(first, "view", {"game_id": game_id})) == mine

    anyio.run(run)


def test_an_http_request_over_the_cap_is_refused_unread(http_url):
    async def run() -> None:
        with anyio.fail_after(240):
            async with Client(http_url, mode="legacy") as client:
                state = await _call(client, "new_game", {"opponents": ["random"], "seed": 2})
                with pytest.raises(MCPError, match=f"a request is at most {MAX_REQUEST_BYTES} bytes"):
                    await client.call_tool("play", {"game_id": state["game_id"], "move": "<think>" * 150_000})
                assert (await _call(client, "view", {"game_id": state["game_id"]})) == state
                await _call(client, "play", {"game_id": state["game_id"], "move": 1})

    anyio.run(run)


def test_stdio_answers_what_it_cannot_read_with_json_rpc_errors():
    initialize = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    lines = [
        b"{not json",
        b"\xff\xfe",
        b'{"jsonrpc": "2.0", "id": 3, "method": 5}',
        b"[" * 10 + b"1" + b"]" * 10,
        b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"x": "' + b"y" * 1_000_000 + b'"}}',
        json.dumps(initialize).encode(),
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "uno_web.mcp"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    watchdog = threading.Timer(180, server.kill)  # a server that never answers ends the read, not the suite
    watchdog.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b"\n".join(lines) + b"\n")
        server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in lines]
    finally:
        watchdog.cancel()
        server.kill()
        server.wait(timeout=30)
    codes = [a.get("error", {}).get("code") for a in answers]
    assert codes == [-32700, -32700, -32600, -32600, -32600, None], answers
    assert answers[2]["id"] == 3 and all(a["id"] is None for a in answers[:2])
    assert f"a request is at most {MAX_REQUEST_BYTES} bytes" in answers[4]["error"]["message"]
    assert answers[5]["id"] == 7 and answers[5]["result"]["serverInfo"]["name"] == "uno"


def test_a_full_server_makes_room_from_idle_games_only():
    now = [0.0]
    games = UnoGames(clock=lambda: now[0])
    first = games.new_game(["random"], seed=0)["game_id"]
    for seed in range(1, MAX_GAMES):
        now[0] += 1.0
        games.new_game(["random"], seed=seed)
    with pytest.raises(SessionError, match=f"{MAX_GAMES} games are open; end one with end_game, or wait") as err:
        games.new_game(["random"])
    assert err.value.kind == "full" and len(games.games) == MAX_GAMES
    now[0] = IDLE_MINUTES * 60 + 0.5  # the first game is now idle past the limit, the others not
    state = games.new_game(["random"], seed=99)
    assert first not in games.games and state["game_id"] in games.games and len(games.games) == MAX_GAMES
