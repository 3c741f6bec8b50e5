"""API robustness: copies (pickle, deepcopy) of an engine, a PettingZoo env or a Gymnasium env
mid-game continue as the same game; engines in threads do not interfere; a seed gives the same
games in every process and at every batch size; a finished game cannot be stepped; bad seeds,
batch sizes, player counts, method arguments and env actions raise a clear ``ValueError`` and
change nothing; rules whose deal could never turn a first card are refused instead of hanging."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest
from helpers import OUTPUTS, ROOT, engine_view, play_digest

from uno_env import Engine, UnoEnv, UnoRules, UnoVectorEnv, env, raw_env, sample_legal
from uno_env.engine import game_seeds

RULES = UnoRules.preset("official", uno_call="explicit", allow_doubles=True, hand_size=5)
CLONES = {"pickle": lambda x: pickle.loads(pickle.dumps(x)), "deepcopy": copy.deepcopy}


# --- copies ----------------------------------------------------------------------------------


@pytest.mark.parametrize("clone", list(CLONES))
def test_engine_copy_mid_game_continues_as_the_same_game(clone):
    e = Engine(6, 4, RULES, seed=3, autoreset=True, record=True)
    rng = np.random.default_rng(0)
    for _ in range(80):
        e.step(sample_legal(e.legal_mask, rng))
    c = CLONES[clone](e)
    assert engine_view(c) == engine_view(e)
    for name in OUTPUTS + ("_g", "_hands", "_piles", "_rng"):
        assert not np.shares_memory(getattr(c, name), getattr(e, name)), f"{name} is shared with the original"
    for _ in range(300):
        actions = sample_legal(e.legal_mask, rng)
        res_e, res_c = e.step(actions), c.step(actions.copy())
        assert res_c.observation is c.observation and res_c.legal_mask is c.legal_mask
        for a, b in zip(res_e, res_c, strict=True):
            assert np.array_equal(a, b)
    assert engine_view(c) == engine_view(e)
    before = engine_view(e)
    c.step(sample_legal(c.legal_mask, rng))  # the copy moves on alone
    assert engine_view(e) == before and engine_view(c) != before


def _pettingzoo_view(p) -> str:
    return json.dumps(
        {
            "obs": {a: {k: v.tolist() for k, v in p.observe(a).items()} for a in p.possible_agents},
            "agents": p.agents,
            "selection": p.agent_selection,
            "rewards": p.rewards,
            "cumulative": p._cumulative_rewards,
            "terminations": p.terminations,
            "truncations": p.truncations,
            "infos": p.infos,
            "render": p.render(),
            "state": p.game_state(),
        }
    )


@pytest.mark.parametrize("clone", list(CLONES))
@pytest.mark.parametrize("make", [raw_env, env], ids=["raw_env", "env"])
def test_pettingzoo_copy_mid_game_continues_as_the_same_game(make, clone):
    p = make(num_players=3, rules=RULES, render_mode="ansi")
    p.reset(seed=5)
    rng = np.random.default_rng(5)

    def move(x, action):
        x.step(action)
        if not x.agents:
            x.reset()

    def next_action(x):
        agent = x.agent_selection
        if x.terminations[agent] or x.truncations[agent]:
            return None
        return int(rng.choice(np.flatnonzero(x.observe(agent)["action_mask"])))

    for _ in range(40):
        move(p, next_action(p))
    c = CLONES[clone](p)
    assert _pettingzoo_view(c) == _pettingzoo_view(p)
    for _ in range(400):
        action = next_action(p)
        move(p, action)
        move(c, action)
        assert _pettingzoo_view(c) == _pettingzoo_view(p)
    before = _pettingzoo_view(p)
    move(c, next_action(c))
    assert _pettingzoo_view(p) == before


@pytest.mark.parametrize("clone", list(CLONES))
def test_gymnasium_copy_mid_episode_continues_as_the_same_game(clone):
    g = UnoEnv(num_players=3, rules=RULES)
    g.reset(seed=8)
    rng = np.random.default_rng(8)
    for _ in range(10):
        _, _, term, trunc, _ = g.step(int(rng.choice(np.flatnonzero(g.action_masks()))))
        if term or trunc:
            g.reset()
    c = CLONES[clone](g)
    for _ in range(300):
        action = int(rng.choice(np.flatnonzero(g.action_masks())))
        out_g, out_c = g.step(action), c.step(action)
        assert np.array_equal(out_g[0], out_c[0]) and out_g[1:4] == out_c[1:4]
        assert out_g[4].keys() == out_c[4].keys()
        assert all(np.array_equal(out_g[4][k], out_c[4][k]) for k in out_g[4])
        assert g.game_state() == c.game_state()
        if out_g[2] or out_g[3]:
            r_g, r_c = g.reset(), c.reset()
            assert np.array_equal(r_g[0], r_c[0])


# --- threads -----------------------------------------------------------------------------------


def test_engines_in_two_threads_do_not_interfere():
    jobs = [(RULES, 4, 1, 400), (UnoRules.preset("house"), 3, 2, 400), (UnoRules.preset("swap_hands"), 5, 3, 400)]
    sequential = [play_digest(*job) for job in jobs]
    for _ in range(2):
        results: list[str | None] = [None] * len(jobs)
        start = threading.Barrier(len(jobs))

        def run(k: int, results: list = results, start: threading.Barrier = start) -> None:
            results[k] = play_digest(*jobs[k], start=start)

        threads = [threading.Thread(target=run, args=(k,)) for k in range(len(jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == sequential


# --- seeds -----------------------------------------------------------------------------------

_DIGEST = """
import sys
sys.path.insert(0, {repo!r}); sys.path.insert(0, {tests!r})
from helpers import play_digest
from uno_env import UnoRules
print(play_digest(UnoRules.from_dict({rules!r}), 4, 123, 200))
"""


def test_a_seed_gives_the_same_games_in_another_process():
    code = _DIGEST.format(repo=str(ROOT), tests=str(ROOT / "tests"), rules=RULES.to_dict())
    env_vars = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env_vars["PYTHONHASHSEED"] = "12345"  # a different hash seed must not matter either
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env_vars, timeout=600, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == play_digest(RULES, 4, 123, 200)


def _play_rows(e: Engine, steps: int, first: int = 0) -> None:
    """Game i picks its moves from its own generator (number ``first + i``), so a game plays the
    same moves in any batch."""
    rngs = [np.random.default_rng(1000 + first + i) for i in range(e.num_envs)]
    for _ in range(steps):
        e.step(np.array([sample_legal(e.legal_mask[i : i + 1], rngs[i])[0] for i in range(e.num_envs)]))


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_a_seed_gives_the_same_games_at_every_batch_size(seed):
    big = Engine(8, 3, RULES, seed=seed, autoreset=True, record=True)
    _play_rows(big, 150)
    for size in (1, 3):
        small = Engine(size, 3, RULES, seed=seed, autoreset=True, record=True)
        _play_rows(small, 150)
        for b in range(size):
            assert small.game_state(b) == big.game_state(b) and small.record(b) == big.record(b)
    # A batch of one seeded with game 5's per-game seed plays game 5.
    single = Engine(1, 3, RULES, seed=[int(game_seeds(seed, 8)[5])], autoreset=True, record=True)
    _play_rows(single, 150, first=5)
    assert single.game_state(0) == big.game_state(5) and single.record(0) == big.record(5)


# --- finished games ------------------------------------------------------------------------


def test_a_finished_game_cannot_be_stepped():
    e = Engine(2, 2, UnoRules(hand_size=2), seed=4, record=True)
    rng = np.random.default_rng(0)
    while not e.terminated[0] and not e.truncated[0]:
        actions = sample_legal(e.legal_mask, rng)
        actions[1] = -1
        e.step(actions)
    state, record = e.game_state(0), e.record(0)
    for action in (0, 57, 58, 115):
        with pytest.raises(ValueError, match="round is over"):
            e.step(np.array([action, -1]))
        assert e.game_state(0) == state and e.record(0) == record
    e.step(np.array([-1, sample_legal(e.legal_mask[1:], rng)[0]]))  # -1 leaves it; the other game plays
    assert e.game_state(0) == state
    g = UnoEnv(num_players=2, rules=UnoRules(hand_size=1))
    g.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, _ = g.step(int(np.flatnonzero(g.action_masks())[0]))
        done = term or trunc
    with pytest.raises(ValueError, match="reset"):
        g.step(57)
    p = raw_env(num_players=2, rules=UnoRules(hand_size=1))
    p.reset(seed=0)
    for agent in p.agent_iter():
        p.step(
            None
            if p.terminations[agent] or p.truncations[agent]
            else int(np.flatnonzero(p.observe(agent)["action_mask"])[0])
        )
    with pytest.raises(ValueError, match="reset"):
        p.step(57)


# --- bad arguments -------------------------------------------------------------------------

BAD_SEEDS = [-1, -(2**70), 2**64, 2**100, 1.5, "3", True, [1, 2], [-1], [2**64]]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seeds_raise_and_change_nothing(seed):
    with pytest.raises(ValueError, match="seed"):
        Engine(1, 2, seed=seed)
    e = Engine(1, 2, seed=1, record=True)
    before = engine_view(e)
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=seed)
    assert engine_view(e) == before
    for make in (raw_env, UnoEnv):
        x = make(num_players=2)
        with pytest.raises(ValueError, match="seed"):
            x.reset(seed=seed)


@pytest.mark.parametrize("state", BAD_SEEDS, ids=repr)
def test_bad_generator_states_raise_and_change_nothing(state):
    e = Engine(3, 2, seed=1, record=True)
    before = engine_view(e)
    with pytest.raises(ValueError, match="rng_state"):
        e.reset(rng_state=state)
    s = e.game_state(0)
    with pytest.raises(ValueError, match="rng_state"):
        e.set_game(
            0,
            hands=s["hands"],
            discard_pile=s["discard_pile"],
            draw_pile=e.draw_pile(0),
            current_player=s["current_player"],
            current_color=s["current_color"],
            rng_state=state,
        )
    assert engine_view(e) == before


def test_reset_takes_a_seed_or_a_generator_state_not_both():
    e = Engine(1, 2, seed=1)
    before = e.game_state(0)
    with pytest.raises(ValueError, match="not both"):
        e.reset(seed=3, rng_state=3)
    assert e.game_state(0) == before


def test_extreme_valid_seeds_work():
    for seed in (0, 2**63, 2**64 - 1, np.uint64(2**64 - 1), np.int8(5)):
        Engine(2, 2, seed=seed).step(np.array([57, 57]))


@pytest.mark.parametrize("num_envs", [0, -1, -(2**40), 1.5, "2", True, None])
def test_bad_batch_sizes_raise(num_envs):
    with pytest.raises(ValueError, match="num_envs"):
        Engine(num_envs, 2)
    with pytest.raises(ValueError, match="num_envs"):
        UnoVectorEnv(num_envs=num_envs)


@pytest.mark.parametrize("num_players", [0, 1, 11, -2, 3.0, "4", True, None])
def test_bad_player_counts_raise(num_players):
    for make in (
        lambda: Engine(1, num_players),
        lambda: raw_env(num_players=num_players),
        lambda: env(num_players=num_players),
        lambda: UnoEnv(num_players=num_players),
        lambda: UnoVectorEnv(num_envs=2, num_players=num_players),
    ):
        with pytest.raises(ValueError, match=r"num_players must be an integer in 2\.\.10"):
            make()


@pytest.mark.parametrize("num_players", [2, 3, 5, 9])
def test_teams_need_an_even_count_of_at_least_four(num_players):
    with pytest.raises(ValueError, match="teams"):
        Engine(1, num_players, UnoRules(teams=True))


def test_a_huge_unsigned_action_is_rejected():
    """Found by this suite: a uint64 2**64-1 used to wrap to -1 ("leave the game") silently."""
    e = Engine(1, 2, seed=0)
    with pytest.raises(ValueError, match="out of range"):
        e.step(np.array([2**64 - 1], np.uint64))


_DEAL = """
import sys
sys.path.insert(0, {repo!r})
from uno_env import Engine, UnoRules
try:
    Engine(1, {players}, UnoRules.preset({preset!r}, hand_size={hand_size}), seed={seed})
