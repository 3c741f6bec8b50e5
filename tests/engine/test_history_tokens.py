"""A seat's history as tokens (``Engine.history_tokens``, ``history_tokens_new``, ``history_form``).

- agreement: every token equals the float row of the same event (``Engine.history``) column
  by column, over random batched play at 2 to 4 players and the rule sets of test_history;
- leaks: hidden twins give the seat the same tokens;
- a batch equals its games one by one; the new-event reads concatenated over a seat's decisions
  equal its window; plain Python kernels give the same tokens;
- the envs give the tokens in their observation and space; bad options are refused.
"""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from builder import redeal_hidden
from helpers import ROOT
from test_history import PLAYERS_AND_RULES, TWIN_RULES, field

from agents import sample_legal
from uno_env import Engine, UnoRules
from uno_env.actions import DRAW
from uno_env.engine import layout as L
from uno_env.engine.history import (
    HISTORY_TOKEN_FIELDS,
    HISTORY_TOKEN_SIZE,
    HISTORY_TOKEN_VOCAB,
    TF_DRAWN_PLAYED,
    TF_FLAG,
    TF_GUILTY,
    TK_ACTOR,
    TK_CARD,
    TK_COLOR,
    TK_FLAGS,
    TK_KIND,
    TK_TARGET,
    TK_VALUE,
    TOKEN_HIDDEN_CARD,
    TOKEN_MAX_VALUE,
)
from uno_env.spaces import history_spaces


def _one(row: np.ndarray, name: str) -> int:
    """The one-hot field's index + 1, or 0 when it is all zero."""
    f = field(row, name)
    return int(np.argmax(f)) + 1 if f.any() else 0


def assert_token_is_row(tok: np.ndarray, row: np.ndarray) -> None:
    """One event as a token and as a float row (test_history's fields) say the same."""
    kind = _one(row, "kind")
    assert tok[TK_KIND] == kind
    assert tok[TK_ACTOR] == _one(row, "actor")
    assert tok[TK_COLOR] == _one(row, "color_before")
    card = _one(row, "card")
    # A card the row leaves out is either no card or one the seat may not see (a draw).
    assert tok[TK_CARD] == card or (card == 0 and tok[TK_CARD] == TOKEN_HIDDEN_CARD)
    assert bool(tok[TK_FLAGS] & TF_DRAWN_PLAYED) == bool(field(row, "drawn_played")[0])
    assert bool(tok[TK_FLAGS] & TF_FLAG) == bool(field(row, "flag")[0])
    assert bool(tok[TK_FLAGS] & TF_GUILTY) == bool(field(row, "guilty")[0])
    targets = np.flatnonzero(field(row, "target"))
    # One target, or the first winner clockwise from the reader (and the value counts them).
    assert tok[TK_TARGET] == (targets[0] + 1 if targets.size else 0)
    if kind - 1 in _WINNER_KINDS:
        assert tok[TK_VALUE] == targets.size
    else:
        if field(row, "color").any():
            assert tok[TK_VALUE] == _one(row, "color")
        elif field(row, "reason").any():
            assert tok[TK_VALUE] == _one(row, "reason")
        elif kind - 1 == _PENALTY:
            assert tok[TK_VALUE] >= 1  # the action tried, + 1
        else:
            assert tok[TK_VALUE] == min(int(field(row, "number")[0]), TOKEN_MAX_VALUE)


_WINNER_KINDS = (L.EV_ROUND_END, L.EV_MATCH_END)
_PENALTY = L.EV_PENALTY


def assert_tokens_are_rows(engine: Engine, seat: int) -> int:
    """Every game's tokens against its float rows for ``seat``; returns the events compared."""
    K = engine.history_length
    tokens = engine.history_tokens(seat)
    rows, _ = engine.history(seat)
    compared = 0
    for b in range(engine.num_envs):
        total = engine.history_count(b)
        held = min(total, K)
        assert not tokens[b, : K - held].any()  # padding before the round's first event
        for j in range(held):  # rows newest first, tokens newest last
            assert_token_is_row(tokens[b, K - 1 - j], rows[b, j])
            compared += 1
    return compared


