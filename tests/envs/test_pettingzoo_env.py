"""The PettingZoo AEC env ``uno_v0`` (``uno_env.raw_env`` / ``uno_env.env``) and its rendering.

Layers: PettingZoo's own checkers (``api_test``, ``seed_test``, ``render_test``) over rule sets
and player counts; the env as a thin map over the engine (same game as an ``Engine`` batch of
one, docs/rules.md R2/R8/R11); ``env()`` against ``raw_env`` under PettingZoo's three classic
wrappers, op by op; bad input (R10); rendering never shows hidden hands (R11).

PettingZoo's ``state_test`` and ``parallel_api_test`` / ``parallel_seed_test`` run on
``state()`` and ``parallel_env``. ``pettingzoo.test.max_cycles_test`` cannot pass for a
turn-based game whose turns take one to three decisions: its parallel half wants the round to
end after exactly ``max_cycles`` parallel steps (one decision each here), its AEC half wants
every agent to have taken exactly ``max_cycles`` decisions; the two counts differ by the number
of players, and the second is not fixed (a wild takes two decisions, a Skip gives the same agent
the next one). ``max_cycles`` is accepted and means ``max_turns = max_cycles * num_players``
(tested below).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import uno_env
from uno_env import Engine, UnoRules, card_name
from uno_env.actions import NUM_ACTIONS, Action
from uno_env.pettingzoo_env import CheckedEnv
from uno_env.render import render_rgb, render_text

RULE_SETS = {
    "classic": UnoRules.preset("classic"),
    "no_challenge_no_voluntary_draw": UnoRules.preset("classic", challenge=False, allow_voluntary_draw=False),
    "max_turns_50": UnoRules.preset("classic", max_turns=50),
}
PLAYER_COUNTS = (2, 3, 4, 7, 10)

# What api_test warns about for any dict-observation env outside PettingZoo's own list; any
# other warning (NaNs, infinite bounds, a non-boolean mask…) fails the test.
EXPECTED_API_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "Action mask numpy array is all zeros (no legal actions).",
)


def wrapped_raw_env(**kwargs: Any):
    """``raw_env`` under the stack PettingZoo classic envs use: what ``env()`` must equal."""
    e = uno_env.raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def random_legal(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.integers(legal.size)])


def play_random(e, rng: np.random.Generator, on_step: Callable[[], None] | None = None) -> None:
    """Play one reset game of random legal moves to the end (``None`` for finished agents)."""
    for _agent in e.agent_iter():
        obs, _r, term, trunc, _i = e.last()
        e.step(None if term or trunc else random_legal(obs, rng))
        if on_step is not None:
            on_step()


@pytest.fixture
def quiet_env_logger():
    """PettingZoo's EnvLogger prints its warnings; keep them in its queue only."""
    EnvLogger.suppress_output()
    EnvLogger.flush()
    yield EnvLogger.mqueue
    EnvLogger.flush()
    EnvLogger.unsuppress_output()


# --- PettingZoo's checkers -------------------------------------------------------------------


