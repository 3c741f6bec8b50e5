"""ChatAgent (agents.llm) against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import pickle
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import tyro

from agents import HeuristicAgent, llm, make_agent
from agents.llm import ChatAgent, ChatFailure, ChatSettings, chat_url, retry_after
from arena import play
from uno_env import PRESETS, Engine, UnoRules, parse_rules
from uno_env.actions import DRAW, action_name
from uno_env.table import ask_one

MOVE_LINE = re.compile(r"^(\d+)\. (.+)$", re.M)
TRICKLE = 0.05  # seconds between the bytes of a trickled answer


class FakeChat:
    """A chat completions endpoint answering from a script, then with ``default`` (None: good replies,
    the number or the name of a legal move drawn with its own seeded generator). Scripted entries:
    ``"malformed"`` (not JSON), ``"no-choices"`` (JSON without a reply), ``"http-500"``,
    ``"http-429:S"`` / ``"http-503:S"`` (with ``Retry-After: S``), ``"hang"`` (no answer until the
    test ends), ``"gate"`` (no answer until ``gate`` requests wait together), ``"trickle-body"`` and
    ``"trickle-headers"`` (an answer playing move 1, sent a byte every ``TRICKLE`` seconds),
    ``"huge:N"`` / ``"huge-chunked:N"`` (an answer playing move 1 padded to N bytes, with or without
    its length), ``{"raw": BYTES}`` (the body itself), a dict (the message itself: ``content``,
    ``reasoning_content``; ``_usage`` replaces the usage) or any reply text."""

    def __init__(self, gate: int = 2) -> None:
        self.script: list = []
        self.default: str | None = None
        self.requests: list[dict] = []
        self.rng = np.random.default_rng(0)
        self.release = threading.Event()
        self.barrier = threading.Barrier(gate, timeout=10)
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                chat.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                entry = chat.script.pop(0) if chat.script else chat.default
                if entry == "hang":
                    chat.release.wait(10)
                    return
                if entry == "gate":
                    chat.barrier.wait()
                    entry = None
                if isinstance(entry, str) and entry.startswith(("trickle", "huge")):
                    self._hostile(entry)
                    return
                if isinstance(entry, dict) and "raw" in entry:
                    self._send(entry["raw"])
                    return
                if isinstance(entry, str) and entry.startswith("http-"):
                    code, _, wait = entry[len("http-") :].partition(":")
                    self.send_response(int(code))
                    if wait:
                        self.send_header("Retry-After", wait)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if entry == "malformed":
                    self._send(b"{not json")
                    return
                if entry == "no-choices":
                    self._send(json.dumps({"error": "none"}).encode())
                    return
                usage = {"prompt_tokens": 100, "completion_tokens": 3}
                if isinstance(entry, dict):
                    entry = dict(entry)
                    usage = entry.pop("_usage", usage)
                    message = {"role": "assistant", **entry}
                else:
                    reply = entry if entry is not None else chat.good_reply(body["messages"][1]["content"])
                    message = {"role": "assistant", "content": reply}
                answer = {"choices": [{"message": message}], "usage": usage}
                self._send(json.dumps(answer).encode())

            def _hostile(self, entry: str) -> None:
                kind, _, size = entry.partition(":")
                answer = {"choices": [{"message": {"role": "assistant", "content": "1"}}]}
                data = json.dumps(answer).encode()
                if size:
                    data = data[:-1] + b" " * (int(size) - len(data)) + b"}"
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                if kind != "huge-chunked":
                    head += b"Content-Length: %d\r\n" % len(data)
                head += b"Connection: close\r\n\r\n"
                slow = {"trickle-headers": head, "trickle-body": data}.get(kind, b"")
                try:
                    self.wfile.write(head if kind != "trickle-headers" else b"")
                    for k in range(len(slow)):  # bounded: one pass over the answer, or until the test ends
                        if chat.release.wait(TRICKLE):
                            return
                        self.wfile.write(slow[k : k + 1])
                        self.wfile.flush()
                    if kind == "trickle-headers":
                        self.wfile.write(data)
                    elif kind != "trickle-body":
                        self.wfile.write(data)
                except OSError:  # the client hung up, as it should
                    pass
                self.close_connection = True

            def _send(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def good_reply(self, prompt: str) -> str:
        moves = MOVE_LINE.findall(prompt)
        number, name = moves[int(self.rng.integers(len(moves)))]
        return [number, f"I play {name}", name.upper(), f"Move: {number}"][int(self.rng.integers(4))]

    def close(self) -> None:
        self.release.set()
        self.barrier.abort()
        self.server.shutdown()
        self.server.server_close()


def _loopback_only(monkeypatch, *ports: int) -> None:
    """Every outgoing connection of the test must go to one of ``ports`` on 127.0.0.1."""
    real_connect = socket.socket.connect

    def connect(sock, address):
        if address[0] != "127.0.0.1" or address[1] not in ports:
            raise AssertionError(f"a connection to {address!r}: only the given address may be called")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setenv("http_proxy", "http://192.0.2.1:9")  # ignored: the agent never uses a proxy
    monkeypatch.setenv("HTTP_PROXY", "http://192.0.2.1:9")


@pytest.fixture
def chat(monkeypatch) -> Iterator[FakeChat]:
    """The fake server, with every outgoing connection of the test checked to go to it."""
    server = FakeChat()
    _loopback_only(monkeypatch, server.port)
    yield server
    server.close()


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The waits the agent asks for before retries (recorded, not slept)."""
    asked: list[float] = []
    monkeypatch.setattr(llm, "_sleep", asked.append)
    return asked


