"""Gymnasium layer: UnoEnv, UnoVectorEnv, the SB3 adapter (checkers, equivalence, bad input, PPO smoke)."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.vector import AutoresetMode

import uno_env
from uno_env import UnoRules
from uno_env.engine import OBS_FIELDS, OBS_OFFSETS
from uno_env.gym_env import ENV_ID, LegalDiscrete, UnoEnv, UnoVectorEnv

IS_CURRENT = OBS_OFFSETS["is_current"]


class HashAgent:
    """Deterministic per row: the legal action picked by a hash of that row's observation.

    Vector/single equivalence needs opponents whose choice on a row depends on that row only
    (a random agent shares one generator across the batch).
    """

    name = "hash"

    def __init__(self, salt: int = 0) -> None:
        self.salt = salt

    def act(self, observation, action_mask, rng):
        weights = np.arange(observation.shape[1]) % 7 + 1 + self.salt
        k = (observation.astype(np.int64) * weights).sum(1) % action_mask.sum(1)
        order = np.cumsum(action_mask, 1) - 1
        return np.argmax(action_mask & (order == k[:, None]), axis=1).astype(np.int64)


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of one mask."""
    return int(rng.choice(np.flatnonzero(mask)))


# --- frameworks' checkers and registration --------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 4, "learner_seat": "random"},
                                    {"num_players": 3, "rules": {"open_hands": True}}])
def test_gymnasium_check_env(kwargs):
    # check_env samples its action before its seeded reset (for another position), so it needs
    # on_illegal="terminate"; with the default "raise" that action would usually be refused.
    env = gym.make(ENV_ID, on_illegal="terminate", render_mode="ansi", **kwargs)
    gym_check_env(env.unwrapped)


def test_sb3_check_env():
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3's advice about the spaces would be a warning
        check_env(UnoEnv(num_players=3), warn=True)


def test_registration_and_make_vec():
    assert isinstance(gym.make(ENV_ID).unwrapped, UnoEnv)
    envs = gym.make_vec(ENV_ID, num_envs=4, num_players=3)
    assert isinstance(envs, UnoVectorEnv)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (4, envs.engine.observation_size) and obs.dtype == np.float32
    assert envs.observation_space.contains(obs)
    assert infos["action_mask"].dtype == np.int8 and infos["action_mask"].shape == (4, 116)


def test_docs_list_every_observation_field_and_action_group():
    doc = uno_env.gym_env.__doc__
    for name, size, _ in OBS_FIELDS:
        at = OBS_OFFSETS[name]
        idx = f"{at}" if size == 1 else f"{at}-{at + size - 1}"
        assert f"| {idx} | `{name}` | {size} |" in doc
    for ids in ("| 0-56 |", "| 57 |", "| 58 |", "| 59-62 |", "| 67-75 |", "| 76-115 |"):
        assert ids in doc
    assert "@@" not in doc


# --- single agent ------------------------------------------------------------------------


def test_single_env_episode():
    env = UnoEnv(num_players=3, learner_seat="random")
    rng = np.random.default_rng(0)
    seats, rewards = set(), []
    obs, info = env.reset(seed=5)
    for _ in range(20_000):
        assert env.observation_space.contains(obs)
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert np.array_equal(info["action_mask"], mask.astype(np.int8))
        assert obs[IS_CURRENT] == 1.0  # every decision is the learner's
        obs, reward, terminated, truncated, info = env.step(random_legal(mask, rng))
        if terminated or truncated:
            rewards.append(reward)
            seats.add(env.learner_seat)
            assert not env.action_masks().any()
            with pytest.raises(ValueError, match="call reset"):
                env.step(0)
            if len(rewards) == 30:
                break
            obs, info = env.reset()
        else:
            assert reward == 0.0
    assert len(rewards) == 30 and set(rewards) <= {-1.0, 0.0, 1.0} and 1.0 in rewards and -1.0 in rewards
    assert seats == {0, 1, 2}  # "random" moves the learner between episodes


