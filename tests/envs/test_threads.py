"""``threads=N``: a batch stepped in chunks on N threads equals the same batch on one thread, bit for bit."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.rlcard_rule import RLCardRuleAgent
from uno_env import Engine, RandomAgent, UnoRules, sample_legal
from uno_env.checks import MAX_THREADS
from uno_env.gym_env import UnoVectorEnv
from uno_env.sb3_vec_env import UnoSB3VecEnv
from uno_env.threads import Chunks

RULES = UnoRules()
THREADS = (1, 2, 3)  # 3: pieces of uneven sizes


def _groups(num_players: int) -> list:
    """Heuristic, rlcard_rule and random opponents, one group of games each (603 games: uneven pieces;
    enough that each agent's rows are shared out too)."""
    seats = num_players - 1
    return [
        ([HeuristicAgent(RULES)] * seats, 241),
        ([RLCardRuleAgent(RULES)] * seats, 212),
        ([RandomAgent()] * seats, 150),
    ]


def _same_engines(engines: list[Engine]) -> None:
    """Every engine's whole state (games, generators, outputs) equals the first's, byte for byte."""
    for e in engines[1:]:
        assert e.buf.tobytes() == engines[0].buf.tobytes()


@pytest.mark.parametrize("num_players", [2, 4])
def test_sb3_env_on_threads_equals_one_thread(num_players):
    envs = [
        UnoSB3VecEnv(603, num_players, rules=RULES, learner_seat="random", opponents=_groups(num_players), threads=t)
        for t in THREADS
    ]
    for env in envs:
        env.seed(11)
    first = [env.reset() for env in envs]
    for obs in first[1:]:
        np.testing.assert_array_equal(obs, first[0])
    rng = np.random.default_rng(5)
    finished = 0
    for _ in range(300):
        masks = [env.action_masks() for env in envs]
        actions = sample_legal(masks[0], rng)
        results = []
        for env in envs:
            env.step_async(actions.copy())
            results.append(env.step_wait())
        obs, rewards, dones, infos = results[0]
        for m, (o, r, d, i) in zip(masks[1:], results[1:], strict=True):
            np.testing.assert_array_equal(m, masks[0])
            np.testing.assert_array_equal(o, obs)
            np.testing.assert_array_equal(r, rewards)
            np.testing.assert_array_equal(d, dones)
            for b in np.flatnonzero(dones):
                np.testing.assert_array_equal(i[b]["terminal_observation"], infos[b]["terminal_observation"])
        _same_engines([env.venv.engine for env in envs])
        for env in envs[1:]:
            np.testing.assert_array_equal(env.venv.learner_seats, envs[0].venv.learner_seats)
            assert env.venv.np_random.bit_generator.state == envs[0].venv.np_random.bit_generator.state
        finished += int(dones.sum())
    assert finished > 0  # autoreset was exercised


def test_vector_env_next_step_on_threads_equals_one_thread():
    envs = [UnoVectorEnv(603, 2, rules=RULES, opponents=_groups(2), threads=t) for t in THREADS]
    outs = [env.reset(seed=3) for env in envs]
    rng = np.random.default_rng(8)
    for _ in range(200):
        actions = sample_legal(envs[0].action_masks(), rng)
        outs = [env.step(actions.copy()) for env in envs]
        for out in outs[1:]:
            for got, want in zip(out[:4], outs[0][:4], strict=True):
                np.testing.assert_array_equal(got, want)
            assert out[4].keys() == outs[0][4].keys()
        for env in envs[1:]:
            np.testing.assert_array_equal(env.action_masks(), envs[0].action_masks())
        _same_engines([env.engine for env in envs])


@pytest.mark.parametrize("num_players", [2, 4])
def test_engine_on_threads_equals_one_thread(num_players):
    # A history and the engine's own autoreset; 5 games: too few to share out.
    for num_envs in (5, 130):
        engines = [Engine(num_envs, num_players, seed=2, autoreset=True, history=8, threads=t) for t in (*THREADS, 7)]
        rng = np.random.default_rng(num_players)
        for _ in range(250):
            actions = sample_legal(engines[0].legal_mask, rng)
            actions[rng.random(num_envs) < 0.1] = -1  # some games left alone
            for e in engines:
                e.step(actions.copy())
            _same_engines(engines)
        seats = rng.integers(0, num_players, num_envs)
        some = rng.random(num_envs) < 0.5
        views = [e.observe(seats, out=np.full_like(e.observation, -1.0), games=some) for e in engines]
        for view in views[1:]:
            np.testing.assert_array_equal(view, views[0])
        for e in engines:
            e.reset(games=np.arange(num_envs) % 2 == 0)
        _same_engines(engines)


def test_threaded_engine_refuses_a_bad_step_unchanged():
    e = Engine(64, 2, seed=1, threads=2)
    before = e.snapshot()
    actions = sample_legal(e.legal_mask, np.random.default_rng(0))
    actions[-1] = int(np.flatnonzero(~e.legal_mask[-1])[0])
    with pytest.raises(ValueError, match="not legal"):
        e.step(actions)
    assert e.buf.tobytes() == before.tobytes()
    with pytest.raises(ValueError):
        e.step(actions[:10])
    assert e.buf.tobytes() == before.tobytes()
    e.step(sample_legal(e.legal_mask, np.random.default_rng(0)))
    assert e.buf.tobytes() != before.tobytes()


def test_threaded_engine_pickles_and_copies():
    e = Engine(40, 3, seed=4, threads=3)
    e.step(sample_legal(e.legal_mask, np.random.default_rng(1)))
    for clone in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert clone.threads == 3 and clone.chunks is not None and clone.chunks is not e.chunks
        assert clone.buf.tobytes() == e.buf.tobytes()
        actions = sample_legal(e.legal_mask, np.random.default_rng(2))
        clone.step(actions.copy())
        one = Engine(40, 3, seed=4)
        one.step(sample_legal(one.legal_mask, np.random.default_rng(1)))
        one.step(actions)
        assert clone.buf.tobytes() == one.buf.tobytes()


@pytest.mark.parametrize(
    "agent", [HeuristicAgent(RULES), RLCardRuleAgent(RULES), GreedyAgent(RULES), RandomAgent()], ids=lambda a: a.name
)
def test_act_chunked_equals_act(agent):
    e = Engine(301, 4, seed=9)
    rng = np.random.default_rng(0)
    for _ in range(30):
        e.step(sample_legal(e.legal_mask, rng))
    for threads in (1, 2, 3):
        r1, r2 = np.random.default_rng(7), np.random.default_rng(7)
        want = agent.act(e.observation, e.legal_mask, r1)
        got = agent.act_chunked(e.observation, e.legal_mask, r2, Chunks(threads))
        np.testing.assert_array_equal(got, want)
        assert r1.bit_generator.state == r2.bit_generator.state  # the same draws


def test_chunks_cover_every_row_once_and_hand_back_an_error():
    def add_one(out, lo, hi):
        out[lo:hi] += 1

    def fail_at_90(out, lo, hi):
        if lo <= 90 < hi:
            raise ArithmeticError("chunk failed")

    for threads in (1, 2, 3, 5):
        for n in (1, 7, 100, 1001):
            out = np.zeros(n, np.int64)
            Chunks(threads).run(n, add_one, out)
            assert (out == 1).all()
        with pytest.raises(ArithmeticError, match="chunk failed"):
            Chunks(threads).run(100, fail_at_90, out)


BAD_THREADS = [0, -1, MAX_THREADS + 1, 1.5, 2.0, True, "2", None]


@pytest.mark.parametrize("threads", BAD_THREADS, ids=repr)
@pytest.mark.parametrize(
    "make",
    [
        lambda t: Engine(4, 2, threads=t),
        lambda t: UnoVectorEnv(4, 2, threads=t),
        lambda t: UnoSB3VecEnv(4, 2, threads=t),
    ],
    ids=["Engine", "UnoVectorEnv", "UnoSB3VecEnv"],
)
def test_bad_threads_refused(make, threads):
    with pytest.raises(ValueError, match=rf"threads .* must be an integer in 1\.\.{MAX_THREADS}, got {threads!r}"):
        make(threads)


def test_parallel_and_threads_refused_together():
    with pytest.raises(ValueError, match="parallel=True .* threads=2"):
        Engine(4, 2, parallel=True, threads=2)
    assert Engine(4, 2, parallel=True, threads=1).threads == 1
