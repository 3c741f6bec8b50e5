"""What an untrusted caller may name (``agents.registry.remote_agent``): registry names with capped
budgets, never a file, module or saved model. A refused spec imports, opens and runs nothing,
over MCP (the SDK's own client) and over the web (FastAPI's TestClient)."""

from __future__ import annotations

import sys
import warnings

import anyio
import pytest

from agents.registry import MAX_REMOTE_ROLLOUTS, agent_names, remote_agent
from uno_env import parse_rules

MARKER_AGENT = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")


class Evil:
    name = "evil"

    def __init__(self, rules=None):
        pathlib.Path({marker!r}).write_text("built")

    def act(self, observation, action_mask, rng):
        return action_mask.argmax(1)
"""


@pytest.fixture
def evil(tmp_path, monkeypatch):
    """Specs naming a file and a module that would write ``marker`` when imported."""
    marker = tmp_path / "marker"
    code = MARKER_AGENT.format(marker=str(marker))
    (tmp_path / "evil_agent.py").write_text(code)
    (tmp_path / "evil_module.py").write_text(code)
    (tmp_path / "model.zip").write_bytes(b"PK not a model")
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = [
        f"{tmp_path / 'evil_agent.py'}:Evil",
        "evil_module:Evil",
        "x=evil_module:Evil",
        str(tmp_path / "model.zip"),
        str(tmp_path),
        "search@peek",
        f"search:{MAX_REMOTE_ROLLOUTS + 1}",
        "search:5001ms",
        "chat:some-model",
    ]
    yield specs, marker
    assert "evil_module" not in sys.modules


def test_remote_agent_takes_registry_names_and_refuses_the_rest(evil):
    specs, marker = evil
    rules = parse_rules("classic")
    for name in ["random", "heuristic", "search:8", "flatmc:20ms@public", "fast=ismcts:16"]:
        assert callable(remote_agent(name, rules, 2).act)
    for spec in specs:
        with pytest.raises(ValueError, match="is not offered here|sees every hand") as err:
            remote_agent(spec, rules, 2)
        assert "A remote caller may name" in str(err.value)
    assert not marker.exists()
    assert set(agent_names(models=False)) <= set(agent_names())


def test_mcp_refuses_files_modules_and_models_before_loading_them(evil):
    pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[mcp]'")
    from mcp import Client

    from uno_web.mcp import UnoGames, build_server

    specs, marker = evil
    games = UnoGames()

    async def main() -> None:
        async with Client(build_server(games)) as client:
            for spec in specs:
                result = await client.call_tool("new_game", {"opponents": [spec]})
                assert result.is_error, spec
                assert "not offered here" in result.content[0].text or "every hand" in result.content[0].text
            assert not games.games

    anyio.run(main)
    assert not marker.exists()


def test_web_refuses_files_modules_and_models_before_loading_them(evil):
    pytest.importorskip("fastapi", reason="the web extra is not installed: pip install -e '.[web]'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from uno_web.server import Settings, create_app

    specs, marker = evil
    client = TestClient(create_app(Settings()), headers={"Content-Type": "application/json"})
    for spec in specs:
        response = client.post("/api/games", json={"agents": [spec]})
        assert response.status_code == 422, spec
        assert "A remote caller may name" in response.text
    assert not marker.exists()
