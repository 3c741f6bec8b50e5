"""uno-mcp (uno_web.mcp) through the mcp SDK's own client: in memory, over stdio and over
streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time

import anyio
import httpx
import numpy as np
import pytest
from builder import redeal_hidden
from helpers import ROOT
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import uno_env
from agents.registry import agent_names
from uno_env import PRESETS
from uno_web.mcp import MAX_MOVE_CHARS, MAX_RECORD_PAGE, VIEW_EVENTS, UnoGames, build_server, main
from uno_web.session import Session, build_agents

TOOLS = {"new_game", "view", "legal_moves", "play", "resume", "hint", "record", "rules", "end_game"}


def _run(script) -> None:
    """Run ``script(client, games)`` against a fresh server over the SDK's in-memory transport."""
    games = UnoGames()

    async def main() -> None:
        async with Client(build_server(games)) as client:
            await script(client, games)

    anyio.run(main)


async def _play_out(client, game_id: str, rng: np.random.Generator, limit: int = 3000) -> dict:
    """Play random legal moves by number or name until the game ends (at most ``limit``); the last state."""
    state = (await client.call_tool("view", {"game_id": game_id})).structured_content
    for _ in range(limit):
        if state["done"]:
            break
        moves = state["legal_moves"]
        move = moves[int(rng.integers(len(moves)))]
        arg = move["number"] if rng.random() < 0.5 else move["name"]
        result = await client.call_tool("play", {"game_id": game_id, "move": arg})
        assert not result.is_error, result.content[0].text
        state = result.structured_content
    return state


@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_client_plays_complete_games(preset, num_players):
    async def script(client, games):
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        opponents = ["heuristic", "random", "greedy"][: num_players - 1]
        seat = num_players - 1
        started = await client.call_tool("new_game", {"opponents": opponents, "rules": preset, "seat": seat, "seed": 2})
        assert not started.is_error, started.content[0].text
        state = started.structured_content
        game_id = state["game_id"]
        assert state["your_turn"] and not state["done"] and state["to_act"] == seat
        assert "Legal moves:" in state["view"] and len(state["legal_moves"]) >= 1
        listed = (await client.call_tool("legal_moves", {"game_id": game_id})).structured_content["result"]
        assert listed == state["legal_moves"]
        last = await _play_out(client, game_id, np.random.default_rng(num_players))
        session = games.games[game_id]
        assert last["done"] and session.over and "The game is over" in last["view"]
        assert last["legal_moves"] == [] and not last["your_turn"] and last["to_act"] is None
        # The points are the engine's: rewards, and the winners named by the record.
        np.testing.assert_allclose(last["rewards"], session.engine.rewards[0], rtol=1e-4)
        assert last["winners"] == session.winners and len(last["scores"]) == num_players
        if not last["truncated"]:
            assert ("you won" in last["view"]) == (seat in last["winners"])
        page = (await client.call_tool("record", {"game_id": game_id, "limit": MAX_RECORD_PAGE})).structured_content
        events = page["events"]
        assert events and all("text" in ev for ev in events) and page["total"] == session.event_count
        # Only the client's own cards are shown: another seat's deal and draws are counts.
        assert all(not isinstance(ev.get("cards"), list) or ev["player"] == seat for ev in events)

    _run(script)


def test_the_view_is_bounded_and_the_record_pages():
    async def script(client, games):
        state = (await client.call_tool("new_game", {"opponents": ["random"], "seed": 11})).structured_content
        game_id = state["game_id"]
        rng = np.random.default_rng(1)
        # Draw (or pass) while the round lasts, so it grows long.
        for _ in range(400):
            if state["done"] or state["event_count"] > 3 * VIEW_EVENTS:
                break
            names = [m["name"] for m in state["legal_moves"]]
            move = "draw" if "draw" in names else "pass" if "pass" in names else names[int(rng.integers(len(names)))]
            state = (await client.call_tool("play", {"game_id": game_id, "move": move})).structured_content
        assert state["event_count"] > 3 * VIEW_EVENTS
        shown = state["view"].split("The round so far")[1].split("\n\n")[0]
        assert sum(line.startswith("- ") for line in shown.splitlines()) <= VIEW_EVENTS
        assert re.search(r"\d+ earlier events? of this round", state["view"])
        # Pages of the record join into the whole record, as the seat saw it.
        pages, since = [], 0
        for _ in range(100):
            page = (
                await client.call_tool("record", {"game_id": game_id, "since": since, "limit": 7})
            ).structured_content
            assert len(page["events"]) <= 7 and page["since"] == since
            pages += page["events"]
            if page["next"] is None:
                break
            since = page["next"]
        assert pages == games.games[game_id].events()
        assert len(pages) == state["event_count"]

    _run(script)