def _agent(chat: FakeChat, rules="classic", api_key: str | None = None, **kw) -> ChatAgent:
    settings = ChatSettings(base_url=chat.base_url, **{"backoff": 0.0, **kw})
    return ChatAgent("fake-model", parse_rules(rules), settings, api_key=api_key)


def _decisions(agent: ChatAgent) -> list[dict]:
    return [d for t in agent.transcripts for d in t["decisions"]]


@pytest.mark.parametrize("num_players", [2, 4])
def test_complete_games_through_the_endpoint(chat, num_players):
    agent = _agent(chat, api_key="secret")
    others = [HeuristicAgent(parse_rules("classic")) for _ in range(num_players - 1)]
    result = play([agent, *others], 2 * num_players, UnoRules.preset("classic"), seed=1, batch_size=2)
    assert result.games == 2 * num_players and result.seat_games[0].sum() == 2 * num_players
    stats = agent.stats()
    assert stats["decisions"] > 0 and stats["fallbacks"] == 0 and stats["bad_replies"] == 0
    assert stats["tokens"] == 103 * stats["requests"] and stats["tokens_per_decision"] == 103
    assert len(stats["per_decision"]) == stats["decisions"]
    # One transcript per game the agent played, each with the round's events as its seat saw them.
    assert len(agent.transcripts) == 2 * num_players
    assert len(_decisions(agent)) == stats["decisions"]
    assert all("The round so far" in d["prompt"] and "Legal moves:" in d["prompt"] for d in _decisions(agent))
    assert all(d["move"] == action_name(d["action"]) for d in _decisions(agent))
    assert {r["path"] for r in chat.requests} == {"/v1/chat/completions"}
    assert {r["auth"] for r in chat.requests} == {"Bearer secret"}
    assert {r["body"]["model"] for r in chat.requests} == {"fake-model"}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_game_under_every_preset(chat, preset):
    agent = _agent(chat, preset)
    result = play([agent, HeuristicAgent(parse_rules(preset))], 1, parse_rules(preset), seed=3, batch_size=1)
    assert result.games == 1 and agent.stats()["decisions"] > 0 and agent.stats()["fallbacks"] == 0


def _one_decision(chat: FakeChat, script: list, **kw) -> tuple[ChatAgent, Engine, int]:
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
    attempts = _decisions(agent)[0]["attempts"]
    assert [("refused" in a) for a in attempts] == [True, True, False]


