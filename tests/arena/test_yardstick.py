"""The yardstick (arena.yardstick): its fixed suite, its cost, its scoring and its fairness."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from builder import redeal_hidden

import arena.yardstick as ys
from agents import make_agent
from uno_env.text import engine_prompt


@pytest.fixture(scope="module")
def suite():
    return ys.load_suite()


def test_the_stored_suite_is_the_version_and_loads_identically(suite):
    with open(ys.suite_path()) as f:
        digest = hashlib.sha256(f.read().encode()).hexdigest()
    # The version's meaning is this file: a change to it is a new version, never an edit.
    assert digest == ys.SUITE_SHA256[ys.VERSION]
    again = ys.load_suite()
    assert again == suite and again.version == ys.VERSION == "v1"
    assert len(suite.positions) >= 500 and suite.anchors == ["greedy", "heuristic"]
    for p in suite.positions:
        assert len(p.moves) == len(p.values) >= 2 and all(0.0 <= v <= 1.0 for v in p.values)
    # One schema reads and writes a position: the build's stored form is what was loaded.
    with open(ys.suite_path()) as f:
        assert [p.to_json() for p in suite.positions] == json.load(f)["positions"]


def test_positions_replay_exactly_and_a_changed_one_is_refused(suite):
    for p in suite.positions[:5]:
        engine = ys.position_engine(p, suite.rules)
        assert set(np.flatnonzero(engine.legal_mask[0]).tolist()) == set(p.moves)
    p = next(p for p in suite.positions if len(p.actions) >= 2)
    for bad in (dataclasses.replace(p, actions=p.actions[:-1]), dataclasses.replace(p, rng_state=p.rng_state + 1)):
        with pytest.raises(ValueError, match="no longer replays to the stored round"):
            ys.position_engine(bad, suite.rules)


def test_agreement_and_regret_on_a_hand_made_position():
    p = ys.Position(0, (), 0, "", moves=(3, 7, 9), values=(0.5, 0.62, 0.62))
    assert ys.score_choice(p, 7) == (True, 0.0)
    assert ys.score_choice(p, 9) == (True, 0.0)  # a tie with the best counts as agreement
    agree, regret = ys.score_choice(p, 3)
    assert not agree and regret == pytest.approx(0.12, rel=1e-4)
    with pytest.raises(ValueError, match=r"action 4 is not one of the position's legal moves \[3, 7, 9\]"):
        ys.score_choice(p, 4)
    score = ys.PositionScore([7, 3, 9, 3], np.array([True, False, True, False]), np.array([0.0, 0.12, 0.0, 0.12]), 0.0)
    share, lo, hi = score.agreement
    half = 1.959963984540054 * np.std([1, 0, 1, 0], ddof=1) / 2
    assert share == 0.5 and (lo, hi) == pytest.approx((0.5 - half, 0.5 + half), rel=1e-4)
    assert score.mean_regret[0] == pytest.approx(0.06, rel=1e-4)


def test_the_calibration_curve_passes_its_agents_and_falls_with_regret(suite):
    points = suite.calibration["points"]
    for regret, rating, _ in points:
        assert ys.curve_rating(points, regret)[0] == pytest.approx(rating, rel=1e-4)
    assert ys.curve_rating(points, 0.01)[0] > ys.curve_rating(points, 0.05)[0]
    # Between two agents: linear in log(regret), with the larger of their leave-one-out errors.
    hand = [(0.01, 1700.0, 5.0), (0.04, 1500.0, 30.0)]
    assert ys.curve_rating(hand, 0.02) == pytest.approx((1600.0, 30.0), rel=1e-4)
    assert ys.curve_rating(hand, 0.005)[0] == pytest.approx(1800.0, rel=1e-4)  # the end stretch, extended
    assert ys.leave_one_out([*hand, (0.02, 1650.0, 0.0)]) == pytest.approx([100.0, 100.0, -50.0], rel=1e-4)
    r, lo, hi = ys.positions_rating(hand, (0.02, 0.02, 0.02))
    assert r == pytest.approx(1600.0) and hi - r == pytest.approx(1.959963984540054 * 30.0, rel=1e-4)


class PromptAgent:
    """A fair agent that reads what a chat model reads (its seat's prompt) and answers from it."""

    fair_engine_access = True
    name = "prompt"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def act(self, observation, action_mask, rng):
        raise AssertionError("the yardstick asks an agent with engine access through act_in")

    def act_in(self, engine, i, rng):
        prompt = engine_prompt(engine, i, limit=40)
        self.prompts.append(prompt)
        moves = np.flatnonzero(engine.legal_mask[i])
        return int(moves[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % moves.size])


@pytest.mark.parametrize("spec", ["search:64", "heuristic", "prompt"])
def test_a_fair_agents_answer_does_not_change_when_the_hidden_cards_are_redealt(suite, spec):
    agent = PromptAgent() if spec == "prompt" else make_agent(spec, suite.rules, num_players=2)
    history = ys._history_for(agent)
    checked = 0
    for k, p in enumerate(suite.positions[:12]):
        engine = ys.position_engine(p, suite.rules, history)
        twin = copy.deepcopy(engine)
        if not redeal_hidden(twin, 0, p.seat, np.random.default_rng(k)):
            continue
        answers = [ys.ask_position(agent, e, ys.position_rng(suite, k)) for e in (engine, twin)]
        assert answers[0] == answers[1]
        checked += 1
    assert checked >= 5
    if spec == "prompt":
        assert len(set(agent.prompts[0::2])) > 1 and agent.prompts[0::2] == agent.prompts[1::2]


class RowsAgent(PromptAgent):
    """A ``PromptAgent`` that answers many games in one call, as a chat agent does."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def act_in_rows(self, engine, rows, rngs):
        self.calls.append(len(rows))
        return [self.act_in(engine, i, g) for i, g in zip(rows, rngs, strict=True)]


def test_positions_asked_together_get_the_answers_asked_one_by_one(suite):
    engines = [ys.position_engine(p, suite.rules, 40) for p in suite.positions[:6]]
    together, alone = RowsAgent(), PromptAgent()
    rngs = [ys.position_rng(suite, k) for k in range(6)]
    answers = ys.ask_positions(together, engines, rngs)
    assert together.calls == [6]
    assert answers == [ys.ask_position(alone, e, ys.position_rng(suite, k)) for k, e in enumerate(engines)]
    assert together.prompts == alone.prompts


def small_suite(suite, n=3):
    return dataclasses.replace(suite, positions=suite.positions[:n])


def test_the_cost_is_printed_before_the_agent_is_asked(suite, monkeypatch, capsys, tmp_path):
    seen: list[str] = []

    class Spy(PromptAgent):
        def act_in(self, engine, i, rng):
            seen.append(capsys.readouterr().out)
            return super().act_in(engine, i, rng)

    monkeypatch.setattr(ys, "load_suite", lambda version: small_suite(suite))
    monkeypatch.setattr("agents.registry.make_agent", lambda *a, **k: Spy())
    out = tmp_path / "r.json"
    result = ys.main(ys.Args(agent="spy", parts=("positions",), out=str(out)))
    assert seen and seen[0].startswith("yardstick v1 for spy: cost: 3 position decisions + about 0 decisions")
    assert "prompt tokens" in seen[0]
    assert result is not None and len(result.positions.actions) == 3
    data = json.loads(out.read_text())
    assert data["positions"]["count"] == 3 and data["cost"]["planned_requests"] == 3
    assert "games" not in data


def test_the_full_cost_counts_both_parts(suite):
    cost = ys.plan_cost(suite, make_agent("heuristic"), sample=10)
    assert cost.positions == len(suite.positions) and cost.games == 2 * 2 * suite.definition["games"]["deals"]
    assert 1500 <= cost.requests <= 2200 and cost.prompt_tokens_per_decision > 50
    assert f"{cost.positions:,} position decisions" in cost.text()


def test_cost_only_runs_nothing(capsys, monkeypatch):
    monkeypatch.setattr(ys, "rate", lambda *a, **k: pytest.fail("cost_only must not rate"))
    assert ys.main(ys.Args(agent="heuristic", cost_only=True)) is None
    assert "cost:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agent", "nonsense"], "unknown agent 'nonsense'"),
        (["--agent", "heuristic", "--parts", "moves"], "--parts must be some of positions, games, got moves"),
        (["--agent", "heuristic", "--version", "v9"], "no yardstick suite 'v9'"),
        (["--agent", "search:0"], "bad search budget"),
    ],
)
def test_a_bad_spec_or_option_is_refused_clearly(argv, message, tmp_path):
    with pytest.raises(SystemExit, match=message):
        ys.cli([*argv, "--out", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


def test_an_unknown_option_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        ys.cli(["--agent", "heuristic", "--bogus"])
    assert exc.value.code != 0


# --- an honest rating: parts that disagree, fresh positions, the transcript ----------------------


class Memoriser:
    """An agent that looks each prompt up in the public suite and plays the oracle's best move there,
    and a random legal move anywhere else: what an endpoint that read arena/yardstick_v1.json does."""

    fair_engine_access = True
    name = "memoriser"

    def __init__(self, suite) -> None:
        self.answers = {}
        for p in suite.positions:
            prompt = engine_prompt(ys.position_engine(p, suite.rules, 0), 0, limit=40)
            self.answers[prompt] = p.moves[int(np.argmax(p.values))]
        self.looked_up = 0

    def act(self, observation, action_mask, rng):
        raise AssertionError("asked through act_in")

    def act_in(self, engine, i, rng):
        prompt = engine_prompt(engine, i, limit=40)
        if prompt in self.answers:
            self.looked_up += 1
            return int(self.answers[prompt])
        return int(rng.choice(np.flatnonzero(engine.legal_mask[i])))


def test_a_suite_memorising_agent_is_flagged_and_not_combined(suite, monkeypatch, tmp_path, capsys):
    small = small_suite(suite, 40)
    agent = Memoriser(small)
    monkeypatch.setattr(ys, "load_suite", lambda version: small)
    monkeypatch.setattr("agents.registry.make_agent", lambda *a, **k: agent)
    out = tmp_path / "memo.json"
    result = ys.main(ys.Args(agent="memoriser", out=str(out)))
    assert agent.looked_up == 40 and float(result.positions.regret.sum()) == 0.0
    assert result.parts_consistent() is False and result.combined() is None
    table = capsys.readouterr()
    assert "| **combined rating: not given** | **parts disagree** |" in table.out
    assert "warning: the parts disagree: positions rate" in table.out and "--fresh SEED" in table.err
    data = json.loads(out.read_text())
    assert data["parts_consistent"] is False and data["combined"] is None
    assert "95% intervals that do not meet" in data["warning"]


def test_parts_that_agree_are_combined():
    positions = ys.PositionScore([0], np.zeros(4, bool), np.full(4, 0.0125), 0.0)
    result = ys.YardstickResult(
        "v1", "x", positions, calibration={"points": [(0.02, 1600.0, 10.0), (0.01, 1700.0, 10.0)]}
    )
    assert result.parts_consistent() is None and result.combined() is not None  # one part: nothing to compare
    assert result.to_dict()["parts_consistent"] is None and "warning" not in result.to_dict()


def test_fresh_draws_and_scores_private_positions_with_the_oracles_cost_first(suite, monkeypatch, tmp_path, capsys):
    printed: list[str] = []
    draw = ys.draw_positions

    def spy(*a, **k):
        printed.append(capsys.readouterr().out)
        return draw(*a, **k)

    monkeypatch.setattr(ys, "draw_positions", spy)
    out = tmp_path / "fresh.json"
    args = ys.Args(agent="heuristic", parts=("positions",), out=str(out), fresh=12345, fresh_positions=3)
    args.fresh_rollouts = 16
    result = ys.main(args)
    assert printed and printed[0].startswith(
        "yardstick v1 --fresh 12345 for heuristic: oracle cost: 3 fresh positions from seed 12345"
    )
    assert "16 play-outs" in printed[0] and " s at the pace v1 was built at" in printed[0]
    assert result is not None and len(result.positions.actions) == 3
    data = json.loads(out.read_text())
    assert data["version"] == "v1 --fresh 12345" and data["positions"]["count"] == 3
    assert data["fresh"]["seed"] == 12345 and data["fresh"]["rollouts"] == 16 and data["fresh"]["evaluated"] >= 3
    fresh = ys.fresh_suite(suite, 12345, 3, 16)
    assert {p.digest for p in fresh.positions}.isdisjoint(p.digest for p in suite.positions)
    assert fresh.definition["games"]["seed"] != suite.definition["games"]["seed"]  # the deals are private too
    assert [p.to_json() for p in fresh.positions] == [
        p.to_json() for p in ys.fresh_suite(suite, 12345, 3, 16).positions
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--fresh", "49"], "--fresh 49 is the seed the public suite v1 was drawn from"),
        (["--fresh", "7", "--fresh-positions", "1"], "--fresh-positions must be an integer in 2..2,000, got 1"),
        (["--fresh", "7", "--fresh-rollouts", "0"], "--fresh-rollouts must be an integer in 1..65,536, got 0"),
    ],
)
def test_a_bad_fresh_option_is_refused_clearly(argv, message, tmp_path):
    with pytest.raises(SystemExit, match=re.escape(message)):
        ys.cli(["--agent", "heuristic", *argv, "--out", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


class Endpoint:
    """A chat endpoint on 127.0.0.1 answering every request with ``reply`` and ``usage``."""

    def __init__(self, reply: str = "1", usage=None) -> None:
        answer = {"choices": [{"message": {"role": "assistant", "content": reply}}]}
        answer["usage"] = usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 1}
        data = json.dumps(answer).encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint(request):
    server = Endpoint(**getattr(request, "param", {}))
    yield server
    server.close()


def test_a_chat_rating_comes_with_its_transcript(suite, monkeypatch, tmp_path, endpoint, capsys):
    monkeypatch.setattr(ys, "load_suite", lambda version: small_suite(suite))
    out = tmp_path / "chat.json"
    ys.cli(["--agent", "chat:m", "--parts", "positions", "--out", str(out), "--chat.base-url", endpoint.base_url])
    data = json.loads(out.read_text())
    path = tmp_path / "chat.transcript.jsonl"
    assert data["transcript"] == str(path) and data["agent_stats"]["requests"] == 3
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 3 and {line["run_id"] for line in lines} == {data["run_id"]}
    assert all(line["model"] == "m" and "Legal moves:" in line["decisions"][0]["prompt"] for line in lines)
    agent = make_agent("chat:m", suite.rules, chat=ys.ChatSettings(base_url=endpoint.base_url))
    agent.transcripts = [{"game": k, "seat": 0, "decisions": [{"prompt": "x" * 1000}]} for k in range(10)]
    cut = ys.write_transcript(agent, str(tmp_path / "cut.jsonl"), "r", limit=3000)
    kept = [json.loads(line) for line in open(cut)]
    assert len(kept) == 3 and kept[-1] == {"run_id": "r", "truncated": True, "games_left_out": 8, "limit_bytes": 3000}


@pytest.mark.parametrize("endpoint", [{"usage": [10, 1]}], indirect=True)
def test_a_malformed_usage_stops_the_yardstick_without_a_traceback(suite, monkeypatch, tmp_path, endpoint, capsys):
    monkeypatch.setattr(ys, "load_suite", lambda version: small_suite(suite))
    out = tmp_path / "chat.json"
    argv = ["--agent", "chat:m", "--parts", "positions", "--out", str(out), "--chat.base-url", endpoint.base_url]
    with pytest.raises(SystemExit, match="usage must be an object of token counts, got list"):
        ys.cli([*argv, "--chat.backoff", "0"])
    assert not out.exists() and (tmp_path / "chat.transcript.jsonl").exists()


def test_fresh_cost_only_prices_the_oracle_and_draws_nothing(monkeypatch, capsys):
    monkeypatch.setattr(ys, "draw_positions", lambda *a, **k: pytest.fail("cost_only must not draw"))
    assert ys.main(ys.Args(agent="heuristic", cost_only=True, fresh=5, fresh_positions=100)) is None
    first, second = capsys.readouterr().out.splitlines()[:2]
    assert first.startswith("yardstick v1 --fresh 5 for heuristic: oracle cost: 100 fresh positions from seed 5")
    assert "8,192 play-outs" in first and second.startswith("yardstick v1 --fresh 5 for heuristic: cost: 100 position")


def test_the_calibration_refuses_a_pretrained_that_ladder_v2_never_rated():
    """The curve's points are ladder v2 ratings; v2 rated the `pretrained` of 2026-11-25, not the
    weights shipped since, so rebuilding the calibration with them is refused before any game."""
    from tools.yardstick_build import calibrate

    with pytest.raises(ValueError, match="other weights of the rung pretrained"):
        calibrate(ys.suite_path())