@pytest.mark.parametrize("players, rules", PLAYERS_AND_RULES, ids=lambda x: str(x)[:40])
def test_tokens_say_what_the_float_rows_say(players, rules):
    engine = Engine(6, players, rules, seed=players, history=64)
    rng = np.random.default_rng(players)
    compared = hidden = 0
    for _ in range(150):
        done = engine.terminated | engine.truncated
        if done.any():
            engine.reset(games=np.flatnonzero(done))
        engine.step(sample_legal(engine.legal_mask, rng))
        seat = int(rng.integers(players))
        compared += assert_tokens_are_rows(engine, seat)
        hidden += int((engine.history_tokens(seat)[..., TK_CARD] == TOKEN_HIDDEN_CARD).sum())
    assert compared > 1000
    assert (hidden > 0) != rules.open_hands  # others' draws are hidden, unless every hand is face up


def test_tokens_are_relative_to_the_reader_and_in_their_vocabularies():
    engine = Engine(8, 4, UnoRules.preset("house", hand_size=4), seed=3, history=32)
    rng = np.random.default_rng(3)
    for _ in range(60):
        engine.step(sample_legal(engine.legal_mask, rng))
        engine.step(np.where(engine.terminated | engine.truncated, -1, sample_legal(engine.legal_mask, rng)))
        last = engine.history_tokens(0)[:, -1]
        for seat in range(1, 4):  # the same event, its actor seen from another seat
            other = engine.history_tokens(seat)[:, -1]
            acted = last[:, TK_ACTOR] > 0
            np.testing.assert_array_equal((last[acted, TK_ACTOR] - 1 - seat) % 4, other[acted, TK_ACTOR] - 1)
        for seat in range(4):
            tokens = engine.history_tokens(seat)
            assert (tokens >= 0).all() and (tokens < np.array(HISTORY_TOKEN_VOCAB)).all()
    assert len(HISTORY_TOKEN_VOCAB) == HISTORY_TOKEN_SIZE == len(HISTORY_TOKEN_FIELDS)


@pytest.mark.parametrize("rules", TWIN_RULES[::2], ids=lambda r: r.deck)
def test_hidden_twins_give_the_seat_the_same_tokens(rules):
    """As test_history's twins: everything seat s cannot see redealt, the same actions in both."""
    engine = Engine(6, 3, rules, seed=11, history=48)
    rng = np.random.default_rng(11)
    compared = 0
    for step in range(100):
        done = engine.terminated | engine.truncated
        if done.any():
            engine.reset(games=np.flatnonzero(done))
        engine.step(sample_legal(engine.legal_mask, rng))
        if step % 10:
            continue
        for seat in range(3):
            twin = copy.deepcopy(engine)
            for b in range(engine.num_envs):
                redeal_hidden(twin, b, seat, rng)
            same = np.ones(engine.num_envs, bool)
            for _ in range(6):
                live = same & ~(engine.terminated | engine.truncated) & (engine.current_player != seat)
                actions = sample_legal(engine.legal_mask, rng)
                actions[~(live & twin.legal_mask[np.arange(6), actions])] = -1
                if (actions < 0).all():
                    break
                engine.step(actions)
                twin.step(actions)
                same &= (engine.observe(seat) == twin.observe(seat)).all(axis=1)
                tokens, twin_tokens = engine.history_tokens(seat), twin.history_tokens(seat)
                (new, n), (twin_new, twin_n) = engine.history_tokens_new(seat), twin.history_tokens_new(seat)
                for b in np.flatnonzero(same):
                    np.testing.assert_array_equal(tokens[b], twin_tokens[b])
                    np.testing.assert_array_equal(new[b], twin_new[b])
                    assert n[b] == twin_n[b]
                    compared += 1
    assert compared > 100