@pytest.mark.parametrize(
    "reply",
    [
        "<think>Move 1 keeps my wild; still, 1 or 2?</think>\nMove: 2",
        "After weighing it all, the best move is 2.",
        "Some thoughts about 1 and 3.\n\\boxed{2}",
        {"content": "2", "reasoning_content": "Move 1 would waste the skip."},
        "Let me count: 1 is weak, 3 is worse.\n2",
    ],
)
def test_a_reasoning_reply_plays_its_final_answer_and_keeps_its_reasoning(chat, reply):
    agent, engine, action = _one_decision(chat, [reply])
    assert action == int(np.flatnonzero(engine.legal_mask[0])[1])  # move 2
    assert agent.stats()["bad_replies"] == 0 and agent.stats()["requests"] == 1
    attempt = _decisions(agent)[0]["attempts"][0]
    if isinstance(reply, dict) or "<think>" in reply:
        assert "Move 1" in attempt["reasoning"] and "Move: 2" not in attempt["reasoning"]


@pytest.mark.parametrize(
    "reply, message",
    [
        ("-1", "negative number"),
        ("<think>I should play 2", "no answer after it"),
        ("Move: 1 or 2", "names no legal move"),
        ("\\boxed{99}", "there is no move 99"),
    ],
)
def test_ambiguous_negative_and_garbage_replies_are_refused(chat, reply, message):
    agent, engine, action = _one_decision(chat, [reply, "1"])
    assert agent.stats()["bad_replies"] == 1 and action == int(np.flatnonzero(engine.legal_mask[0])[0])
    assert message in _decisions(agent)[0]["attempts"][0]["refused"]


def test_an_illegal_move_named_is_refused_and_the_model_told(chat):
    engine = Engine(1, 2, parse_rules("classic"), seed=5, history=8)
    illegal = action_name(int(np.flatnonzero(~engine.legal_mask[0, :54])[0]))
    agent, _, action = _one_decision(chat, [illegal, "1"])
    assert agent.stats()["bad_replies"] == 1 and action == int(np.flatnonzero(engine.legal_mask[0])[0])
    assert "names no legal move" in chat.requests[1]["body"]["messages"][3]["content"]


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
    decision = _decisions(agent)[0]
    assert decision["fallback"] is True
    errors = [a["error"] for a in decision["attempts"]]
    assert "malformed" in errors[0] and "malformed" in errors[1] and "HTTP 500" in errors[2]


def test_a_request_that_times_out_falls_back(chat):
    agent, engine, action = _one_decision(chat, ["hang"], max_attempts=1, timeout=0.2, fallback="first")
    assert engine.legal_mask[0, action] and agent.stats()["fallbacks"] == 1
    assert "no answer" in _decisions(agent)[0]["attempts"][0]["error"]


@pytest.mark.parametrize("entry", ["trickle-body", "trickle-headers"])
def test_an_endpoint_trickling_its_answer_is_cut_at_the_deadline(chat, entry):
    # Each byte comes well within the timeout: only a deadline on the whole request cuts it.
    agent, engine, action = _one_decision(chat, [entry], max_attempts=1, timeout=0.5, fallback="first")
    assert agent.stats()["fallbacks"] == 1 and agent.stats()["failed_requests"] == 1
    assert "within the 0.5 s deadline (--chat.timeout)" in _decisions(agent)[0]["attempts"][0]["error"]


@pytest.mark.parametrize("entry", ["huge:100000", "huge-chunked:100000"])
def test_an_answer_past_the_size_cap_is_refused(chat, entry):
    agent, engine, action = _one_decision(chat, [entry, "2"], max_attempts=2, max_answer_bytes=4096)
    assert action == int(np.flatnonzero(engine.legal_mask[0])[1]) and agent.stats()["failed_requests"] == 1
    error = _decisions(agent)[0]["attempts"][0]["error"]
    assert "answer too long" in error and "more than the 4,096 read (--chat.max-answer-bytes)" in error


def test_the_default_size_cap_refuses_a_4_mb_answer(chat):
    agent, engine, action = _one_decision(chat, [f"huge-chunked:{4 << 20}", "2"], max_attempts=2)
    assert agent.stats()["failed_requests"] == 1
    assert f"more than the {llm.MAX_ANSWER_BYTES:,} read" in _decisions(agent)[0]["attempts"][0]["error"]
    with pytest.raises(ValueError, match="max_answer_bytes must be an integer >= 1024"):
        _agent(chat, max_answer_bytes=10)