def _bad_calls(game_id: str) -> list[tuple[str, dict, str]]:
    return [
        ("play", {"game_id": game_id, "move": "play purple 12"}, "names no legal move"),
        ("play", {"game_id": game_id, "move": 99}, "there is no move 99"),
        ("play", {"game_id": game_id, "move": 0}, "there is no move 0"),
        ("play", {"game_id": game_id, "move": -1}, "there is no move -1"),
        ("play", {"game_id": game_id, "move": "-1"}, "a move number is an integer 1.."),
        ("play", {"game_id": game_id, "move": "1.0"}, "a move number is an integer 1.."),
        ("play", {"game_id": game_id, "move": True}, "got bool True"),
        ("play", {"game_id": game_id, "move": False}, "got bool False"),
        ("play", {"game_id": game_id, "move": 1.0}, "got float 1.0"),
        ("play", {"game_id": game_id, "move": None}, "got NoneType None"),
        ("play", {"game_id": game_id, "move": [1]}, "got list [1]"),
        ("play", {"game_id": game_id, "move": {"number": 1}}, "got dict"),
        ("play", {"game_id": game_id, "move": ""}, "is empty"),
        ("play", {"game_id": "g404", "move": "draw"}, "no game 'g404'"),
        ("play", {"game_id": 1, "move": 1}, "game_id is the text new_game gave"),
        ("play", {"game_id": game_id}, "play needs move: play takes game_id, move"),
        ("view", {"game_id": "nope"}, f"no game 'nope' of yours; your games are: {game_id}"),
        ("view", {"game_id": None}, "game_id is the text new_game gave"),
        ("legal_moves", {"game_id": [game_id]}, "game_id is the text new_game gave"),
        ("hint", {"game_id": game_id, "rollouts": 0}, "rollouts must be an integer in 1.."),
        ("hint", {"game_id": game_id, "rollouts": 10**9}, "rollouts must be an integer in 1.."),
        ("hint", {"game_id": game_id, "rollouts": True}, "rollouts must be an integer, got bool"),
        ("hint", {"game_id": game_id, "rollouts": 2.5}, "rollouts must be an integer, got float"),
        ("record", {"game_id": game_id, "since": -1}, "since must be an integer >= 0"),
        ("record", {"game_id": game_id, "since": "0"}, "since must be an integer, got str"),
        ("record", {"game_id": game_id, "limit": 0}, f"limit must be an integer in 1..{MAX_RECORD_PAGE}"),
        ("record", {"game_id": game_id, "limit": 10**6}, f"limit must be an integer in 1..{MAX_RECORD_PAGE}"),
        ("record", {"game_id": game_id, "limit": True}, "limit must be an integer, got bool"),
        ("rules", {"rules": "chess"}, "unknown preset 'chess'"),
        ("rules", {"rules": 3}, "rules is a preset name"),
        ("new_game", {"opponents": ["nobody"]}, "unknown agent 'nobody'"),
        ("new_game", {"opponents": []}, "1 to 9 agent names"),
        ("new_game", {"opponents": "heuristic"}, "opponents is a list"),
        ("new_game", {"opponents": [3]}, "opponents is a list"),
        ("new_game", {"opponents": ["random"] * 10}, "1 to 9 agent names"),
        ("new_game", {"opponents": ["search:999999"]}, "is not offered here"),
        ("new_game", {"opponents": ["/tmp/x.py:Agent"]}, "is not offered here"),
        ("new_game", {"opponents": ["random"], "seat": 2}, "seat must be an integer in 0..1"),
        ("new_game", {"opponents": ["random"], "seat": True}, "seat must be an integer, got bool"),
        ("new_game", {"opponents": ["random"], "seat": 0.0}, "seat must be an integer, got float"),
        ("new_game", {"rules": "chess"}, "unknown preset 'chess'"),
        ("new_game", {"rules": 7}, "rules is a preset name"),
        ("new_game", {"rules": {"bogus": 1}}, "unknown option(s) ['bogus']"),
        ("new_game", {"seed": -1}, "seed must be an integer in 0.."),
        ("new_game", {"seed": 1.5}, "seed must be an integer, got float"),
        ("new_game", {"seed": True}, "seed must be an integer, got bool"),
        ("new_game", {"seed": "5"}, "seed must be an integer, got str"),
        ("end_game", {"game_id": "g9"}, "no game 'g9'"),
        # An argument no tool names is refused, not ignored.
        ("new_game", {"opponents": ["random"], "sed": 5}, "unknown argument 'sed': new_game takes opponents, rules"),
        ("play", {"game_id": game_id, "move": 1, "also": 2}, "unknown argument 'also': play takes game_id, move"),
        ("play", {"move": 1}, "play needs game_id: play takes game_id, move"),
        # Huge arguments are quoted briefly.
        ("new_game", {"opponents": ["random"] * 10_000}, "1 to 9 agent names"),
        ("play", {"game_id": game_id, "move": "x" * 100_000}, f"at most {MAX_MOVE_CHARS} characters; got 100000"),
        ("view", {"game_id": "g" * 100_000}, "no game 'ggg"),
        ("new_game", {"opponents": ["x" * 1_000_000]}, "an agent's name is at most 200 characters, got 1000000"),
        ("new_game", {"opponents": ["search:" + "9" * 1_000_000]}, "at most 200 characters"),
        ("rules", {"rules": "x" * 1_000_000}, "got 1000000 characters starting 'xxx"),
        ("new_game", {"rules": {"y" * 100_000: 1}}, "unknown option(s) ['yyy"),
    ]