def test_open_hands_twins_give_other_tokens():
    """Control: with every hand face up a seat sees others' draws, so redealt twins differ."""
    rules = UnoRules(open_hands=True, hand_size=4)
    engine = Engine(6, 2, rules, seed=4, history=32)
    rng = np.random.default_rng(4)
    differ = 0
    for _ in range(40):
        engine.step(np.where(engine.terminated | engine.truncated, -1, sample_legal(engine.legal_mask, rng)))
        twin = copy.deepcopy(engine)
        for b in range(6):
            redeal_hidden(twin, b, 0, rng)
        actions = np.full(6, -1, np.int64)
        ok = ~(engine.terminated | engine.truncated) & (engine.current_player == 1)
        ok &= engine.legal_mask[:, DRAW] & twin.legal_mask[:, DRAW]
        actions[ok] = DRAW
        if not ok.any():
            continue
        engine.step(actions)
        twin.step(actions)
        differ += int((engine.history_tokens(0)[ok] != twin.history_tokens(0)[ok]).any(axis=(1, 2)).sum())
    assert differ > 0


def test_a_batch_equals_its_games_one_by_one():
    rules = UnoRules.preset("house", hand_size=5)
    batch_engine = Engine(3, 3, rules, seed=[5, 6, 7], history=20)
    singles = [Engine(1, 3, rules, seed=[s], history=20) for s in (5, 6, 7)]
    rng = np.random.default_rng(2)
    for _ in range(80):
        actions = sample_legal(batch_engine.legal_mask, rng)
        actions[batch_engine.terminated | batch_engine.truncated] = -1
        batch_engine.step(actions)
        for seat in range(3):
            tokens = batch_engine.history_tokens(seat)
            new, n = batch_engine.history_tokens_new(seat, out=np.zeros((3, 4, HISTORY_TOKEN_SIZE), np.int8))
            for b, e in enumerate(singles):
                if seat == 0 and actions[b] >= 0:
                    e.step(actions[b : b + 1])
                np.testing.assert_array_equal(tokens[b], e.history_tokens(seat)[0])
                single_new, single_n = e.history_tokens_new(seat, out=np.zeros((1, 4, HISTORY_TOKEN_SIZE), np.int8))
                np.testing.assert_array_equal(new[b], single_new[0])
                assert n[b] == single_n[0]


@pytest.mark.parametrize("players, rules", [PLAYERS_AND_RULES[0], PLAYERS_AND_RULES[3], PLAYERS_AND_RULES[5]])
def test_new_events_over_a_seats_decisions_make_its_window(players, rules):
    """A recurrent reader: at each of its decisions a seat reads the events new to it; what it
    has read this round, in order, is the window (K holds the whole round here)."""
    K = 1024
    engine = Engine(4, players, rules, seed=21, history=K)
    rng = np.random.default_rng(21)
    read: list[list[list[np.ndarray]]] = [[[] for _ in range(players)] for _ in range(4)]
    decisions = 0
    for _ in range(200):
        done = engine.terminated | engine.truncated
        if done.any():
            engine.reset(games=np.flatnonzero(done))
            for b in np.flatnonzero(done):
                read[b] = [[] for _ in range(players)]
        seats = engine.current_player.astype(np.int64)
        new, n = engine.history_tokens_new(seats, out=np.zeros((4, 8, HISTORY_TOKEN_SIZE), np.int8))
        window = engine.history_tokens(seats)
        for b in range(4):
            s = int(seats[b])
            read[b][s].extend(new[b, : min(n[b], 8)])
            total = engine.history_count(b)
            if n[b] <= 8:
                np.testing.assert_array_equal(
                    np.array(read[b][s]).reshape(-1, HISTORY_TOKEN_SIZE), window[b, K - total :]
                )
                assert not new[b, n[b] :].any()
            else:  # more than out holds: the latest 8, and the reader knows it missed some
                np.testing.assert_array_equal(new[b], window[b, K - 8 :])
                read[b][s] = list(window[b, K - total :])
            decisions += 1
        engine.step(sample_legal(engine.legal_mask, rng))
    assert decisions == 800
    # Read twice in a row: nothing new the second time.
    engine.history_tokens_new(engine.current_player.astype(np.int64))
    _, n = engine.history_tokens_new(engine.current_player.astype(np.int64))
    assert (n == 0).all()


