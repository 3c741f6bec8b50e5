"""ChatAgent (agents.llm) against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from agents import HeuristicAgent, make_agent
from agents.llm import ChatAgent, chat_url
from arena import play
from uno_env import PRESETS, Engine, parse_rules
from uno_env.table import ask_one

MOVE_LINE = re.compile(r"^(\d+)\. (.+)$", re.M)


class FakeChat:
    """A chat completions endpoint answering from a script, then with good replies: the number or
    the name of a legal move drawn with its own seeded generator (scripted entries: ``"malformed"``
    (not JSON), ``"no-choices"`` (JSON without a reply), ``"http-500"``, ``"hang"`` (no answer until
    the test ends) or any reply text)."""

    def __init__(self) -> None:
        self.script: list[str] = []
        self.requests: list[dict] = []
        self.rng = np.random.default_rng(0)
        self.release = threading.Event()
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                chat.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                entry = chat.script.pop(0) if chat.script else None
                if entry == "hang":
                    chat.release.wait(10)
                    return
                if entry == "http-500":
                    self.send_error(500, "scripted failure")
                    return
                if entry == "malformed":
                    self._send(b"{not json")
                    return
                if entry == "no-choices":
                    self._send(json.dumps({"error": "none"}).encode())
                    return
                reply = entry if entry is not None else chat.good_reply(body["messages"][1]["content"])
                answer = {
                    "choices": [{"message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 3},
                }
                self._send(json.dumps(answer).encode())

            def _send(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def good_reply(self, prompt: str) -> str:
        moves = MOVE_LINE.findall(prompt)
        number, name = moves[int(self.rng.integers(len(moves)))]
        return [number, f"I play {name}", name.upper(), f"Move: {number}"][int(self.rng.integers(4))]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat(monkeypatch) -> Iterator[FakeChat]:
    """The fake server, with every outgoing connection of the test checked to go to it."""
    server = FakeChat()
    real_connect = socket.socket.connect
    port = server.server.server_address[1]

    def connect(sock, address):
        if address[:2] != ("127.0.0.1", port):
            raise AssertionError(f"a connection to {address!r}: only the given address may be called")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setenv("http_proxy", "http://192.0.2.1:9")  # ignored: the agent never uses a proxy
    monkeypatch.setenv("HTTP_PROXY", "http://192.0.2.1:9")
    yield server
    server.close()


def _agent(chat: FakeChat, rules="classic", **kw) -> ChatAgent:
    return ChatAgent("fake-model", rules, base_url=chat.base_url, **kw)


@pytest.mark.parametrize("num_players", [2, 4])
def test_complete_games_through_the_endpoint(chat, num_players):
    agent = _agent(chat, api_key="secret")
    others = [HeuristicAgent(parse_rules("classic")) for _ in range(num_players - 1)]
    result = play([agent, *others], 2 * num_players, "classic", seed=1, batch_size=2)
    assert result.games == 2 * num_players and result.seat_games[0].sum() == 2 * num_players
    stats = agent.stats()
    assert stats["decisions"] > 0 and stats["fallbacks"] == 0 and stats["bad_replies"] == 0
    assert stats["tokens"] == 103 * stats["requests"] and stats["tokens_per_decision"] == 103
    assert len(stats["per_decision"]) == stats["decisions"]
    # One transcript per game the agent played, each with the round's events as its seat saw them.
    assert len(agent.transcripts) == 2 * num_players
    assert sum(len(t) for t in agent.transcripts) == stats["decisions"]
    assert all(
        "The round so far" in d["prompt"] and "Legal moves:" in d["prompt"] for t in agent.transcripts for d in t
    )
    assert {r["path"] for r in chat.requests} == {"/v1/chat/completions"}
    assert {r["auth"] for r in chat.requests} == {"Bearer secret"}
    assert {r["body"]["model"] for r in chat.requests} == {"fake-model"}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_game_under_every_preset(chat, preset):
    agent = _agent(chat, preset)
    result = play([agent, HeuristicAgent(parse_rules(preset))], 1, preset, seed=3, batch_size=1)
    assert result.games == 1 and agent.stats()["decisions"] > 0 and agent.stats()["fallbacks"] == 0


def _one_decision(chat: FakeChat, script: list[str], **kw) -> tuple[ChatAgent, Engine, int]:
    agent = _agent(chat, **kw)
    engine = Engine(1, 2, parse_rules("classic"), seed=5, history=8)
    chat.script[:] = script
    action = ask_one(agent, engine, 0, np.random.default_rng(0))
    return agent, engine, action


def test_a_bad_reply_is_retried_with_the_error_shown(chat):
    agent, engine, action = _one_decision(chat, ["play purple 12", "it depends", "1"])
    assert engine.legal_mask[0, action] and action == int(np.flatnonzero(engine.legal_mask[0])[0])
    assert agent.stats()["bad_replies"] == 2 and agent.stats()["fallbacks"] == 0
    last = chat.requests[-1]["body"]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last[2]["content"] == "play purple 12" and "names no legal move" in last[3]["content"]
    assert "1. " in last[3]["content"]  # the refusal lists the legal moves
    attempts = agent.transcripts[0][0]["attempts"]
    assert [("refused" in a) for a in attempts] == [True, True, False]


@pytest.mark.parametrize("fallback", ["first", "random"])
def test_after_max_attempts_a_counted_fallback(chat, fallback):
    agent, engine, action = _one_decision(
        chat, ["malformed", "no-choices", "http-500"], max_attempts=3, fallback=fallback
    )
    assert engine.legal_mask[0, action]
    if fallback == "first":
        assert action == int(np.flatnonzero(engine.legal_mask[0])[0])
    stats = agent.stats()
    assert stats["fallbacks"] == 1 and stats["failed_requests"] == 3 and stats["requests"] == 3
    assert agent.transcripts[0][0]["fallback"] is True
    errors = [a["error"] for a in agent.transcripts[0][0]["attempts"]]
    assert "malformed" in errors[0] and "malformed" in errors[1] and "HTTP 500" in errors[2]


def test_a_request_that_times_out_falls_back(chat):
    agent, engine, action = _one_decision(chat, ["hang"], max_attempts=1, timeout=0.2, fallback="first")
    assert engine.legal_mask[0, action] and agent.stats()["fallbacks"] == 1
    assert "no answer" in agent.transcripts[0][0]["attempts"][0]["error"]


def test_act_on_observations_alone(chat):
    agent = _agent(chat)
    engine = Engine(3, 2, parse_rules("classic"), seed=2)
    actions = agent.act(engine.observation, engine.legal_mask, np.random.default_rng(0))
    assert engine.legal_mask[np.arange(3), actions].all()
    assert len(agent.transcripts) == 1 and len(agent.transcripts[0]) == 3
    assert "not shown at this table" in agent.transcripts[0][0]["prompt"]


def test_transcripts_written_per_game(chat, tmp_path):
    agent = _agent(chat, transcript_dir=str(tmp_path))
    play([agent, HeuristicAgent(parse_rules("classic"))], 2, "classic", seed=4, batch_size=1)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["game-0.jsonl", "game-1.jsonl"]
    lines = (tmp_path / "game-0.jsonl").read_text().splitlines()
    assert len(lines) == len(agent.transcripts[0]) and "action" in json.loads(lines[0])


def test_the_registry_builds_it_from_the_environment(chat, monkeypatch):
    monkeypatch.setenv("UNO_CHAT_BASE_URL", chat.base_url)
    monkeypatch.setenv("UNO_CHAT_API_KEY", "k")
    agent = make_agent("chat:some/model:7b", "classic")
    assert isinstance(agent, ChatAgent) and agent.model == "some/model:7b" and agent.api_key == "k"
    assert agent.url == chat.base_url + "/chat/completions"
    assert make_agent("me=chat:m", "classic").name == "me"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"model": ""}, "model must name"),
        ({"base_url": "ftp://x"}, "http:// or https://"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"fallback": "best"}, "fallback must be one of"),
        ({"timeout": 0}, "timeout"),
        ({"history": -1}, "history"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    settings = {"model": "m", "base_url": "http://127.0.0.1:1/v1", **kwargs}
    with pytest.raises(ValueError, match=message):
        ChatAgent(settings.pop("model"), **settings)


def test_without_a_base_url_it_says_where_to_set_it(monkeypatch):
    monkeypatch.delenv("UNO_CHAT_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="UNO_CHAT_BASE_URL"):
        make_agent("chat:m")
    with pytest.raises(ValueError, match="chat:MODEL"):
        make_agent("chat:")


def test_chat_url_takes_the_base_with_or_without_v1():
    assert chat_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1") == "http://h:1/v1/chat/completions"


def test_evaluate_rates_a_chat_agent_and_reports_its_costs(chat, monkeypatch, tmp_path):
    import evaluate

    monkeypatch.setenv("UNO_CHAT_BASE_URL", chat.base_url)
    args = evaluate.Args(agents="chat:m,random", games=2, batch_size=2, output_dir=str(tmp_path), plots=False)
    evaluate.main(args)
    data = json.loads((tmp_path / "tournament.json").read_text())
    stats = data["config"]["agent_stats"]["chat:m"]
    assert stats["decisions"] == len(stats["per_decision"]) > 0 and stats["tokens_per_decision"] == 103
    assert data["tables"][0]["games"] == 2
