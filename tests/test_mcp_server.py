"""uno-mcp (agents.mcp_server) through the mcp SDK's own client, in memory."""

from __future__ import annotations

import anyio
import numpy as np
import pytest
from mcp import Client

from agents.mcp_server import UnoGames, build_server
from uno_env import PRESETS


def _run(script) -> None:
    """Run ``script(client, games)`` against a fresh server over the SDK's in-memory transport."""
    games = UnoGames()

    async def main() -> None:
        async with Client(build_server(games)) as client:
            await script(client, games)

    anyio.run(main)


async def _play_out(client, game_id: str, rng: np.random.Generator) -> str:
    """Play random legal moves by number or name until the game ends; the last view."""
    for _ in range(3000):
        moves = (await client.call_tool("legal_moves", {"game_id": game_id})).structured_content["result"]
        if not moves:
            break
        move = moves[int(rng.integers(len(moves)))]
        arg = move["number"] if rng.random() < 0.5 else move["name"]
        result = await client.call_tool("play", {"game_id": game_id, "move": arg})
        assert not result.is_error, result.content[0].text
    return (await client.call_tool("view", {"game_id": game_id})).content[0].text


@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_client_plays_complete_games(preset, num_players):
    async def script(client, games):
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == {"new_game", "view", "legal_moves", "play", "record", "end_game"}
        opponents = ["heuristic", "random", "greedy"][: num_players - 1]
        started = await client.call_tool(
            "new_game", {"opponents": opponents, "rules": preset, "seat": num_players - 1, "seed": 2}
        )
        assert not started.is_error
        game_id = started.structured_content["game_id"]
        assert "Legal moves:" in started.structured_content["view"]
        last = await _play_out(client, game_id, np.random.default_rng(num_players))
        assert "The game is over" in last
        game = games.games[game_id]
        assert game.over
        events = (await client.call_tool("record", {"game_id": game_id})).structured_content["result"]
        assert events and all("text" in ev for ev in events)
        # Only the client's own cards are shown: another seat's deal and draws are counts.
        assert all(not isinstance(ev.get("cards"), list) or ev["player"] == num_players - 1 for ev in events)

    _run(script)


def test_bad_calls_are_refused_and_change_nothing():
    async def script(client, games):
        started = await client.call_tool("new_game", {"opponents": ["heuristic"], "seed": 5})
        game_id = started.structured_content["game_id"]
        game = games.games[game_id]
        before = game.engine.snapshot().copy()
        view = (await client.call_tool("view", {"game_id": game_id})).content[0].text
        refusals = [
            ("play", {"game_id": game_id, "move": "play purple 12"}, "names no legal move"),
            ("play", {"game_id": game_id, "move": 99}, "no move 99"),
            ("play", {"game_id": game_id, "move": ""}, "is empty"),
            ("play", {"game_id": "g404", "move": "draw"}, "no game 'g404'"),
            ("view", {"game_id": "nope"}, "the games are: g1"),
            ("new_game", {"opponents": ["nobody"]}, "unknown agent 'nobody'"),
            ("new_game", {"opponents": []}, "1 to 9 agent names"),
            ("new_game", {"opponents": ["random"], "seat": 2}, "seat must be an integer in 0..1"),
            ("new_game", {"rules": "chess"}, "unknown preset 'chess'"),
            ("new_game", {"seed": -1}, "seed must be an integer >= 0"),
        ]
        for tool, args, message in refusals:
            result = await client.call_tool(tool, args)
            assert result.is_error and message in result.content[0].text, (tool, args, result.content[0].text)
        bad_move = await client.call_tool("play", {"game_id": game_id, "move": "play purple 12"})
        assert "The legal moves: 1. " in bad_move.content[0].text
        assert np.array_equal(game.engine.snapshot(), before)
        assert (await client.call_tool("view", {"game_id": game_id})).content[0].text == view
        assert list(games.games) == [game_id]
        # A finished game refuses further moves.
        await _play_out(client, game_id, np.random.default_rng(0))
        over = await client.call_tool("play", {"game_id": game_id, "move": "1"})
        assert over.is_error and "is over" in over.content[0].text
        ended = await client.call_tool("end_game", {"game_id": game_id})
        assert not ended.is_error and games.games == {}

    _run(script)


@pytest.mark.parametrize("opponent", ["search:16", "flatmc:2ms", "belief_policy", "pretrained"])
def test_the_searches_and_shipped_models_sit_at_the_table(opponent):
    """Opponents that read the round's history get an engine that keeps it."""

    async def script(client, games):
        started = await client.call_tool("new_game", {"opponents": [opponent], "seed": 3})
        assert not started.is_error, started.content[0].text
        game_id = started.structured_content["game_id"]
        assert "The game is over" in await _play_out(client, game_id, np.random.default_rng(3))

    _run(script)