@pytest.mark.parametrize(
    "usage, why",
    [
        ([100, 3], "usage must be an object of token counts, got list"),
        ("lots", "usage must be an object of token counts, got str"),
        ({"prompt_tokens": -10_000, "completion_tokens": 3}, "usage.prompt_tokens must be a count >= 0, got -10000"),
        ({"prompt_tokens": 1, "completion_tokens": "3"}, "usage.completion_tokens must be a count >= 0, got '3'"),
        ({"prompt_tokens": True}, "usage.prompt_tokens must be a count >= 0, got True"),
    ],
)
def test_a_malformed_usage_is_a_malformed_answer(chat, usage, why):
    agent, engine, action = _one_decision(chat, [{"content": "1", "_usage": usage}, "2"], max_attempts=2)
    assert action == int(np.flatnonzero(engine.legal_mask[0])[1])  # the first answer was not played
    stats = agent.stats()
    assert stats["failed_requests"] == 1 and stats["prompt_tokens"] == 100 and stats["completion_tokens"] == 3
    assert "malformed answer" in _decisions(agent)[0]["attempts"][0]["error"]
    assert why in _decisions(agent)[0]["attempts"][0]["error"]


def test_a_negative_usage_cannot_defeat_the_token_cap(chat):
    chat.default = {"content": "1", "_usage": {"prompt_tokens": -1_000_000, "completion_tokens": 0}}
    agent = _agent(chat, max_tokens_per_game=250, max_attempts=1, max_failures=3)
    with pytest.raises(ChatFailure, match="3 requests in a row .* failed"):
        play([agent, HeuristicAgent(parse_rules("classic"))], 1, UnoRules.preset("classic"), seed=0, batch_size=1)
    assert agent.stats()["prompt_tokens"] == 0 and agent.stats()["failed_requests"] == 3


def test_a_reply_past_the_parsers_cap_is_a_bad_reply_echoed_cut(chat):
    hostile = "<think>" * 100_000  # under the answer's byte cap, over the parser's character cap
    agent, engine, action = _one_decision(chat, [hostile, "2"], max_attempts=2)
    assert action == int(np.flatnonzero(engine.legal_mask[0])[1]) and agent.stats()["bad_replies"] == 1
    refused = _decisions(agent)[0]["attempts"][0]["refused"]
    assert "700,000 characters, more than the 200,000 read" in refused and len(refused) < 2000
    echoed = chat.requests[1]["body"]["messages"]
    assert len(echoed[2]["content"]) == llm.TRANSCRIPT_CHARS and "more than the 200,000 read" in echoed[3]["content"]


def test_deeply_nested_json_is_a_malformed_answer(chat):
    agent, engine, action = _one_decision(chat, [{"raw": b"[" * 200_000}, "1"], max_attempts=2)
    assert agent.stats()["failed_requests"] == 1 and "malformed answer" in _decisions(agent)[0]["attempts"][0]["error"]


def test_the_transcript_keeps_a_long_reply_cut(chat):
    long = "I weigh it. " * 4000 + "\nMove: 2"
    agent, engine, action = _one_decision(chat, [long])
    attempt = _decisions(agent)[0]["attempts"][0]
    assert action == int(np.flatnonzero(engine.legal_mask[0])[1])
    assert len(attempt["reply"]) == llm.TRANSCRIPT_CHARS and attempt["reply_chars"] == len(long)


def test_retry_after_is_honoured_on_429_and_5xx(chat, waits):
    agent, engine, action = _one_decision(
        chat, ["http-429:3", "http-503:7", "http-500", "1"], max_attempts=4, backoff=0.5, max_retry_wait=5
    )
    assert action == int(np.flatnonzero(engine.legal_mask[0])[0]) and agent.stats()["failed_requests"] == 3
    assert waits == [3.0, 5.0, 2.0]  # Retry-After 3; 7 capped at max_retry_wait; none: backoff 0.5 * 2**2
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0 and retry_after("soon") is None


def test_a_dead_endpoint_stops_after_max_failures(monkeypatch, waits):
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _loopback_only(monkeypatch, port)
    agent = ChatAgent(
        "m", settings=ChatSettings(base_url=f"http://127.0.0.1:{port}/v1", max_attempts=2, max_failures=4)
    )
    with pytest.raises(ChatFailure, match=r"4 requests in a row to http://127.0.0.1:\d+/v1/chat/completions failed"):
        play([agent, HeuristicAgent(parse_rules("classic"))], 6, UnoRules.preset("classic"), seed=0, batch_size=3)
    assert agent.stats()["failed_requests"] >= 4