except ValueError as err:
    print("ValueError", err)
print("returned")
"""


def test_a_deal_with_no_card_to_turn_does_not_hang():
    """R9 sends a Wild Draw Four (any non-number card under redraw_special) back into the pile.
    official, 10 players x 11 cards leaves 2 of 112 cards; with seed 0 both are action cards or
    wilds, and the deal used to redraw forever. The engine now refuses such rules with a
    ValueError (in a subprocess, so a regression fails instead of hanging the suite)."""
    code = _DEAL.format(repo=str(ROOT), players=10, preset="official", hand_size=11, seed=0)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=12, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail("Engine(1, 10, UnoRules.preset('official', hand_size=11), seed=0) did not return within 12 s")
    assert "returned" in out.stdout and "ValueError" in out.stdout and "hand_size" in out.stdout, out.stderr[-2000:]


# --- bad arguments to the other methods ----------------------------------------------------


def _engine_and_position():
    from uno_env.cards import deck_counts

    e = Engine(2, 2, seed=0, record=True)
    deck = list(np.repeat(np.arange(57), deck_counts("classic")))
    good = dict(hands=[deck[:7], deck[7:14]], discard_pile=[deck[14]], draw_pile=deck[15:], current_player=0)
    return e, good


BAD_CALLS = {
    "reset games out of range": lambda e, g: e.reset(games=[5]),
    "reset games negative": lambda e, g: e.reset(games=[-1]),
    "reset games floats": lambda e, g: e.reset(games=[1.0]),
    "reset games mask shape": lambda e, g: e.reset(games=np.array([True])),
    "observe seat": lambda e, g: e.observe(2),
    "observe negative seat": lambda e, g: e.observe(-1),
    "observe float seat": lambda e, g: e.observe(1.0),
    "observe out buffer": lambda e, g: e.observe(0, out=np.zeros((2, 3), np.float32)),
    "game_state index": lambda e, g: e.game_state(2),
    "draw_pile index": lambda e, g: e.draw_pile(-1),
    "record index": lambda e, g: e.record(7),
    "copy_game other rules": lambda e, g: e.copy_game(Engine(1, 3), 0, 0),
    "copy_game index": lambda e, g: e.copy_game(e, 0, 5),
    "resample_hidden seat": lambda e, g: e.resample_hidden(0, 5, np.random.default_rng()),
    "hand_counts index": lambda e, g: e.hand_counts([0, 2]),
    "hand_counts mask": lambda e, g: e.hand_counts(np.array([True, False])),
    "set_game index": lambda e, g: e.set_game(2, **g),
    "set_game missing card": lambda e, g: e.set_game(0, **{**g, "draw_pile": g["draw_pile"][1:]}),
    "set_game wrong hand count": lambda e, g: e.set_game(0, **{**g, "hands": g["hands"][:1]}),
    "set_game player": lambda e, g: e.set_game(0, **{**g, "current_player": 5}),
    "set_game direction": lambda e, g: e.set_game(0, **{**g, "direction": 0}),
    "set_game colour": lambda e, g: e.set_game(0, **{**g, "current_color": 4}),
    # Found by this suite and fixed in the engine (were an IndexError, a numpy message, or accepted):
    "set_game card id 57 (IndexError)": lambda e, g: e.set_game(
        0, **{**g, "hands": [g["hands"][0][:6] + [57], g["hands"][1]]}
    ),
    "set_game card id 60 in the draw pile (numpy broadcast message)": lambda e, g: e.set_game(
        0, **{**g, "draw_pile": g["draw_pile"][:-1] + [60]}
    ),
    "set_game current_player=1.5 (accepted as 1)": lambda e, g: e.set_game(0, **{**g, "current_player": 1.5}),
    "set_game scores of the wrong length (accepted, broadcast)": lambda e, g: e.set_game(0, **{**g, "scores": [1]}),
    "set_game dealer=9 with 2 players (accepted)": lambda e, g: e.set_game(0, **{**g, "dealer": 9}),
    "observe three seats for two games (numpy broadcast message)": lambda e, g: e.observe([0, 1, 2]),
    "resample_hidden rng=None (AttributeError)": lambda e, g: e.resample_hidden(0, 0, None),
}


def _check_rejected(call) -> None:
    e, good = _engine_and_position()
    e.step(sample_legal(e.legal_mask, np.random.default_rng(0)))
    before = engine_view(e)
    with pytest.raises(ValueError) as err:
        call(e, good)
    assert "operands could not be broadcast" not in str(err.value)
    assert engine_view(e) == before


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_engine_methods_reject_bad_arguments_and_change_nothing(name):
    _check_rejected(BAD_CALLS[name])


BAD_ACTIONS = [3.0, "draw", 116, -1, np.array([1, 2]), True, np.float64(57), [57]]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_env_layers_reject_bad_actions_and_change_nothing(action):
    p = raw_env(num_players=3)
    p.reset(seed=0)
    before = (json.dumps(p.game_state()), p.agent_selection, p.observe(p.agent_selection)["observation"].tolist())
    with pytest.raises(ValueError):
        p.step(action)
    assert (
        json.dumps(p.game_state()),
        p.agent_selection,
        p.observe(p.agent_selection)["observation"].tolist(),
    ) == before
    g = UnoEnv(num_players=3)
    g.reset(seed=0)
    before = json.dumps(g.game_state())
    with pytest.raises(ValueError):
        g.step(action)
    assert json.dumps(g.game_state()) == before
    v = UnoVectorEnv(num_envs=2, num_players=3)
    v.reset(seed=0)
    before = json.dumps([v.engine.game_state(b) for b in range(2)])
    with pytest.raises(ValueError):
        v.step(np.array([action, action], dtype=object) if not isinstance(action, np.ndarray) else action)
    assert json.dumps([v.engine.game_state(b) for b in range(2)]) == before