def test_copies_pickles_and_positions_keep_or_clear_the_tokens():
    engine = Engine(2, 2, UnoRules(), seed=1, history=16)
    rng = np.random.default_rng(1)
    for _ in range(12):
        engine.step(sample_legal(engine.legal_mask, rng))
    engine.history_tokens_new(0)
    for other in (copy.deepcopy(engine), pickle.loads(pickle.dumps(engine))):
        np.testing.assert_array_equal(other.history_tokens(1), engine.history_tokens(1))
        assert (other.history_tokens_new(0)[1] == 0).all()
    one = Engine(1, 2, UnoRules(), seed=2, history=16)
    one.copy_game(engine, 1, 0)
    np.testing.assert_array_equal(one.history_tokens(0)[0], engine.history_tokens(0)[1])
    one.reset()  # a new round: nothing of the old one, nothing read yet
    assert (one.history_tokens_new(1)[1] == one.history_count(0)).all()
    K = one.history_length
    assert not one.history_tokens(0)[0, : K - one.history_count(0)].any()


_TOKENS_DIGEST = """
import numpy as np
from agents import sample_legal
from uno_env import Engine, UnoRules
from uno_env.actions import DRAW
e = Engine(3, 3, UnoRules.preset("house", hand_size=4), seed=2, history=16)
rng = np.random.default_rng(2)
acc = 0
for _ in range(40):
    e.step(np.where(e.terminated | e.truncated, -1, sample_legal(e.legal_mask, rng)))
    acc = (acc * 31 + int((e.history_tokens(1).astype(np.int64) * np.arange(16 * 7).reshape(16, 7)).sum())) % 2**61
    acc = (acc * 31 + int(e.history_tokens_new(2)[1].sum())) % 2**61
print(acc)
"""


def test_plain_python_kernels_give_the_same_tokens():
    out = {}
    for jit in ("0", "1"):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        env.pop("NUMBA_DISABLE_JIT", None)
        if jit == "1":
            env["NUMBA_DISABLE_JIT"] = "1"
        proc = subprocess.run(
            [sys.executable, "-c", _TOKENS_DIGEST], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[jit] = proc.stdout.split()
    assert out["1"] == out["0"]


# --- the envs -------------------------------------------------------------------------------


def test_gymnasium_envs_give_the_tokens_in_their_space():
    from uno_env.gym_env import UnoEnv, UnoVectorEnv

    env = UnoEnv(num_players=3, history=12, history_form="tokens")
    obs, info = env.reset(seed=3)
    assert set(obs) == {"observation", "history_tokens"} and env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs["history_tokens"], env.engine.history_tokens(env.learner_seat)[0])
    venv = UnoVectorEnv(6, num_players=2, history=12, history_form="tokens", autoreset_mode="same_step")
    obs, info = venv.reset(seed=4)
    rng = np.random.default_rng(4)
    finals = 0
    for _ in range(300):
        assert venv.single_observation_space.contains({k: v[0] for k, v in obs.items()})
        np.testing.assert_array_equal(obs["history_tokens"], venv.engine.history_tokens(venv.driver.seats))
        obs, _, term, trunc, info = venv.step(sample_legal(info["action_mask"].astype(bool), rng))
        for b in np.flatnonzero(term | trunc):
            final = info["final_obs"][b]
            assert set(final) == {"observation", "history_tokens"} and final["history_tokens"][-1].any()
            finals += 1
    assert finals > 0


def test_pettingzoo_and_sb3_envs_give_the_tokens():
    from pettingzoo.test import api_test

    import uno_env
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    api_test(uno_env.env(num_players=3, rules="house", history=16, history_form="tokens"), num_cycles=200)
    env = uno_env.raw_env(num_players=3, history=16, history_form="tokens")
    env.reset(seed=2)
    space = env.observation_space("player_0")
    assert space["history_tokens"].dtype == np.int8 and "history" not in space.spaces
    for _ in range(40):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        seat = env.possible_agents.index(env.agent_selection)
        np.testing.assert_array_equal(obs["history_tokens"], env.unwrapped._engine.history_tokens(seat)[0])
        assert space.contains(obs)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    venv = UnoSB3VecEnv(3, history=8, history_form="tokens")
    assert venv.reset()["history_tokens"].shape == (3, 8, HISTORY_TOKEN_SIZE)
    assert venv.observation_space["history_tokens"].dtype == np.int8