def test_bad_calls_are_refused_and_change_nothing():
    async def script(client, games):
        started = await client.call_tool("new_game", {"opponents": ["heuristic"], "seed": 5})
        game_id = started.structured_content["game_id"]
        session = games.games[game_id]
        before = session.engine.snapshot().copy()
        view = (await client.call_tool("view", {"game_id": game_id})).structured_content
        for tool, args, message in _bad_calls(game_id):
            result = await client.call_tool(tool, args)
            text = result.content[0].text
            assert result.is_error and message in text, (tool, args, text)
            assert len(text) < 2100 and "pydantic" not in text, (tool, text[:300])
            assert np.array_equal(session.engine.snapshot(), before), (tool, args)
        bad_move = await client.call_tool("play", {"game_id": game_id, "move": "play purple 12"})
        assert "The legal moves: 1. " in bad_move.content[0].text
        assert (await client.call_tool("view", {"game_id": game_id})).structured_content == view
        assert list(games.games) == [game_id] and session.moves == view["moves_played"]
        # A finished game refuses further moves and hints.
        await _play_out(client, game_id, np.random.default_rng(0))
        for tool, args in (("play", {"move": 1}), ("hint", {})):
            over = await client.call_tool(tool, {"game_id": game_id, **args})
            assert over.is_error and "is over" in over.content[0].text
        ended = await client.call_tool("end_game", {"game_id": game_id})
        assert not ended.is_error and games.games == {}

    _run(script)


def test_every_argument_is_described_and_the_server_has_a_version():
    async def script(client, games):
        tools = (await client.list_tools()).tools
        for tool in tools:
            assert tool.description, tool.name
            assert tool.input_schema["additionalProperties"] is False, tool.name
            for name, schema in tool.input_schema["properties"].items():
                assert schema.get("description"), (tool.name, name)
        state_tools = {t.name: t for t in tools}
        for name in ("new_game", "view", "play"):
            props = state_tools[name].output_schema["properties"]
            assert {"done", "winners", "rewards", "scores", "legal_moves", "view"} <= set(props), name
        assert client.server_info.version == uno_env.__version__
        rules = (await client.call_tool("rules", {"rules": "house"})).content[0].text
        assert "Goal:" in rules and "stack_draw_two=True" in rules

    _run(script)


@pytest.mark.parametrize("opponent", [*agent_names(), "search:20ms", "flatmc:2ms", "search:16"])
def test_every_registry_opponent_sits_at_the_table(opponent):
    """Opponents that read the round's history get an engine that keeps it."""
    n = 4 if opponent.endswith("4p") else 2

    async def script(client, games):
        started = await client.call_tool("new_game", {"opponents": [opponent] * (n - 1), "seed": 3})
        assert not started.is_error, started.content[0].text
        state = started.structured_content
        assert state["players"][1] == f"{opponent} (seat 1)"
        for _ in range(4):
            if state["done"]:
                break
            state = (await client.call_tool("play", {"game_id": state["game_id"], "move": 1})).structured_content
        assert state["moves_played"] >= 4

    _run(script)