def test_reset_seed_is_deterministic_and_action_space_samples_legal_moves():
    a, b = UnoEnv(num_players=4), UnoEnv(num_players=4)
    oa, _ = a.reset(seed=123)
    ob, _ = b.reset(seed=123)
    assert np.array_equal(oa, ob)
    a.action_space.seed(0)
    for _ in range(200):
        act = a.action_space.sample()
        assert a.action_masks()[act]
        _, _, terminated, truncated, _ = a.step(act)
        if terminated or truncated:
            a.reset()
    plain = pickle.loads(pickle.dumps(a.action_space))
    assert isinstance(plain, LegalDiscrete) and plain._legal_mask is None and plain == a.action_space


def test_on_illegal_terminate():
    env = UnoEnv(on_illegal="terminate")
    obs, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs2, reward, terminated, truncated, info2 = env.step(illegal)
    assert (reward, terminated, truncated, info2["illegal_action"]) == (-1.0, True, False, True)
    assert np.array_equal(obs, obs2)  # the game was left as it was


# --- vector == single --------------------------------------------------------------------


CONFIGS = {
    "2p truncating": dict(num_players=2, rules=UnoRules(hand_size=4, max_turns=40), learner_seat=0, opponents=None),
    "3p random seat": dict(num_players=3, rules=UnoRules(hand_size=3, max_turns=150), learner_seat="random",
                           opponents=None),
    "4p two agents": dict(num_players=4, rules=UnoRules(hand_size=3, max_turns=100), learner_seat=2,
                          opponents=[HashAgent(0), HashAgent(3), HashAgent(0)]),
    "open hands": dict(num_players=3, rules=UnoRules(open_hands=True, hand_size=3, max_turns=100), learner_seat=1,
                       opponents=None),
    "hand size 1": dict(num_players=2, rules=UnoRules(hand_size=1, max_turns=9), learner_seat="random", opponents=None),
    "house, explicit UNO, doubles": dict(
        num_players=3, rules=UnoRules.preset("house", uno_call="explicit", allow_doubles=True, hand_size=3, max_turns=100),
        learner_seat="random", opponents=None),
    "teams match": dict(
        num_players=4, rules=UnoRules(teams=True, episode="match", target_points=30, hand_size=2, max_turns=40),
        learner_seat="random", opponents=None),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_vector_env_equals_single_envs(name):
    cfg = dict(CONFIGS[name])
    cfg["opponents"] = cfg["opponents"] or HashAgent()
    B, steps, seed = 6, 120, 11
    venv = UnoVectorEnv(B, **cfg)
    singles = [UnoEnv(**cfg) for _ in range(B)]
    vobs, vinfo = venv.reset(seed=seed)
    sobs = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    assert np.array_equal(vobs, np.stack(sobs))
    rng = np.random.default_rng(0)
    ends = exact_ends = 0
    for t in range(steps):
        masks = venv.action_masks()
        assert np.array_equal(masks, np.stack([env.action_masks() for env in singles]))
        assert np.array_equal(vinfo["action_mask"], masks.astype(np.int8))
        actions = np.array([random_legal(m, rng) for m in masks])
        vobs, vrew, vterm, vtrunc, vinfo = venv.step(actions)
        for i, env in enumerate(singles):
            obs, rew, term, trunc, _ = env.step(int(actions[i]))
            assert (rew, term, trunc) == (vrew[i], vterm[i], vtrunc[i]), (t, i)
            if term or trunc:
                ends += 1
                assert vinfo["_final_obs"][i]
                exact = vinfo["final_obs_exact"][i]
                # Truncations and the learner's own wins are always exact (module docstring).
                assert exact or not (trunc or rew == 1.0), (t, i)
                if exact:
                    exact_ends += 1
                    assert np.array_equal(vinfo["final_obs"][i], obs), (t, i)
                obs, _ = env.reset()
            else:
                assert vinfo.get("final_obs") is None or vinfo["final_obs"][i] is None
            assert np.array_equal(vobs[i], obs), (t, i)
        assert np.array_equal(venv.learner_seats, [env.learner_seat for env in singles])
    assert ends >= 3 and exact_ends >= 1


def test_opponents_called_once_per_engine_step_on_their_rows():
    log = []

    class Recording(HashAgent):
        def act(self, observation, action_mask, rng):
            assert (observation[:, IS_CURRENT] == 1).all() and action_mask.any(axis=1).all()
            log.append((self.name, observation.shape[0]))
            return super().act(observation, action_mask, rng)

    a, b = Recording(0), Recording(1)
    a.name, b.name = "a", "b"
    venv = UnoVectorEnv(64, num_players=4, opponents=[a, b, a], learner_seat="random")
    engine_step = venv.engine.step

    def step(actions):
        # Which agent should act where: relative seats 1 and 3 are a's, 2 is b's.
        rel = (venv.engine.current_player - venv._driver.seats) % 4
        stepped = np.asarray(actions) != -1
        calls = log[:]
        log.clear()
        if calls:
            assert sorted(n for n, _ in calls) == sorted(set(n for n, _ in calls))  # once each
            got = dict(calls)
            assert got.get("a", 0) == int((stepped & ((rel == 1) | (rel == 3))).sum())
            assert got.get("b", 0) == int((stepped & (rel == 2)).sum())
        return engine_step(actions)

    venv.engine.step = step
    venv.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        venv.step(np.array([random_legal(m, rng) for m in venv.action_masks()]))


def test_copy_semantics():
    venv = UnoVectorEnv(16, copy=True)
    obs, _ = venv.reset(seed=0)
    kept = obs.copy()
    rng = np.random.default_rng(0)
    for _ in range(5):  # the pool must not hand out a buffer the caller still holds
        venv.step(np.array([random_legal(m, rng) for m in venv.action_masks()]))
    assert np.array_equal(obs, kept)
    views = UnoVectorEnv(4, copy=False)
    obs, _ = views.reset(seed=0)
    assert obs is views.engine.observation


# --- bad input ---------------------------------------------------------------------------


def test_illegal_action_raises_and_leaves_the_game_unchanged():
    env = UnoEnv()
    obs, info = env.reset(seed=2)
    before = env.game_state()
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)
    assert env.game_state() == before
    assert env.step(int(np.flatnonzero(info["action_mask"])[0]))  # still playable