def test_garbage_stops_the_run_past_the_fallback_share(chat):
    chat.default = "I like turtles"
    agent = _agent(chat, max_attempts=1, fallback_grace=5, max_fallback_share=0.5)
    with pytest.raises(ChatFailure, match=r"5 of 5 decisions fell back .* more than the 50% allowed"):
        play([agent, HeuristicAgent(parse_rules("classic"))], 4, UnoRules.preset("classic"), seed=0, batch_size=1)
    assert agent.stats()["bad_replies"] == 5 and agent.stats()["fallbacks"] == 5


@pytest.mark.parametrize("cap", [{"max_requests_per_game": 3}, {"max_tokens_per_game": 250}])
def test_a_game_past_its_cap_stops_the_run(chat, cap):
    agent = _agent(chat, **cap)
    with pytest.raises(ChatFailure, match="game 0 used .*--chat.max-"):
        play([agent, HeuristicAgent(parse_rules("classic"))], 1, UnoRules.preset("classic"), seed=0, batch_size=1)
    assert agent.stats()["requests"] == 3


def test_requests_of_a_batch_run_in_parallel(monkeypatch):
    server = FakeChat(gate=4)
    _loopback_only(monkeypatch, server.port)
    try:
        server.script[:] = ["gate"] * 4  # each answers only once all four wait together
        agent = ChatAgent("m", settings=ChatSettings(base_url=server.base_url, parallel=4, timeout=20))
        engine = Engine(4, 2, parse_rules("classic"), seed=1, history=8)
        rngs = [np.random.default_rng(k) for k in range(4)]
        actions = agent.act_in_rows(engine, [0, 1, 2, 3], rngs)
        assert engine.legal_mask[np.arange(4), actions].all() and agent.stats()["fallbacks"] == 0
        assert len(agent.transcripts) == 4
    finally:
        server.close()


def test_act_on_observations_alone(chat):
    agent = _agent(chat, parallel=3)
    engine = Engine(3, 2, parse_rules("classic"), seed=2)
    actions = agent.act(engine.observation, engine.legal_mask, np.random.default_rng(0))
    assert engine.legal_mask[np.arange(3), actions].all()
    assert len(agent.transcripts) == 1 and len(agent.transcripts[0]["decisions"]) == 3
    assert "not shown at this table" in agent.transcripts[0]["decisions"][0]["prompt"]


def test_without_listed_moves_the_model_names_its_move(chat):
    chat.script[:] = ["2"]
    agent, engine, action = _one_decision(chat, ["2", "draw"], list_moves=False)
    prompt = chat.requests[0]["body"]["messages"][1]["content"]
    assert "Legal moves:" not in prompt and "Reply with the name of exactly one legal move" in prompt
    assert "moves are named, not numbered" in _decisions(agent)[0]["attempts"][0]["refused"]
    assert action == DRAW


def test_the_registry_builds_it_from_the_environment(chat, monkeypatch):
    monkeypatch.setenv("UNO_CHAT_BASE_URL", chat.base_url)
    monkeypatch.setenv("UNO_CHAT_API_KEY", "k")
    agent = make_agent("chat:some/model:7b", UnoRules.preset("classic"))
    assert isinstance(agent, ChatAgent) and agent.model == "some/model:7b" and agent.api_key == "k"
    assert agent.url == chat.base_url + "/chat/completions"
    assert make_agent("me=chat:m", UnoRules.preset("classic")).name == "me"