@pytest.mark.parametrize("rules_name", list(RULE_SETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("make", [uno_env.env, uno_env.raw_env], ids=["env", "raw_env"])
def test_pettingzoo_api_test(make, num_players, rules_name, capsys):
    e = make(num_players=num_players, rules=RULE_SETS[rules_name])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(e, num_cycles=300)
    unexpected = {str(w.message) for w in caught} - set(EXPECTED_API_WARNINGS)
    assert not unexpected, unexpected
    assert "Passed API test" in capsys.readouterr().out


@pytest.mark.parametrize("rules_name", list(RULE_SETS))
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_pettingzoo_seed_test(num_players, rules_name):
    seed_test(lambda: uno_env.env(num_players=num_players, rules=RULE_SETS[rules_name]), num_cycles=200)


@pytest.mark.parametrize("num_players", [2, 4, 10])
def test_pettingzoo_render_test(num_players, capsys):
    def text_shows_acting_hand(res: str) -> bool:
        return "'s hand: " in res or "Round over" in res

    render_test(
        lambda render_mode=None: uno_env.env(num_players=num_players, render_mode=render_mode),
        custom_tests={"ansi": text_shows_acting_hand},
    )
    assert "\x1b[" in capsys.readouterr().out  # human mode printed coloured text


# --- spaces and masks ------------------------------------------------------------------------


def test_metadata_agents_and_spaces():
    e = uno_env.env(num_players=4)
    assert e.metadata == {
        "name": "uno_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }
    assert str(e) == "uno_v0"
    assert e.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    engine = Engine(1, 4)
    for a in e.possible_agents:
        space = e.observation_space(a)
        assert space["observation"].shape == (engine.observation_size,)
        assert space["observation"].dtype == np.float32
        assert space["action_mask"] == gymnasium.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)
        assert e.action_space(a) == gymnasium.spaces.Discrete(NUM_ACTIONS)
    open_env = uno_env.raw_env(rules=UnoRules.preset("classic", open_hands=True))
    assert open_env.observation_space("player_0")["observation"].shape == (
        Engine(1, 2, open_env.rules).observation_size,
    )


def test_discrete_sample_with_int8_mask_gives_legal_actions():
    """Gymnasium's Discrete.sample(mask) asserts an int8 mask; it must work on our masks."""
    e = uno_env.env(num_players=3)
    e.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(300):
        agent = e.agent_selection
        obs, _r, term, trunc, _i = e.last()
        if term or trunc:
            break
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and set(np.unique(mask)) <= {0, 1}
        space = e.action_space(agent)
        sampled = {int(space.sample(mask)) for _ in range(20)}
        assert all(mask[a] == 1 for a in sampled)
        e.step(random_legal(obs, rng))


@pytest.mark.parametrize("rules_name", ["classic", "max_turns_50"])
@pytest.mark.parametrize("num_players", [2, 3, 7])
def test_env_is_the_engine_game_seen_by_each_seat(num_players, rules_name):
    """Each agent's observation is the engine's view from its seat (R11), the mask is the
    engine's for the acting seat and zero for the others, agent_selection is the engine's
    current player, and the final rewards are the engine's (R8)."""
    rules = RULE_SETS[rules_name]
    rng = np.random.default_rng(num_players)
    for seed in range(3):
        e = uno_env.env(num_players=num_players, rules=rules)
        e.reset(seed=seed)
        engine = Engine(1, num_players, rules, seed=seed)
        while True:
            seat = int(engine.current_player[0])
            assert e.agent_selection == f"player_{seat}"
            for p, agent in enumerate(e.possible_agents):
                obs = e.observe(agent)
                np.testing.assert_array_equal(obs["observation"], engine.observe(p)[0])
                expected_mask = engine.legal_mask[0] if p == seat else np.zeros(NUM_ACTIONS, bool)
                np.testing.assert_array_equal(obs["action_mask"], expected_mask.astype(np.int8))
            action = random_legal(e.observe(e.agent_selection), rng)
            e.step(action)
            engine.step(action)
            if engine.terminated[0] or engine.truncated[0]:
                break
        assert e.game_state() == engine.game_state(0)
        expected = {f"player_{p}": float(engine.rewards[0, p]) for p in range(num_players)}
        assert e.rewards == expected
        assert e.terminations == dict.fromkeys(e.possible_agents, bool(engine.terminated[0]))
        assert e.truncations == dict.fromkeys(e.possible_agents, bool(engine.truncated[0]))


def test_every_decision_of_a_turn_keeps_the_agent_selected():
    """R4/R6: a wild is followed by choose_color for the same player; a Wild Draw Four then
    makes the next player answer (challenge or accept) before anything else."""
    rng = np.random.default_rng(1)
    seen_color = seen_respond = 0
    e = uno_env.raw_env(num_players=3)
    for seed in range(40):
        e.reset(seed=seed)
        for _ in range(400):
            if any(e.terminations.values()) or any(e.truncations.values()):
                break
            agent = e.agent_selection
            mask = e.observe(agent)["action_mask"]
            seat = e.possible_agents.index(agent)
            wilds = [a for a in (52, 53) if mask[a]]
            # A last card ends the round at once (R12.4): only a wild with cards left to play.
            if not wilds or len(e.game_state()["hands"][seat]) == 1:
                e.step(random_legal(e.observe(agent), rng))
                continue
            e.step(wilds[-1])
            assert e.agent_selection == agent and e.game_state()["phase"] == "choose_color"
            assert set(np.flatnonzero(e.observe(agent)["action_mask"])) == {59, 60, 61, 62}
            seen_color += 1
            e.step(int(Action.CHOOSE_BLUE))
            if wilds[-1] == 53:
                responder = e.agent_selection
                assert responder != agent and e.game_state()["phase"] == "respond_draw_four"
                assert set(np.flatnonzero(e.observe(responder)["action_mask"])) == {63, 64}
                seen_respond += 1
    assert seen_color > 0 and seen_respond > 0


# --- episode end -----------------------------------------------------------------------------


def test_round_end_rewards_and_dead_steps():
    """R8: +1 for the winner, -1 for the others; every agent terminated, then stepped with None
    in seat order, each seeing its reward in last() before it is removed."""
    e = uno_env.env(num_players=3, rules=RULE_SETS["no_challenge_no_voluntary_draw"])
    rng = np.random.default_rng(0)
    for seed in range(20):
        e.reset(seed=seed)
        while not any(e.terminations.values()) and not any(e.truncations.values()):
            e.step(random_legal(e.last()[0], rng))
        if any(e.terminations.values()):
            break
    else:  # pragma: no cover
        pytest.fail("no round ended by the rules in 20 seeds")
    winner = e.game_state()["winner"]
    assert all(e.terminations.values()) and not any(e.truncations.values())
    order = []
    for agent in e.agent_iter():
        _obs, reward, term, trunc, _info = e.last()
        assert term and not trunc
        assert reward == (1.0 if agent == f"player_{winner}" else -1.0)
        order.append(agent)
        e.step(None)
    assert order == e.possible_agents
    assert e.agents == []


def test_turn_limit_truncates_every_agent():
    """R8 max_turns: the round is truncated after exactly that many actions, reward 0."""
    e = uno_env.env(num_players=4, rules=UnoRules.preset("classic", max_turns=7))
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    steps = 0
    while not any(e.truncations.values()) and not any(e.terminations.values()):
        e.step(random_legal(e.last()[0], rng))
        steps += 1
    assert steps == 7 == e.game_state()["turn"]
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert e.rewards == dict.fromkeys(e.possible_agents, 0.0)


def test_stepping_a_dead_agent_with_an_action_is_refused():
    e = uno_env.raw_env(num_players=2, rules=UnoRules.preset("classic", max_turns=1))
    e.reset(seed=0)
    e.step(random_legal(e.last()[0], np.random.default_rng(0)))
    assert all(e.truncations.values())
    with pytest.raises(ValueError, match="only valid action is None"):
        e.step(0)
    e.step(None)
    e.step(None)
    with pytest.raises(ValueError, match="call reset"):
        e.step(None)


def test_observations_are_fresh_arrays():
    e = uno_env.raw_env(num_players=2)
    e.reset(seed=0)
    agent = e.agent_selection
    first = e.observe(agent)
    kept = {k: v.copy() for k, v in first.items()}
    first["observation"][:] = -7
    first["action_mask"][:] = 0
    again = e.observe(agent)
    assert data_equivalence(again, kept, exact=True)
    e.step(random_legal(again, np.random.default_rng(0)))
    assert data_equivalence(again, kept, exact=True)  # a step does not change what was returned


# --- seeding ---------------------------------------------------------------------------------


def test_seeding_reproduces_and_varies_deals():
    e = uno_env.raw_env(num_players=4)
    e.reset(seed=11)
    first = e.game_state()
    e.reset()  # no seed: the game's RNG continues, a new deal
    second = e.game_state()
    assert second["hands"] != first["hands"]
    e.reset(seed=11)
    assert e.game_state() == first
    other = uno_env.env(num_players=4)
    other.reset(seed=11)
    assert other.game_state() == first
    other.reset()
    assert other.game_state() == second


# --- env() against the three wrappers ----------------------------------------------------------


def _outcome(fn: Callable[[], Any]) -> tuple:
    """What a call did: its value, or the type and message of what it raised."""
    try:
        return ("ok", fn())
    except Exception as err:
        return ("raised", type(err), str(err))


def _same(a: tuple, b: tuple) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "raised":
        if b[1] is OverflowError and a[2] == "action is not in action space":
            # gymnasium < 1.4: Discrete.contains overflows on ints past int64 (ray[rllib] pins
            # 1.2.2); the wrapper stack then fails with OverflowError, our env with its message.
            return True
        return a[1] is b[1] and a[2] == b[2]
    return data_equivalence(a[1], b[1], exact=True)


_STATE_ATTRS = (
    "agents",
    "agent_selection",
    "rewards",
    "_cumulative_rewards",
    "terminations",
    "truncations",
    "infos",
    "num_agents",
    "max_num_agents",
    "possible_agents",
)


def _attrs(e) -> dict[str, tuple]:
    import copy

    return {name: _outcome(lambda name=name: copy.deepcopy(getattr(e, name))) for name in _STATE_ATTRS}


class _Pair:
    """Run every operation on env() and on raw_env under the wrappers; compare everything."""

    def __init__(self, **kwargs: Any) -> None:
        self.native = uno_env.env(render_mode="ansi", **kwargs)
        self.wrapped = wrapped_raw_env(render_mode="ansi", **kwargs)
        self.iters: list[Any] = [None, None]
        self.ops = 0

    def do(self, label: str, op: Callable[[Any, int], Any]) -> tuple:
        results = []
        for k, e in enumerate((self.native, self.wrapped)):
            before = len(EnvLogger.mqueue)
            res = _outcome(lambda e=e, k=k: op(e, k))
            results.append((res, list(EnvLogger.mqueue[before:]), _attrs(e)))
        (n_res, n_log, n_attrs), (w_res, w_log, w_attrs) = results
        assert _same(n_res, w_res), (label, n_res, w_res)
        assert n_log == w_log, (label, n_log, w_log)
        for name in _STATE_ATTRS:
            assert _same(n_attrs[name], w_attrs[name]), (label, name, n_attrs[name], w_attrs[name])
        self.ops += 1
        return n_res


def _pre_reset_ops(pair: _Pair) -> None:
    pair.do("step before reset", lambda e, k: e.step(0))
    pair.do("observe before reset", lambda e, k: e.observe("player_0"))
    pair.do("render before reset", lambda e, k: e.render())
    pair.do("state before reset", lambda e, k: e.state())
    pair.do("agent_iter before reset", lambda e, k: e.agent_iter())
    pair.do("last before reset", lambda e, k: e.last())
    pair.do("spaces before reset", lambda e, k: (e.action_space("player_1"), e.observation_space("player_0")))
    pair.do("str", lambda e, k: str(e))


def _odd_actions(mask: np.ndarray, rng: np.random.Generator) -> list[Any]:
    legal = np.flatnonzero(mask)
    illegal = np.flatnonzero(mask == 0)
    a = int(legal[rng.integers(legal.size)]) if legal.size else 0
    return [
        int(illegal[rng.integers(illegal.size)]),  # masked out: TerminateIllegal
        -1,
        NUM_ACTIONS,
        10**20,  # out of bounds
        None,
        True,
        False,
        3.0,
        "3",
        np.bool_(True),
        np.uint64(a),  # not actions
        np.int32(a),
        np.int8(a),
        np.array(a),
        np.array([a]),  # numpy integers that are fine
    ]


def _random_ops(pair: _Pair, rng: np.random.Generator, num_ops: int) -> None:
    n = pair.native.num_players
    for _ in range(num_ops):
        if not pair.native.agents:
            if rng.random() < 0.3:
                pair.do("step after end", lambda e, k: e.step(None))
            seed = int(rng.integers(1000)) if rng.random() < 0.7 else None
            pair.do(f"reset({seed})", lambda e, k, seed=seed: e.reset(seed=seed))
            continue
        r = rng.random()
        agent = pair.native.agent_selection
        if r < 0.05:
            target = f"player_{rng.integers(n)}" if rng.random() < 0.8 else "player_99"
            pair.do(f"observe {target}", lambda e, k, target=target: e.observe(target))
        elif r < 0.08:
            pair.do("last", lambda e, k: e.last())
        elif r < 0.10:
            pair.do("render", lambda e, k: e.render())
        elif r < 0.11:
            pair.do("state", lambda e, k: e.state())
        elif r < 0.14:
            max_iter = int(rng.integers(1, 5))

            def start(e, k, max_iter=max_iter):
                pair.iters[k] = iter(e.agent_iter(max_iter))

            pair.do("agent_iter", start)
        elif r < 0.20 and pair.iters[0] is not None:
            pair.do("next(agent_iter)", lambda e, k: next(pair.iters[k]))
        elif r < 0.21:
            seed = int(rng.integers(1000))
            pair.do("reset mid-game", lambda e, k, seed=seed: e.reset(seed=seed))
        else:
            obs, _r, term, trunc, _i = pair.native.last()
            if term or trunc:
                action = None if rng.random() < 0.9 else random_legal_or_zero(obs, rng)
            elif rng.random() < 0.85:
                action = random_legal(obs, rng)
            else:
                odd = _odd_actions(obs["action_mask"], rng)
                action = odd[rng.integers(len(odd))]
            pair.do(f"step {agent} {action!r}", lambda e, k, action=action: e.step(action))


def random_legal_or_zero(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    return random_legal(obs, rng) if obs["action_mask"].any() else 0


@pytest.mark.parametrize(
    "num_players, rules_name",
    [(2, "max_turns_50"), (3, "classic"), (4, "no_challenge_no_voluntary_draw"), (7, "max_turns_50")],
)
def test_env_equals_raw_env_under_the_three_wrappers(num_players, rules_name, quiet_env_logger):
    pair = _Pair(num_players=num_players, rules=RULE_SETS[rules_name])
    _pre_reset_ops(pair)
    pair.do("first reset", lambda e, k: e.reset(seed=7))
    _random_ops(pair, np.random.default_rng(num_players), num_ops=2500)
    # The script must have exercised the interesting paths, or the comparison proves little.
    log = " ".join(quiet_env_logger)
    assert "Illegal move made" in log


def test_env_equals_wrappers_on_scripted_misuse(quiet_env_logger):
    """Each classic mistake once, in a fixed order, on both envs."""
    pair = _Pair(num_players=3)
    _pre_reset_ops(pair)
    pair.do("reset", lambda e, k: e.reset(seed=1))
    pair.do("agent_iter", lambda e, k: pair.iters.__setitem__(k, iter(e.agent_iter())))
    pair.do("next", lambda e, k: next(pair.iters[k]))
    pair.do("next without step", lambda e, k: next(pair.iters[k]))  # AssertionError
    mask = pair.native.last()[0]["action_mask"]
    for action in _odd_actions(mask, np.random.default_rng(0))[1:]:
        pair.do(f"odd action {action!r}", lambda e, k, action=action: e.step(action))
        if not pair.native.agents or any(pair.native.terminations.values()):
            break
    pair.do("reset", lambda e, k: e.reset(seed=2))
    illegal = int(np.flatnonzero(pair.native.last()[0]["action_mask"] == 0)[0])
    offender = pair.native.agent_selection
    res = pair.do("illegal", lambda e, k: e.step(illegal))
    assert res[0] == "ok"
    # PettingZoo's convention (R10): the offender -1, the others 0, everybody done.
    expected = {a: (-1.0 if a == offender else 0.0) for a in pair.native.possible_agents}
    assert pair.native.rewards == expected == pair.native._cumulative_rewards
    assert all(pair.native.terminations.values()) and all(pair.native.truncations.values())
    pair.do("int on a dead agent", lambda e, k: e.step(0))  # ValueError from _was_dead_step
    for _ in range(3):
        pair.do("dead step", lambda e, k: e.step(None))
    pair.do("step after the end", lambda e, k: e.step(None))  # a warning, nothing else
    assert pair.native.agents == []
    assert any("step() called after all agents" in m for m in quiet_env_logger)


def test_env_unwrapped_and_game_state():
    e = uno_env.env(num_players=2)
    assert isinstance(e, CheckedEnv) and e.unwrapped is e
    e.reset(seed=0)
    assert e.unwrapped.game_state() == e.game_state()
    assert e.game_state()["num_players"] == 2


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [uno_env.env, uno_env.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("num_players", [0, 1, 11, "2", 2.0, True, None])
def test_bad_num_players(make, num_players):
    with pytest.raises(ValueError, match=r"num_players must be an integer in 2\.\.10"):
        make(num_players=num_players)


@pytest.mark.parametrize("make", [uno_env.env, uno_env.raw_env], ids=["env", "raw_env"])
@pytest.mark.parametrize("rules", [3, 2.5, ["classic"]])
def test_bad_rules_type(make, rules):
    with pytest.raises(ValueError, match="rules must be None, a UnoRules, a preset name"):
        make(rules=rules)


@pytest.mark.parametrize("make", [uno_env.env, uno_env.raw_env], ids=["env", "raw_env"])
def test_rules_as_preset_name_json_or_dict(make):
    """Every env reads rules through uno_env.parse_rules."""
    assert make(rules="official").unwrapped.rules == UnoRules.preset("official")
    assert make(rules='{"challenge": false}').unwrapped.rules == UnoRules(challenge=False)
    assert make(rules={"challenge": False}).unwrapped.rules == UnoRules(challenge=False)


def test_bad_render_mode():
    with pytest.raises(ValueError, match=r"render_mode must be None or one of \['ansi', 'human', 'rgb_array'\]"):
        uno_env.raw_env(render_mode="rgb")


def test_unknown_agent():
    e = uno_env.raw_env(num_players=2)
    e.reset(seed=0)
    for bad in ("player_2", "bob", 0, ["player_0"]):
        with pytest.raises(ValueError, match=r"unknown agent .*agents are \['player_0', 'player_1'\]"):
            e.observe(bad)
        with pytest.raises(ValueError, match="unknown agent"):
            e.action_space(bad)
        with pytest.raises(ValueError, match="unknown agent"):
            e.observation_space(bad)


def _raw_snapshot(e) -> dict[str, Any]:
    import copy

    return {
        "state": e.game_state(),
        "selection": e.agent_selection,
        "dicts": copy.deepcopy((e.agents, e.rewards, e._cumulative_rewards, e.terminations, e.truncations, e.infos)),
        "obs": {a: e.observe(a) for a in e.possible_agents},
    }


def test_raw_env_illegal_action_raises_and_changes_nothing():
    """R10 `raise`: a clear error naming the action, the phase and the legal actions."""
    e = uno_env.raw_env(num_players=3)
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(30):
        e.step(random_legal(e.last()[0], rng))
    before = _raw_snapshot(e)
    mask = before["obs"][e.agent_selection]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(
        ValueError, match=rf"{e.agent_selection}: .*action {illegal} .*not legal .*phase .*legal actions: \["
    ):
        e.step(illegal)
    cases = [
        (-1, "0..115"),
        (NUM_ACTIONS, "0..115"),
        (10**20, "0..115"),
        (2.0, "integer action id"),
        ("57", "integer action id"),
        (True, "integer action id"),
        (None, "cannot be None"),
        (np.array([57]), "integer action id"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            e.step(bad)
    with pytest.raises(ValueError, match="seed must be"):
        e.reset(seed=-3)
    after = _raw_snapshot(e)
    assert after["state"] == before["state"] and after["selection"] == before["selection"]
    assert after["dicts"] == before["dicts"]
    assert data_equivalence(after["obs"], before["obs"], exact=True)
    legal = int(np.flatnonzero(mask)[0])
    e.step(np.int16(legal))  # NumPy integers are fine
    assert e.game_state()["turn"] == before["state"]["turn"] + 1


def test_penalty_rule_applies_in_raw_env_but_env_ends_the_game(quiet_env_logger):
    """R10 `penalty`: raw_env lets the engine take back the card and deal a penalty card;
    env() keeps PettingZoo's convention and ends the game before the engine sees the move."""
    rules = UnoRules.preset("classic", illegal_action="penalty")
    raw, checked = uno_env.raw_env(num_players=2, rules=rules), uno_env.env(num_players=2, rules=rules)
    for e in (raw, checked):
        e.reset(seed=3)
    state = raw.game_state()
    seat = state["current_player"]
    mask = raw.observe(raw.agent_selection)["action_mask"]
    unplayable = next(c for c in state["hands"][seat] if not mask[c])
    raw.step(unplayable)
    after = raw.game_state()
    assert len(after["hands"][seat]) == len(state["hands"][seat]) + 1
    assert after["turn"] == state["turn"] + 1 and not any(raw.terminations.values())
    offender = checked.agent_selection
    checked.step(unplayable)
    assert checked.game_state()["hands"] == state["hands"]
    assert checked._cumulative_rewards[offender] == -1.0 and all(checked.terminations.values())


def test_raw_env_attributes_before_reset():
    e = uno_env.raw_env()
    with pytest.raises(AttributeError, match="agents cannot be accessed before reset; call reset"):
        e.agents  # noqa: B018
    with pytest.raises(AttributeError, match="agent_selection"):
        e.step(0)


# --- rendering -------------------------------------------------------------------------------


def _mid_game_env(num_players: int = 4, render_mode: str | None = None, steps: int = 25):
    e = uno_env.env(num_players=num_players, render_mode=render_mode)
    e.reset(seed=9)
    rng = np.random.default_rng(9)
    for _ in range(steps):
        e.step(random_legal(e.last()[0], rng))
    return e


def test_ansi_render_shows_the_table_and_only_the_acting_hand():
    e = _mid_game_env(render_mode="ansi")
    text = e.render()
    state = e.game_state()
    acting = state["current_player"]
    assert f"Top card: {card_name(state['top_card'])}" in text
    assert f"phase {state['phase']}" in text
    assert ("counter-clockwise" in text) == (state["direction"] == -1)
    for p, hand in enumerate(state["hands"]):
        assert f"player_{p}" in text and f"{len(hand)} card" in text
    hand_lines = [line for line in text.splitlines() if "'s hand: " in line]
    assert hand_lines == [f"player_{acting}'s hand: " + ", ".join(card_name(c) for c in state["hands"][acting])]
    assert "\x1b[" not in text


def _hide_test_states(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same table with other hidden hands, and with another hand for the acting player."""
    acting = state["current_player"]
    hidden = dict(state, hands=[h if p == acting else [53] * len(h) for p, h in enumerate(state["hands"])])
    own = list(state["hands"][acting])
    own[0] = 0 if own[0] != 0 else 1
    changed_own = dict(state, hands=[own if p == acting else h for p, h in enumerate(state["hands"])])
    return hidden, changed_own


def test_render_never_shows_hidden_hands():
    """R11: what other seats hold must not change a picture; the acting hand must."""
    state = _mid_game_env().game_state()
    hidden, changed_own = _hide_test_states(state)
    assert render_text(hidden) == render_text(state)
    assert render_text(changed_own) != render_text(state)
    assert np.array_equal(render_rgb(hidden), render_rgb(state))
    assert not np.array_equal(render_rgb(changed_own), render_rgb(state))
    over = dict(state, phase="round_over", winner=1)
    assert "'s hand" not in render_text(over) and "player_1 won" in render_text(over)
    hidden_over = dict(over, hands=[[53] * len(h) for h in over["hands"]])
    assert np.array_equal(render_rgb(hidden_over), render_rgb(over))


@pytest.mark.parametrize("num_players", [2, 10])
def test_rgb_array_render(num_players):
    e = _mid_game_env(num_players=num_players, render_mode="rgb_array", steps=5)
    img = e.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 10  # a picture, not a blank


def test_human_render_prints_coloured_text(capsys):
    e = _mid_game_env(render_mode="human", steps=0)
    capsys.readouterr()
    assert e.render() is None
    out = capsys.readouterr().out
    assert "\x1b[1;3" in out and "'s hand: " in out
    e.step(random_legal(e.last()[0], np.random.default_rng(0)))
    assert "UNO - turn 1" in capsys.readouterr().out  # human mode renders after each step


def test_render_without_mode_warns():
    e = uno_env.raw_env()
    e.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert e.render() is None


def test_rgb_array_without_pillow_names_the_extra(monkeypatch):
    for name in [m for m in sys.modules if m == "PIL" or m.startswith("PIL.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `import PIL` raise ImportError
    for error in (ImportError, gymnasium.error.DependencyNotInstalled):
        with pytest.raises(error, match=r"pip install uno_env\[render\]"):
            uno_env.raw_env(render_mode="rgb_array")
    e = uno_env.raw_env(render_mode="ansi")  # text rendering needs nothing
    e.reset(seed=0)
    assert isinstance(e.render(), str)
    with pytest.raises(ImportError, match=r"pip install uno_env\[render\]"):
        render_rgb(e.game_state())


# --- copies ----------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copied_env_plays_on_like_the_original(how):
    import copy
    import pickle

    e = uno_env.env(num_players=3)
    e.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(10):
        e.step(random_legal(e.last()[0], rng))
    twin = pickle.loads(pickle.dumps(e)) if how == "pickle" else copy.deepcopy(e)
    for _ in range(40):
        if not e.agents:
            break
        obs = e.last()
        assert data_equivalence(twin.last(), obs, exact=True)
        action = None if obs[2] or obs[3] else random_legal(obs[0], rng)
        e.step(action)
        twin.step(action)
        assert twin.agent_selection == e.agent_selection and twin.game_state() == e.game_state()


def test_pettingzoo_make_builds_the_env_from_its_registry():
    # PettingZoo's tutorials build envs with pettingzoo.make("aec", id) (a registry
    # new in PettingZoo 1.27); importing uno_env registers uno_env/uno_v0 there.
    pettingzoo = pytest.importorskip("pettingzoo")
    if not hasattr(pettingzoo, "make"):
        pytest.skip(f"pettingzoo {pettingzoo.__version__} has no registry")
    e = pettingzoo.make("aec", uno_env.PETTINGZOO_ID, num_players=3, rules="house")
    e.reset(seed=0)
    assert isinstance(e, uno_env.pettingzoo_env.CheckedEnv)
    assert e.num_agents == 3 and e.unwrapped.rules == UnoRules.preset("house")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # registering again must not warn "Overriding environment"
        uno_env.register_pettingzoo()


@pytest.mark.parametrize("make", [uno_env.raw_env, uno_env.env])
def test_last_gives_fresh_arrays_equal_to_observe(make):
    """last() reads the acting agent's view straight from the engine's buffers, as fresh copies:
    equal to observe(agent), and left as they were by the next step (copies, not views)."""
    e = make(num_players=3)
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(300):
        agent = e.agent_selection
        obs, reward, term, trunc, info = e.last()
        fresh = e.observe(agent)
        assert np.array_equal(obs["observation"], fresh["observation"])
        assert np.array_equal(obs["action_mask"], fresh["action_mask"])
        assert obs["action_mask"].dtype == np.int8 and obs["observation"].dtype == np.float32
        assert e.last(observe=False) == (None, reward, term, trunc, info)
        kept = (obs["observation"].copy(), obs["action_mask"].copy())
        if term or trunc:
            e.step(None)
            if not e.agents:
                e.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
        assert np.array_equal(obs["observation"], kept[0]) and np.array_equal(obs["action_mask"], kept[1])


# --- state(), parallel_env, max_cycles (PettingZoo's own tests, pettingzoo 1.27 pettingzoo/test) ---


@pytest.mark.parametrize("num_players,rules", [(2, None), (4, "house"), (3, "swap_hands")])
def test_pettingzoo_state_test_and_parallel_api_test(num_players, rules):
    from pettingzoo.test import parallel_api_test, parallel_seed_test
    from pettingzoo.test.state_test import state_test

    state_test(uno_env.env(num_players, rules), uno_env.parallel_env(num_players, rules), num_cycles=50)
    parallel_api_test(uno_env.parallel_env(num_players, rules), num_cycles=300)
    parallel_seed_test(lambda: uno_env.parallel_env(num_players, rules))


def test_registered_in_pettingzoos_aec_and_parallel_registries():
    import pettingzoo

    par = pettingzoo.make("parallel", uno_env.PETTINGZOO_ID, num_players=3)
    obs, infos = par.reset(seed=0)
    assert set(obs) == {"player_0", "player_1", "player_2"} and par.state().shape == par.state_space.shape
    assert isinstance(pettingzoo.make("aec", uno_env.PETTINGZOO_ID).unwrapped, uno_env.raw_env)


def test_state_in_seat_zeros_frame_within_its_space_and_hidden_cards_change_only_the_state():
    from uno_env.observation import STATE_SIZE

    e = uno_env.env(num_players=3, rules="house")
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    assert e.state_space.shape == (STATE_SIZE,)
    for _agent in e.agent_iter(400):
        obs, _, term, trunc, _ = e.last()
        state = e.state()
        assert e.state_space.contains(state)
        np.testing.assert_array_equal(state, e.unwrapped._engine.state(0)[0])
        np.testing.assert_array_equal(state[: obs["observation"].size], e.observe("player_0")["observation"])
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    e.reset(seed=4)
    views = {a: e.observe(a)["observation"] for a in e.agents}
    before = e.state()
    e.unwrapped._engine.resample_hidden(0, 0, np.random.default_rng(1))  # what player_0 cannot see
    assert np.array_equal(e.observe("player_0")["observation"], views["player_0"])
    assert not np.array_equal(e.state(), before)


@pytest.mark.parametrize("num_players", [2, 4])
def test_max_cycles_truncates_after_max_cycles_times_num_players_actions(num_players):
    e = uno_env.env(num_players=num_players, max_cycles=3, rules={"hand_size": 20})
    assert e.rules.max_turns == 3 * num_players and uno_env.env(num_players).rules.max_turns == 5000
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = 0
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            assert trunc and not term
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        actions += 1
    assert actions == 3 * num_players
    par = uno_env.parallel_env(num_players=num_players, max_cycles=3, rules={"hand_size": 20})
    obs, _ = par.reset(seed=0)
    steps = 0
    while par.agents:
        acting = next(a for a in par.agents if obs[a]["action_mask"].any())
        obs, _, term, trunc, infos = par.step({acting: int(rng.choice(np.flatnonzero(obs[acting]["action_mask"])))})
        steps += 1
    assert steps == 3 * num_players and all(trunc.values())
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="max_cycles"):
            uno_env.env(max_cycles=bad)
