"""What an untrusted caller may name (``agents.registry.remote_agent``): registry names with capped
budgets, never a file, module or saved model. A refused spec imports, opens and runs nothing,
over MCP (the SDK's own client) and over the web (FastAPI's TestClient)."""

from __future__ import annotations

import os
import re
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


@pytest.mark.parametrize("sep", [",", "*", "+"])
def test_a_separator_is_refused_before_any_file_is_looked_at(tmp_path, monkeypatch, sep):
    rules = parse_rules("classic")
    spec = str(tmp_path / f"model{sep}x.zip")
    refusals = []
    for exists in (False, True):
        if exists:
            (tmp_path / f"model{sep}x.zip").write_bytes(b"PK not a model")
        with monkeypatch.context() as m:
            for name in ("exists", "isfile", "isdir", "lexists"):
                m.setattr(os.path, name, lambda *a: pytest.fail("a refused spec looked at the filesystem"))
            with pytest.raises(ValueError, match=f"{re.escape(repr(sep))} is no part of one registry name") as err:
                remote_agent(spec, rules, 2)
        refusals.append(str(err.value))
    assert refusals[0] == refusals[1]  # whether the path exists does not show


@pytest.mark.parametrize("spec", ["search:64" + " " * 1_000_000, "x" * 1_000_000, ["heuristic"] * 100_000])
def test_a_refusal_quotes_a_short_prefix_of_the_spec(spec):
    with pytest.raises(ValueError) as err:
        remote_agent(spec, parse_rules("classic"), 2)
    message = str(err.value)
    assert len(message) < 1000 and "…" in message and "A remote caller may name" in message
    if isinstance(spec, str):
        assert "a remote spec is at most 80 characters, got 1,000,00" in message