def test_history_spaces_bound_the_tokens_by_their_vocabularies():
    box = history_spaces(5, "tokens")["history_tokens"]
    assert box.shape == (5, HISTORY_TOKEN_SIZE) and box.dtype == np.int8
    np.testing.assert_array_equal(box.high[0], np.array(HISTORY_TOKEN_VOCAB) - 1)
    assert set(history_spaces(5)) == {"history", "history_counts"}


# --- refused --------------------------------------------------------------------------------


def test_bad_token_reads_and_options_are_refused():
    import uno_env
    from uno_env.gym_env import UnoEnv, UnoVectorEnv

    engine = Engine(3, 2, UnoRules(), seed=0, history=5)
    with pytest.raises(ValueError, match="keeps no history"):
        Engine(2, 2, UnoRules()).history_tokens(0)
    with pytest.raises(ValueError, match="keeps no history"):
        Engine(2, 2, UnoRules()).history_tokens_new(0)
    with pytest.raises(ValueError, match=r"seats must be integers in 0\.\.1"):
        engine.history_tokens(2)
    with pytest.raises(ValueError, match=r"seats must be integers in 0\.\.1, got 5 for game 1"):
        engine.history_tokens(np.array([0, 5, 1], np.int64))
    reused = engine.history_tokens(0, out=np.zeros((3, 5, HISTORY_TOKEN_SIZE), np.int8))  # then read as an env does
    with pytest.raises(ValueError, match=r"seats must be integers in 0\.\.1, got 7 for game 0"):
        engine.history_tokens(np.array([7, 0, 0], np.int64), out=reused)
    with pytest.raises(ValueError, match=r"seats must be integers in 0\.\.1"):
        engine.history_tokens(np.array([0, 0, 3], np.int32), out=reused)
    np.testing.assert_array_equal(engine.history_tokens(np.array([1, 1, 1]), out=reused), engine.history_tokens(1))
    before = engine._history_read.copy()
    with pytest.raises(ValueError, match=r"seats must be integers in 0\.\.1, got -1 for game 2"):
        engine.history_tokens_new(np.array([0, 1, -1], np.int64))
    np.testing.assert_array_equal(engine._history_read, before)  # nothing read
    with pytest.raises(ValueError, match=r"out must be a writeable C-contiguous int8 array of shape \(3, 5, 7\)"):
        engine.history_tokens(0, out=np.zeros((3, 5, HISTORY_TOKEN_SIZE), np.float32))
    with pytest.raises(ValueError, match=r"out must be a writeable C-contiguous int8 array of shape \(3, 5, 7\)"):
        engine.history_tokens(0, out=np.zeros((3, 4, HISTORY_TOKEN_SIZE), np.int8))
    with pytest.raises(ValueError, match=r"out must be an int8 array of shape \(3, M, 7\) with M >= 1"):
        engine.history_tokens_new(0, out=np.zeros((3, 0, HISTORY_TOKEN_SIZE), np.int8))
    with pytest.raises(ValueError, match=r"out must be a writeable C-contiguous int8 array of shape \(3, 2, 7\)"):
        engine.history_tokens_new(0, out=np.zeros((2, 2, HISTORY_TOKEN_SIZE), np.int8))
    with pytest.raises(ValueError, match=r"history_form must be one of \('rows', 'tokens'\)"):
        engine.history_observation(0, "floats")
    with pytest.raises(ValueError, match=r"length must be an integer in 1\.\.5"):
        engine.history_observation(0, "tokens", 6)
    for make in (
        lambda f, k: UnoEnv(history=k, history_form=f),
        lambda f, k: UnoVectorEnv(2, history=k, history_form=f),
        lambda f, k: uno_env.raw_env(history=k, history_form=f),
    ):
        with pytest.raises(ValueError, match=r"history_form must be one of \('rows', 'tokens'\)"):
            make("token", 4)
        with pytest.raises(ValueError, match=r"history_form='tokens' needs history=K"):
            make("tokens", 0)
    with pytest.raises(ValueError, match="history_form must be one of"):
        history_spaces(4, form=None)  # type: ignore[arg-type]