@pytest.mark.parametrize("action, match", [
    (116, "0..115"), (-1, "0..115"), (2.0, "0..115"), (True, "0..115"), ("3", "0..115"),
    (np.array([1, 2]), "shape"),
])
def test_single_env_bad_actions(action, match):
    env = UnoEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(action)


def test_vector_env_bad_actions_leave_every_game_unchanged():
    venv = UnoVectorEnv(4)
    obs, _ = venv.reset(seed=0)
    masks = venv.action_masks()
    legal = masks.argmax(1)
    bad = legal.copy()
    bad[2] = int(np.flatnonzero(~masks[2])[0])
    for actions, match in [(legal[:3], r"shape \(4,\)"), (legal.astype(float), "integer"),
                           (np.where(np.arange(4) == 1, 116, legal), "game 1: action 116 is out of range"),
                           (np.where(np.arange(4) == 0, -1, legal), "game 0: action -1"),
                           (bad, "game 2: action .* not legal")]:
        with pytest.raises(ValueError, match=match):
            venv.step(actions)
        assert np.array_equal(venv.engine.observation, obs)
    with pytest.raises(ValueError, match="reset"):
        UnoVectorEnv(2).step(np.zeros(2, np.int64))


@pytest.mark.parametrize("kwargs, match", [
    ({"num_players": 1}, r"num_players must be an integer in 2\.\.10, got 1"),
    ({"num_players": "2"}, "num_players"),
    ({"learner_seat": 2}, r"learner_seat must be a seat 0\.\.1 or 'random', got 2"),
    ({"learner_seat": "any"}, "learner_seat"),
    ({"opponents": [None]}, "opponents must be agents"),
    ({"opponents": [HashAgent(), HashAgent()]}, "list of 2"),
    ({"rules": 3}, "rules must be None, a UnoRules, a preset name"),
    ({"rules": "casual"}, "unknown preset"),
    ({"rules": {"colour": 1}}, "unknown option"),
    ({"render_mode": "human"}, "render_mode"),
    ({"on_illegal": "ignore"}, "on_illegal must be 'raise' or 'terminate'"),
])
def test_single_env_bad_kwargs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        UnoEnv(**kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"num_envs": 0}, r"num_envs must be an integer in 1\.\."),
    ({"copy": 1}, "copy must be True or False"),
    ({"render_mode": "ansi"}, "render_mode must be None"),
    ({"num_players": 11}, "num_players"),
])
def test_vector_env_bad_kwargs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        UnoVectorEnv(**{"num_envs": 2, **kwargs})