def test_named_endpoints_in_one_settings(monkeypatch):
    monkeypatch.setenv("UNO_CHAT_API_KEY_LOCAL", "lk")
    monkeypatch.setenv("OTHER_KEY", "ok")
    settings = ChatSettings(
        endpoints=(("local", "http://127.0.0.1:1/v1"), ("far", "http://127.0.0.1:2")),
        endpoint_keys=(("far", "OTHER_KEY"),),
        timeout=5.0,
    )
    a = make_agent("chat:qwen2.5:7b@local", UnoRules.preset("classic"), chat=settings)
    b = make_agent("chat:m@far", UnoRules.preset("classic"), chat=settings)
    assert (a.model, a.url, a.api_key, a.settings.timeout, a.name) == (
        "qwen2.5:7b",
        "http://127.0.0.1:1/v1/chat/completions",
        "lk",
        5.0,
        "chat:qwen2.5:7b@local",
    )
    assert (b.url, b.api_key) == ("http://127.0.0.1:2/v1/chat/completions", "ok")
    with pytest.raises(
        ValueError, match="chat endpoint 'nope' is not declared: name it with --chat.endpoints nope URL"
    ):
        make_agent("chat:m@nope", UnoRules.preset("classic"), chat=settings)
    with pytest.raises(ValueError, match="after '@' comes an endpoint's name"):
        make_agent("chat:m@ bad/name", UnoRules.preset("classic"), chat=settings)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"base_url": "ftp://x"}, "http:// or https://"),
        ({"api_key_env": ""}, "api_key_env must name an environment variable"),
        ({"endpoints": (("one",),)}, r"endpoints takes NAME URL pairs \(--chat.endpoints NAME URL\), got \('one',\)"),
        ({"endpoints": [("one", "http://h")]}, "endpoints must be a tuple of NAME URL pairs, got list"),
        ({"endpoints": (("bad name", "http://h"),)}, "an endpoint's name is letters, digits"),
        ({"endpoints": (("one", "http://h"), ("one", "http://i"))}, "endpoints: 'one' is given twice"),
        ({"endpoints": (("one", "h:1"),)}, "http:// or https://"),
        ({"endpoint_keys": (("x", "Y"),)}, "endpoint_keys: no endpoint 'x'; declare it with --chat.endpoints x URL"),
        ({"max_attempts": 0}, "max_attempts must be an integer >= 1"),
        ({"fallback": "best"}, "fallback must be one of"),
        ({"timeout": 0}, "timeout must be > 0 seconds"),
        ({"timeout": float("inf")}, "timeout must be > 0 seconds"),
        ({"history": -1}, "history must be an integer >= 0"),
        ({"list_moves": "yes"}, "list_moves must be True or False"),
        ({"parallel": 0}, "parallel must be an integer >= 1"),
        ({"max_failures": 0}, "max_failures must be an integer >= 1"),
        ({"max_fallback_share": 1.5}, r"max_fallback_share must be in \[0, 1\]"),
        ({"fallback_grace": -1}, "fallback_grace must be an integer >= 0"),
        ({"max_requests_per_game": 0}, "max_requests_per_game must be an integer >= 1 or None"),
        ({"max_tokens_per_game": -5}, "max_tokens_per_game"),
        ({"max_tokens": True}, "max_tokens must be an integer >= 1 or None"),
        ({"temperature": -1}, "temperature must be a number >= 0 or None"),
        ({"backoff": -1}, "backoff must be a number of seconds >= 0"),
        ({"max_retry_wait": float("nan")}, "max_retry_wait must be a number of seconds >= 0"),
        ({"max_answer_bytes": 1023}, "max_answer_bytes must be an integer >= 1024"),
    ],
)
def test_bad_settings_are_refused_once_where_they_are_made(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ChatSettings(**kwargs)


def test_a_chat_agent_takes_checked_settings_and_its_own_model_and_endpoint(monkeypatch):
    settings = ChatSettings(base_url="http://127.0.0.1:1/v1", endpoints=(("far", "http://127.0.0.1:2"),), timeout=5.0)
    agent = ChatAgent("m", None, settings, api_key="k", name="me")
    assert (agent.url, agent.api_key, agent.name, agent.settings, agent.rules) == (
        "http://127.0.0.1:1/v1/chat/completions",
        "k",
        "me",
        settings,
        UnoRules(),
    )
    assert ChatAgent("m", settings=settings, endpoint="far").url == "http://127.0.0.1:2/v1/chat/completions"
    with pytest.raises(ValueError, match="model must name the endpoint's model"):
        ChatAgent("  ", settings=settings)
    with pytest.raises(ValueError, match="chat endpoint 'near' is not declared"):
        ChatAgent("m", settings=settings, endpoint="near")
    monkeypatch.delenv("UNO_CHAT_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="give --chat.base-url or UNO_CHAT_BASE_URL"):
        ChatAgent("m")


def test_without_a_base_url_it_says_where_to_set_it(monkeypatch):
    monkeypatch.delenv("UNO_CHAT_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="UNO_CHAT_BASE_URL"):
        make_agent("chat:m")
    with pytest.raises(ValueError, match="chat:MODEL"):
        make_agent("chat:")


def test_chat_url_takes_the_base_with_or_without_v1():
    assert chat_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1") == "http://h:1/v1/chat/completions"


def test_a_copy_reports_back(chat):
    agent = _agent(chat)
    play([agent, HeuristicAgent(parse_rules("classic"))], 1, UnoRules.preset("classic"), seed=4, batch_size=1)
    copy = pickle.loads(pickle.dumps(agent))
    assert copy.stats()["decisions"] == 0 and copy.transcripts == []  # a copy starts fresh
    play([copy, HeuristicAgent(parse_rules("classic"))], 2, UnoRules.preset("classic"), seed=5, batch_size=2)
    before = agent.stats()
    agent.absorb(copy.report())
    after = agent.stats()
    assert after["decisions"] == before["decisions"] + copy.stats()["decisions"]
    assert after["requests"] == before["requests"] + copy.stats()["requests"]
    assert [t["game"] for t in agent.transcripts] == [0, 1, 2]


# --- evaluate.py --------------------------------------------------------------------------------


def _evaluate(tmp_path, *argv: str):
    import evaluate

    return evaluate.cli(["--games", "2", "--batch-size", "2", "--output-dir", str(tmp_path), "--no-plots", *argv])


def test_evaluate_rates_a_chat_agent_and_writes_a_transcript_per_run(chat, tmp_path, capsys):
    chat.script[:] = [{"content": "<think>move 1 or 2?</think>\nMove: 1"}]
    args = ["--agents", "chat:m,random", "--chat.base-url", chat.base_url, "--chat.temperature", "0.5"]
    args += ["--chat.max-tokens", "64"]
    _evaluate(tmp_path, *args)
    data = json.loads((tmp_path / "tournament.json").read_text())
    stats = data["config"]["agent_stats"]["chat:m"]
    assert stats["decisions"] == len(stats["per_decision"]) > 0 and stats["tokens_per_decision"] == 103
    assert data["tables"][0]["games"] == 2
    assert {(r["body"]["temperature"], r["body"]["max_tokens"]) for r in chat.requests} == {(0.5, 64)}
    _evaluate(tmp_path, *args)
    files = sorted(tmp_path.glob("transcript-*.jsonl"))
    assert len(files) == 2  # a new file per run, never appended to
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert len(lines) == 2 and len({line["run_id"] for line in lines}) == 1
    for line in lines:
        assert line["model"] == "m" and line["agent"] == "chat:m" and line["opponents"] == ["random"]
        assert line["players"][line["seat"]] == "chat:m"
        assert set(line["outcome"]) == {"won", "reward", "points", "truncated"}
        assert all({"move", "action", "tokens", "seconds", "attempts"} <= set(d) for d in line["decisions"])
    assert any(a.get("reasoning") == "move 1 or 2?" for line in lines for d in line["decisions"] for a in d["attempts"])


def test_evaluate_stops_on_a_dead_endpoint_with_no_rating(monkeypatch, tmp_path, capsys, waits):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _loopback_only(monkeypatch, port)
    with pytest.raises(SystemExit) as exit_:
        _evaluate(tmp_path, "--agents", "chat:m,random", "--chat.base-url", f"http://127.0.0.1:{port}/v1")
    assert exit_.value.code != 0
    assert "6 requests in a row" in str(exit_.value.code) and "Is the server running" in str(exit_.value.code)
    assert not (tmp_path / "tournament.json").exists()
    assert len(list(tmp_path.glob("transcript-*.jsonl"))) == 1  # what happened, kept


def test_evaluate_stops_on_a_malformed_usage_without_a_traceback(chat, tmp_path, capsys, waits):
    chat.default = {"content": "1", "_usage": [1, 2]}
    with pytest.raises(SystemExit) as exit_:
        _evaluate(tmp_path, "--agents", "chat:m,random", "--chat.base-url", chat.base_url)
    message = str(exit_.value.code)
    assert "6 requests in a row" in message and "usage must be an object of token counts, got list" in message
    assert not (tmp_path / "tournament.json").exists()


def test_evaluate_stops_on_fallbacks_past_the_share(chat, tmp_path, capsys):
    chat.default = "no idea"
    with pytest.raises(SystemExit, match="fell back"):
        _evaluate(tmp_path, "--agents", "chat:m,random", "--chat.base-url", chat.base_url, "--chat.max-attempts", "1")
    assert not (tmp_path / "tournament.json").exists()


def test_two_endpoints_play_each_other(monkeypatch, tmp_path, capsys):
    one, two = FakeChat(), FakeChat()
    _loopback_only(monkeypatch, one.port, two.port)
    monkeypatch.setenv("UNO_CHAT_API_KEY_TWO", "second")
    try:
        _evaluate(
            tmp_path,
            "--agents",
            "chat:alpha@one,chat:beta@two",
            "--chat.endpoints",
            "one",
            one.base_url,
            "--chat.endpoints",
            "two",
            two.base_url,
        )
    finally:
        one.close()
        two.close()
    assert {r["body"]["model"] for r in one.requests} == {"alpha"}
    assert {r["body"]["model"] for r in two.requests} == {"beta"} and {r["auth"] for r in two.requests} == {
        "Bearer second"
    }
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert set(data["config"]["agent_stats"]) == {"chat:alpha@one", "chat:beta@two"}


def test_evaluate_reads_the_chat_options_as_one_group(monkeypatch, tmp_path):
    import evaluate

    args = tyro.cli(
        evaluate.Args,
        args=[
            "--chat.base-url",
            "http://127.0.0.1:1/v1",
            "--chat.endpoints",
            "one",
            "http://127.0.0.1:2/v1",
            "--chat.endpoints",
            "two",
            "http://127.0.0.1:3",
            "--chat.endpoint-keys",
            "two",
            "TWO_KEY",
            "--chat.api-key-env",
            "MY_KEY",
            "--chat.max-attempts",
            "2",
            "--chat.temperature",
            "0.5",
            "--chat.no-list-moves",
            "--chat.max-tokens-per-game",
            "900",
        ],
    )
    assert args.chat == ChatSettings(
        base_url="http://127.0.0.1:1/v1",
        api_key_env="MY_KEY",
        endpoints=(("one", "http://127.0.0.1:2/v1"), ("two", "http://127.0.0.1:3")),
        endpoint_keys=(("two", "TWO_KEY"),),
        max_attempts=2,
        temperature=0.5,
        list_moves=False,
        max_tokens_per_game=900,
    )
    assert tyro.cli(evaluate.Args, args=[]).chat == ChatSettings()
    monkeypatch.setenv("TWO_KEY", "second")
    agent = make_agent("chat:m@two", chat=args.chat)
    assert (agent.url, agent.api_key) == ("http://127.0.0.1:3/v1/chat/completions", "second")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--chat.endpoints", "one"], "--chat.endpoints"),
        (["--chat.endpoint-keys", "x", "Y"], "no endpoint 'x'"),
        (["--chat.timeout", "0"], "timeout must be > 0 seconds"),
        (["--chat.fallback", "best"], "fallback must be one of"),
        (["--chat-timeout", "5"], "--chat-timeout"),
    ],
)
def test_evaluate_refuses_bad_chat_options(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        _evaluate(tmp_path, "--agents", "random,greedy", *argv)
    assert exit_.value.code != 0
    assert message in capsys.readouterr().err
    assert not (tmp_path / "tournament.json").exists()


def test_ray_keeps_the_chat_stats(chat, tmp_path, capsys):
    pytest.importorskip("ray")
    _evaluate(
        tmp_path,
        "--agents",
        "chat:m,random",
        "--chat.base-url",
        chat.base_url,
        "--games",
        "4",
        "--chunk-games",
        "2",
        "--ray",
    )
    data = json.loads((tmp_path / "tournament.json").read_text())
    stats = data["config"]["agent_stats"]["chat:m"]
    assert stats["decisions"] > 0 and stats["requests"] == len(chat.requests) == stats["decisions"]
    lines = next(tmp_path.glob("transcript-*.jsonl")).read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(line)["outcome"] is not None for line in lines)