def test_a_whole_game_against_the_search():
    async def script(client, games):
        started = await client.call_tool("new_game", {"opponents": ["search:16"], "seed": 4})
        game_id = started.structured_content["game_id"]
        assert (await _play_out(client, game_id, np.random.default_rng(4)))["done"]

    _run(script)


def test_the_hint_is_a_legal_move_and_changes_nothing():
    async def script(client, games):
        state = (await client.call_tool("new_game", {"opponents": ["heuristic"], "seed": 9})).structured_content
        session = games.games[state["game_id"]]
        before = session.engine.snapshot().copy()
        hint = (await client.call_tool("hint", {"game_id": state["game_id"], "rollouts": 32})).structured_content
        assert {k: hint[k] for k in ("number", "action", "name")} in state["legal_moves"]
        assert hint["rollouts"] == 32 and np.array_equal(session.engine.snapshot(), before)

    _run(script)


def _decision(seed: int) -> Session:
    """A session at the outside seat's turn with a choice, reached by seeded random play."""
    rules = uno_env.parse_rules("classic")
    agents, labels = build_agents(["random"], rules, 2, 0)
    s = Session(rules, 0, agents, labels, seed=seed, hints=True)
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(4, 30))):
        s.run_agents()
        if s.over:
            break
        s.play(int(rng.choice(s.legal_actions())))
    s.run_agents()
    return s


def test_the_hint_reads_nothing_the_seat_cannot_see():
    """Redeal what the seat cannot see (the other hand, the draw pile): the same hint, same rng."""
    compared = 0
    for seed in range(12):
        session, twin = _decision(seed), _decision(seed)
        if session.over or len(session.legal_actions()) < 2:
            continue
        assert np.array_equal(session.engine.snapshot(), twin.engine.snapshot())
        if not redeal_hidden(twin.engine, 0, session.seat, np.random.default_rng(seed)):
            continue
        assert not np.array_equal(session.engine.snapshot(), twin.engine.snapshot())
        hints = [s.hint(64, np.random.default_rng(seed)) for s in (session, twin)]
        assert hints[0] == hints[1] and hints[0] in session.legal_actions()
        compared += 1
    assert compared >= 3


def test_the_command_line_prints_help_and_refuses_unknown_options(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--transport" in out and "--port" in out and "127.0.0.1" in out
    with pytest.raises(SystemExit) as exit_:
        main(["--bogus"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        main(["--transport", "sse"])
    assert exit_.value.code == 2
    assert main(["--port", "0"]) == 2 and "--port must be 1..65535" in capsys.readouterr().err


async def _short_game(client) -> None:
    """A game started, one move and a view, through ``client`` (any transport)."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    started = await client.call_tool("new_game", {"opponents": ["random"], "seed": 1})
    assert not started.is_error, started.content[0].text
    game_id = started.structured_content["game_id"]
    played = await client.call_tool("play", {"game_id": game_id, "move": 1})
    assert not played.is_error and played.structured_content["game_id"] == game_id
    refused = await client.call_tool("play", {"game_id": game_id, "move": True})
    assert refused.is_error and "got bool True" in refused.content[0].text
    assert client.server_info.version == uno_env.__version__


def test_over_stdio():
    params = StdioServerParameters(command=sys.executable, args=["-m", "uno_web.mcp"], cwd=str(ROOT))

    async def run() -> None:
        with anyio.fail_after(120):
            async with Client(params) as client:
                await _short_game(client)

    anyio.run(run)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_over_streamable_http_on_loopback():
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "uno_web.mcp", "--transport", "http", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(600):  # up to a minute for the server to import and listen
            if server.poll() is not None:
                raise AssertionError(f"uno-mcp exited: {server.stderr.read().decode() if server.stderr else ''}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("uno-mcp --transport http did not listen within a minute")

        async def run() -> None:
            with anyio.fail_after(120):
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    await _short_game(client)

        anyio.run(run)
        # A page elsewhere that rebinds its name to 127.0.0.1 sends its own Host: refused.
        rebound = httpx.post(
            f"http://127.0.0.1:{port}/mcp",
            headers={"Host": "evil.example", "Content-Type": "application/json", "Accept": "application/json"},
            content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
            timeout=30,
        )
        assert rebound.status_code in (403, 421), rebound.text
    finally:
        server.terminate()
        server.wait(timeout=30)