def test_bad_seeds_options_and_opponent_output():
    venv = UnoVectorEnv(3)
    with pytest.raises(ValueError, match="list of 3 integers"):
        venv.reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"0\.\.2\*\*64"):
        venv.reset(seed=-1)
    with pytest.raises(ValueError, match="options are not used"):
        venv.reset(options={"x": 1})
    with pytest.raises(ValueError, match="seed must be"):
        UnoEnv().reset(seed=1.5)

    class Broken:
        def act(self, observation, action_mask, rng):
            return np.zeros(observation.shape[0] + 1)

    with pytest.raises(ValueError, match="opponent .* returned float64 actions of shape"):
        UnoVectorEnv(4, opponents=Broken(), learner_seat=1).reset(seed=0)


# --- stable-baselines3 ---------------------------------------------------------------------


def test_sb3_adapter_api():
    from stable_baselines3.common.monitor import Monitor

    from uno_env.sb3_vec_env import UnoSB3VecEnv

    venv = UnoSB3VecEnv(num_envs=8, rules=UnoRules(max_turns=30), seed=4)
    obs = venv.reset()
    venv.seed(4)
    assert np.array_equal(venv.reset(), obs)  # seed() applies to the next reset
    masks = venv.env_method("action_masks")
    assert len(masks) == 8 and np.array_equal(np.stack(masks), venv.action_masks())
    assert np.array_equal(np.stack(venv.env_method("action_masks", indices=[1, 3])), venv.action_masks()[[1, 3]])
    assert venv.get_attr("num_players", indices=[0, 1]) == [2, 2]
    assert venv.env_is_wrapped(Monitor) == [False] * 8
    venv.set_attr("copy", True)
    with pytest.raises(ValueError, match="all 8 games at once"):
        venv.set_attr("copy", True, indices=[0])
    with pytest.raises(ValueError, match="indices"):
        venv.get_attr("num_players", indices=[8])
    rng = np.random.default_rng(0)
    truncations = 0
    for _ in range(40):
        obs, rewards, dones, infos = venv.step(np.array([random_legal(m, rng) for m in venv.action_masks()]))
        assert len(infos) == 8 and obs.shape == (8, venv.observation_space.shape[0])
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert info["terminal_observation"].shape == obs[i].shape
            assert set(info["episode"]) == {"r", "l", "t"} and info["episode"]["r"] == rewards[i]
            truncations += info["TimeLimit.truncated"]
            if info["TimeLimit.truncated"]:
                assert info["terminal_observation_exact"] and rewards[i] == 0.0
        for i in np.flatnonzero(~dones):
            assert infos[i] == {}
    assert truncations > 0


def test_maskable_ppo_trains_on_the_adapter():
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    from uno_env.sb3_vec_env import UnoSB3VecEnv

    torch.set_num_threads(1)
    venv = UnoSB3VecEnv(num_envs=8, num_players=2, seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=256, n_epochs=1, seed=0, device="cpu")
    # An illegal action would raise ValueError out of learn(): masking must hold all the way.
    model.learn(4096)
    assert model.num_timesteps >= 4096
    assert len(model.ep_info_buffer) > 0  # episodes finished and were logged
