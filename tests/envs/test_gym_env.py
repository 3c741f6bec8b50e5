"""Gymnasium layer: UnoEnv, UnoVectorEnv, the SB3 adapter (checkers, equivalence, bad input, PPO smoke)."""

from __future__ import annotations

import collections
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from builder import cards, place
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.vector import AutoresetMode

import uno_env
import uno_env._vector_driver
from agents import sample_legal
from uno_env import ACTION_NAMES, Engine, UnoRules, card_name
from uno_env.cards import deck_counts, parse_card
from uno_env.gym_env import ENV_ID, LegalDiscrete, UnoEnv, UnoVectorEnv
from uno_env.observation import OBS_FIELDS, OBS_OFFSETS, PHASE_NAMES

IS_CURRENT = OBS_OFFSETS["is_current"]
SAME = AutoresetMode.SAME_STEP
DRAW_CARDS = {
    parse_card(n) for n in ("red draw two", "yellow draw two", "green draw two", "blue draw two", "wild draw four")
}


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


@pytest.mark.parametrize(
    "kwargs", [{}, {"num_players": 4, "learner_seat": "random"}, {"num_players": 3, "rules": {"open_hands": True}}]
)
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
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # gymnasium's default
    same = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", autoreset_mode=SAME)
    assert (
        same.metadata["autoreset_mode"] is SAME and UnoVectorEnv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    )
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


@pytest.mark.parametrize("unwrap", [False, True])
def test_the_registered_env_passes_gymnasiums_checker_as_made(unwrap):
    # check_env(gym.make(ENV_ID)) with no arguments, as a user first calls it; its determinism check steps an
    # action sampled for another position, which the default on_illegal="terminate" survives.
    env = gym.make(ENV_ID)
    assert env.unwrapped.on_illegal == "terminate"
    gym_check_env(env.unwrapped if unwrap else env)


def test_default_terminates_on_an_illegal_action_and_raise_is_opt_in():
    obs, info = UnoEnv().reset(seed=3)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    env = UnoEnv()
    env.reset(seed=3)
    assert env.step(illegal)[1:4] == (-1.0, True, False)
    strict = UnoEnv(on_illegal="raise")
    strict.reset(seed=3)
    with pytest.raises(ValueError, match="not legal"):
        strict.step(illegal)


def test_sb3_make_vec_env_asks_for_rgb_array_and_gets_images():
    pytest.importorskip("PIL")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(ENV_ID, n_envs=2, seed=0)
    assert venv.render_mode == "rgb_array"
    venv.reset()
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3 for f in frames)
    venv.close()


def test_render_modes_of_the_single_env(capsys):
    pytest.importorskip("PIL")
    assert UnoEnv.metadata["render_modes"] == uno_env.raw_env.metadata["render_modes"]
    img = UnoEnv(render_mode="rgb_array")
    img.reset(seed=0)
    frame = img.render()
    assert frame.dtype == np.uint8 and frame.shape == uno_env.render.IMAGE_SIZE + (3,)
    text = UnoEnv(render_mode="ansi")
    text.reset(seed=0)
    assert "Your hand:" in text.render()
    human = UnoEnv(render_mode="human")
    capsys.readouterr()
    human.reset(seed=0)
    human.step(int(human.action_masks().argmax()))
    assert capsys.readouterr().out.count("Your hand:") == 2  # after reset and after the step


def test_vector_env_renders_one_frame_per_game():
    text = UnoVectorEnv(3, render_mode="ansi")
    text.reset(seed=0)
    frames = text.render()
    assert isinstance(frames, tuple) and len(frames) == 3 and all("Your hand:" in f for f in frames)
    assert UnoVectorEnv(2).render() is None


def test_rgb_array_without_pillow_says_which_extra_to_install(monkeypatch):
    env = UnoEnv(render_mode="rgb_array")  # construction does not need Pillow (SB3 asks for rgb_array anyway)
    env.reset(seed=0)
    monkeypatch.setitem(__import__("sys").modules, "PIL", None)
    with pytest.raises(ImportError, match=r"pip install uno_env\[render\]"):
        env.render()


# --- vector == single --------------------------------------------------------------------


CONFIGS = {
    "2p truncating": dict(num_players=2, rules=UnoRules(hand_size=4, max_turns=40), learner_seat=0, opponents=None),
    "3p random seat": dict(
        num_players=3, rules=UnoRules(hand_size=3, max_turns=150), learner_seat="random", opponents=None
    ),
    "4p two agents": dict(
        num_players=4,
        rules=UnoRules(hand_size=3, max_turns=100),
        learner_seat=2,
        opponents=[HashAgent(0), HashAgent(3), HashAgent(0)],
    ),
    "open hands": dict(
        num_players=3, rules=UnoRules(open_hands=True, hand_size=3, max_turns=100), learner_seat=1, opponents=None
    ),
    "hand size 1": dict(num_players=2, rules=UnoRules(hand_size=1, max_turns=9), learner_seat="random", opponents=None),
    "house, explicit UNO, doubles": dict(
        num_players=3,
        rules=UnoRules.preset("house", uno_call="explicit", allow_doubles=True, hand_size=3, max_turns=100),
        learner_seat="random",
        opponents=None,
    ),
    "teams match": dict(
        num_players=4,
        rules=UnoRules(teams=True, episode="match", target_points=30, hand_size=2, max_turns=40),
        learner_seat="random",
        opponents=None,
    ),
    "fewest cards wins": dict(
        num_players=3,
        rules=UnoRules(hand_size=5, max_turns=12, turn_limit_rule="fewest_cards_wins"),
        learner_seat="random",
        opponents=None,
    ),
    "end on empty deck, stacking": dict(
        num_players=2,
        rules=UnoRules(hand_size=50, end_on_empty_deck=True, stack_draw_two=True, max_turns=80),
        learner_seat=1,
        opponents=None,
    ),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_vector_env_equals_single_envs(name):
    """Game i of a vector env reset with seed s is UnoEnv reset with seed s + i, step for step,
    episode after episode: observations, masks, rewards, flags, learner seats, and final_obs
    equal to the single env's last observation of every episode."""
    cfg = dict(CONFIGS[name])
    cfg["opponents"] = cfg["opponents"] or HashAgent()
    B, steps, seed = 6, 120, 11
    venv = UnoVectorEnv(B, **cfg, autoreset_mode=SAME)
    singles = [UnoEnv(**cfg) for _ in range(B)]
    vobs, vinfo = venv.reset(seed=seed)
    sobs = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    assert np.array_equal(vobs, np.stack(sobs))
    rng = np.random.default_rng(0)
    ends = 0
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
                assert vinfo["_final_obs"][i] and vinfo["_final_info"][i]
                assert np.array_equal(vinfo["final_obs"][i], obs), (t, i)
                obs, _ = env.reset()
            else:
                assert vinfo.get("final_obs") is None or vinfo["final_obs"][i] is None
            assert np.array_equal(vobs[i], obs), (t, i)
        assert np.array_equal(venv.learner_seats, [env.learner_seat for env in singles])
    assert ends >= 3


@pytest.mark.parametrize("name", list(CONFIGS))
def test_next_step_vector_env_equals_single_envs(name):
    """NEXT_STEP (the default): the ending step returns the single env's last observation, reward
    and flag; the next step ignores that game's action and returns the single env's reset."""
    cfg = dict(CONFIGS[name])
    cfg["opponents"] = cfg["opponents"] or HashAgent()
    B, steps, seed = 6, 120, 11
    venv = UnoVectorEnv(B, **cfg)
    assert venv.autoreset_mode is AutoresetMode.NEXT_STEP
    singles = [UnoEnv(**cfg) for _ in range(B)]
    vobs, vinfo = venv.reset(seed=seed)
    assert np.array_equal(vobs, np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]))
    rng = np.random.default_rng(0)
    waiting = np.zeros(B, bool)
    ends = resets = 0
    for t in range(steps):
        masks = venv.action_masks()
        assert np.array_equal(vinfo["action_mask"], masks.astype(np.int8))
        assert masks[waiting].all()  # a finished game takes any action (ignored)
        actions = np.array([random_legal(m, rng) for m in masks])
        actions[waiting] = 0  # ignored: the step deals those games anew
        vobs, vrew, vterm, vtrunc, vinfo = venv.step(actions)
        assert "final_obs" not in vinfo
        for i, env in enumerate(singles):
            if waiting[i]:
                obs, _ = env.reset()
                assert (vrew[i], vterm[i], vtrunc[i]) == (0, False, False)
                resets += 1
            else:
                assert np.array_equal(masks[i], env.action_masks())
                obs, rew, term, trunc, _ = env.step(int(actions[i]))
                assert (rew, term, trunc) == (vrew[i], vterm[i], vtrunc[i]), (t, i)
                ends += term or trunc
            assert np.array_equal(vobs[i], obs), (t, i)
        waiting = vterm | vtrunc
        assert np.array_equal(venv.learner_seats, [env.learner_seat for env in singles])
    assert ends >= 3 and resets >= 2


def test_state_is_the_learners_whole_state_and_never_the_observation():
    """``state()``: hidden cards change it, never the observation (the policy's input)."""
    from uno_env.observation import STATE_SIZE

    venv = UnoVectorEnv(4, num_players=3, learner_seat="random")
    obs, _ = venv.reset(seed=5)
    state = venv.state()
    assert state.shape == (4, STATE_SIZE) and state.dtype == np.float32
    np.testing.assert_array_equal(state, venv.engine.state(venv.learner_seats))
    np.testing.assert_array_equal(state[:, : obs.shape[1]], obs)
    before_obs, before_state = obs.copy(), state.copy()
    for seat in range(3):  # redeal what the learners cannot see (other hands, the draw pile)
        rows = venv.learner_seats == seat
        if rows.any():
            venv.engine.resample_hidden(rows, seat, np.random.default_rng(seat))
    np.testing.assert_array_equal(venv.engine.observe(venv.learner_seats), before_obs)
    assert not np.array_equal(venv.state(), before_state)
    single = UnoEnv(num_players=3)
    o, _ = single.reset(seed=1)
    s = single.state()
    assert s.shape == (STATE_SIZE,) and np.array_equal(s[: o.shape[0]], o)
    single.engine.resample_hidden(0, single.learner_seat, np.random.default_rng(0))
    assert np.array_equal(single.engine.observe(single.learner_seat)[0], o) and not np.array_equal(single.state(), s)


WRAPPERS = {
    "NormalizeObservation": lambda envs: gym.wrappers.vector.NormalizeObservation(envs),
    "FlattenObservation": lambda envs: gym.wrappers.vector.FlattenObservation(envs),
    "TransformObservation": lambda envs: gym.wrappers.vector.TransformObservation(
        envs,
        lambda o: o * 2.0,
        gym.spaces.Box(envs.observation_space.low * 2, envs.observation_space.high * 2, dtype=np.float32),
    ),
    "RescaleObservation": lambda envs: gym.wrappers.vector.RescaleObservation(envs, -1.0, 1.0),
    "RecordEpisodeStatistics": lambda envs: gym.wrappers.vector.RecordEpisodeStatistics(envs),
}


@pytest.mark.parametrize("wrapper", list(WRAPPERS))
def test_gymnasium_vector_wrappers_on_make_vec(wrapper):
    """gymnasium's own vector wrappers (gymnasium/wrappers/vector, the installed release) on
    ``gym.make_vec("uno_env/Uno-v0")`` as made: they refused SAME_STEP before NEXT_STEP existed."""
    envs = WRAPPERS[wrapper](gym.make_vec(ENV_ID, num_envs=4, rules=UnoRules(hand_size=3, max_turns=30)))
    obs, infos = envs.reset(seed=0)
    assert envs.observation_space.contains(obs.astype(np.float32)) or wrapper == "NormalizeObservation"
    rng = np.random.default_rng(0)
    done = 0
    for _ in range(80):
        obs, reward, terminated, truncated, infos = envs.step(sample_legal(envs.unwrapped.action_masks(), rng))
        assert obs.shape == (4, envs.unwrapped.engine.observation_size) and np.isfinite(obs).all()
        done += int((terminated | truncated).sum())
    assert done > 4
    if wrapper == "RescaleObservation":
        assert obs.min() >= -1.0 - 1e-5 and obs.max() <= 1.0 + 1e-5


# --- final_obs: the learner's exact view of the finished round, for every way a round ends ---


class PreferAgent:
    """Plays the first legal action of a preference list (action names), else its lowest legal action."""

    name = "prefer"

    def __init__(self, *names: str) -> None:
        self.prefs = [ACTION_NAMES.index(n) for n in names]

    def act(self, observation, action_mask, rng):
        out = action_mask.argmax(1)
        for a in reversed(self.prefs):
            out = np.where(action_mask[:, a], a, out)
        return out.astype(np.int64)


OPPONENT = PreferAgent("play red draw two", "play wild draw four", "play red 5", "play red 2", "play red 4")


ALL_OTHER_CARDS = object()  # a hand that holds every card not placed elsewhere

# (name, num_players, learner seat, rules, hands, top, draw, learner's action, expected facts)
# The learner is to act; the opponents (OPPONENT) play until the round ends.
END_SCENARIOS = [
    (
        "learner plays its last card (R8)",
        2,
        0,
        UnoRules(),
        ["red 7", "blue 1, green 2"],
        "red 3",
        "",
        "play red 7",
        dict(terminated=True, reward=1.0, learner_hand=""),
    ),
    (
        "opponent plays its last card (R8)",
        2,
        0,
        UnoRules(),
        ["red 7, blue 1", "red 5"],
        "red 3",
        "",
        "play red 7",
        dict(terminated=True, reward=-1.0, learner_hand="blue 1"),
    ),
    (
        "opponent's last card is a Draw Two: the learner still draws 2 (R8)",
        2,
        0,
        UnoRules(),
        ["red 7, blue 1", "red draw two"],
        "red 3",
        "green 4, yellow 6",
        "play red 7",
        dict(terminated=True, reward=-1.0, learner_hand="blue 1, green 4, yellow 6"),
    ),
    (
        "opponent's last card is a Wild Draw Four: the learner still draws 4 (R8, R12.4)",
        2,
        0,
        UnoRules(),
        ["red 7, blue 1", "wild draw four"],
        "red 3",
        "green 4, yellow 6, blue 9, red 1",
        "play red 7",
        dict(terminated=True, reward=-1.0, learner_hand="blue 1, green 4, yellow 6, blue 9, red 1"),
    ),
    (
        "3 players, learner at seat 1: seat 0's last Draw Two hits it (R8)",
        3,
        1,
        UnoRules(),
        ["red draw two", "red 7, blue 1", "red 4, green 8"],
        "red 3",
        "green 4, yellow 6",
        "play red 7",
        dict(terminated=True, reward=-1.0, learner_hand="blue 1, green 4, yellow 6"),
    ),
    (
        "truncation at max_turns (R8)",
        2,
        0,
        UnoRules(max_turns=2),
        ["red 7, blue 1, green 1", "red 2, yellow 9, blue 5"],
        "red 3",
        "",
        "play red 7",
        dict(truncated=True, reward=0.0, learner_hand="blue 1, green 1"),
    ),
    (
        "turn_limit_rule fewest_cards_wins (R8)",
        2,
        1,
        UnoRules(max_turns=2, turn_limit_rule="fewest_cards_wins"),
        ["red 2, yellow 9, blue 5", "red 7, blue 1"],
        "red 3",
        "",
        "play red 7",
        dict(terminated=True, reward=1.0, learner_hand="blue 1"),
    ),
    (
        "end_on_empty_deck: a penalty draw finds both piles empty (R4, R12.19)",
        2,
        0,
        UnoRules(end_on_empty_deck=True),
        ["red draw two, blue 1", ALL_OTHER_CARDS],
        "red 3",
        "",
        "play red draw two",
        dict(terminated=True, reward=1.0, learner_hand="blue 1"),
    ),
]


def _hands(rules, hands, top, draw):
    """Replace ALL_OTHER_CARDS by the names of every card not placed elsewhere."""
    placed = [c for h in hands if h is not ALL_OTHER_CARDS for c in cards(h)] + cards(top) + cards(draw)
    rest = deck_counts(rules.deck, rules.custom_wild_count).astype(np.int64) - np.bincount(placed, minlength=57)
    others = ", ".join(card_name(c) for c in np.repeat(np.arange(57), rest))
    return [others if h is ALL_OTHER_CARDS else h for h in hands]


@pytest.fixture(params=["batched read", "per-game read"])
def read_path(request, monkeypatch):
    """Both ways the env reads final views: Engine.observe on the whole batch, or a one-game copy per game."""
    monkeypatch.setattr(uno_env._vector_driver, "_PER_GAME_READ", 0 if request.param == "per-game read" else 10**9)
    return request.param


@pytest.mark.parametrize("scenario", END_SCENARIOS, ids=[s[0] for s in END_SCENARIOS])
def test_final_obs_is_the_learners_exact_view_for_every_end(scenario, read_path):
    """final_obs equals Engine.observe(learner) of the finished game, played out independently on
    a one-game Engine; and the learner's hand in it holds what the rules say (e.g. R8's last
    Draw Two). The scenario runs in game 1 of 3; games 0 and 2 play on undisturbed."""
    _, P, seat, rules, hands, top, draw, action, want = scenario
    hands = _hands(rules, hands, top, draw)
    # The reference: a plain engine, the learner's action, then OPPONENT until the round ends.
    ref = Engine(1, P, rules)
    place(ref, 0, rules, hands, top, draw, player=seat)
    ref.step(np.array([ACTION_NAMES.index(action)]))
    while not (ref.terminated[0] or ref.truncated[0]):
        assert ref.current_player[0] != seat  # the scenario ends before the learner acts again
        ref.step(OPPONENT.act(ref.observation, ref.legal_mask, None))
    expected = ref.observe(seat)[0]
    assert sorted(card_name(c) for c in ref.game_state(0)["hands"][seat]) == sorted(
        card_name(c) for c in cards(want["learner_hand"])
    )
    np.testing.assert_array_equal(expected[:57], np.bincount(cards(want["learner_hand"]), minlength=57))

    venv = UnoVectorEnv(3, num_players=P, rules=rules, learner_seat=seat, opponents=OPPONENT, autoreset_mode=SAME)
    venv.reset(seed=0)
    place(venv.engine, 1, rules, hands, top, draw, player=seat)
    actions = venv.action_masks().argmax(1)
    actions[1] = ACTION_NAMES.index(action)
    obs, reward, terminated, truncated, infos = venv.step(actions)
    assert (terminated[1], truncated[1], reward[1]) == (
        want.get("terminated", False),
        want.get("truncated", False),
        want["reward"],
    )
    assert (terminated[1], truncated[1], reward[1]) == (ref.terminated[0], ref.truncated[0], ref.rewards[0, seat])
    assert infos["_final_obs"][1]
    np.testing.assert_array_equal(infos["final_obs"][1], expected)
    assert (venv.driver._scratch is not None) == (read_path == "per-game read")  # the path under test ran
    assert infos["final_obs"][1][OBS_OFFSETS["phase"] + PHASE_NAMES.index("round_over")] == 1
    # Game 1 was dealt anew and waits for the learner.
    assert obs[1][IS_CURRENT] == 1 and venv.engine.current_player[1] == seat
    assert not (venv.engine.terminated | venv.engine.truncated).any()

    env = UnoEnv(num_players=P, rules=rules, learner_seat=seat, opponents=OPPONENT)
    env.reset(seed=0)
    place(env.engine, 0, rules, hands, top, draw, player=seat)
    last, r, term, trunc, _ = env.step(ACTION_NAMES.index(action))
    assert (term, trunc, r) == (terminated[1], truncated[1], reward[1])
    np.testing.assert_array_equal(last, expected)


END_KINDS = {
    "classic, 3 cards": (2, UnoRules(hand_size=3)),
    "3 players, 3 cards": (3, UnoRules(hand_size=3)),
    "truncation": (2, UnoRules(hand_size=7, max_turns=16)),
    "fewest cards wins": (3, UnoRules(hand_size=5, max_turns=12, turn_limit_rule="fewest_cards_wins")),
    "open hands": (3, UnoRules(open_hands=True, hand_size=3, max_turns=60)),
}


@pytest.mark.parametrize("name", list(END_KINDS))
def test_final_obs_equals_the_engines_view_of_the_finished_game_in_random_play(name, read_path):
    """Under random play, every final_obs is Engine.observe(learner seat) of the finished game,
    read (by this test, through the engine's reset) just before the game is dealt anew; its
    hand agrees with game_state. Every kind of end the rule set allows shows up."""
    P, rules = END_KINDS[name]
    venv = UnoVectorEnv(32, num_players=P, rules=rules, learner_seat="random", autoreset_mode=SAME)
    e = venv.engine
    seen: dict[int, tuple[np.ndarray, dict]] = {}
    real_reset = e.reset

    def reset(seed=None, games=None):
        if games is not None:
            views = e.observe(venv.driver.seats)
            for i in np.flatnonzero(games):
                seen.setdefault(int(i), (views[i].copy(), e.game_state(int(i)), int(venv.driver.seats[i])))
        return real_reset(seed=seed, games=games)

    e.reset = reset
    venv.reset(seed=1)
    rng = np.random.default_rng(1)
    kinds = collections.Counter()
    for _ in range(150):
        seen.clear()
        _, reward, terminated, truncated, infos = venv.step(sample_legal(venv.action_masks(), rng))
        for i in np.flatnonzero(terminated | truncated):
            view, state, seat = seen[int(i)]
            np.testing.assert_array_equal(infos["final_obs"][i], view)
            np.testing.assert_array_equal(view[:57], np.bincount(state["hands"][seat], minlength=57))
            assert view[OBS_OFFSETS["hand_sizes"]] == len(state["hands"][seat])
            if truncated[i]:
                kinds["truncated"] += 1
            elif min(len(h) for h in state["hands"]) > 0:
                kinds["won on fewest cards" if reward[i] > 0 else "lost on fewest cards"] += 1
            elif reward[i] > 0:
                kinds["learner went out"] += 1
            elif state["top_card"] in DRAW_CARDS:
                kinds["opponent went out on a draw card"] += 1
            else:
                kinds["opponent went out"] += 1
        assert not infos.get("_final_obs", np.zeros(32, bool))[~(terminated | truncated)].any()
    expected = {"learner went out", "opponent went out", "opponent went out on a draw card"}
    if rules.max_turns < 100:
        expected = (
            {"won on fewest cards", "lost on fewest cards"} if rules.turn_limit_rule != "truncate" else {"truncated"}
        )
    assert expected <= set(kinds), kinds


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, SAME])
def test_gymnasium_episode_statistics_wrapper_counts_episodes(mode):
    """gymnasium's own vector RecordEpisodeStatistics counts episodes as this env ends them."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    if mode is SAME and tuple(int(x) for x in gym.__version__.split(".")[:2]) < (1, 4):
        pytest.skip(
            "gymnasium < 1.4 counts SAME_STEP episodes one step short in vector RecordEpisodeStatistics "
            "(fixed by Gymnasium PR #1624, released in 1.4.0); ray[rllib] 2.60 pins gymnasium 1.2.2"
        )
    envs = RecordEpisodeStatistics(UnoVectorEnv(16, rules=UnoRules(hand_size=3, max_turns=30), autoreset_mode=mode))
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    length = np.zeros(16, int)
    waiting = np.zeros(16, bool)
    ends = 0
    for _ in range(60):
        _, reward, terminated, truncated, infos = envs.step(sample_legal(envs.unwrapped.action_masks(), rng))
        length[~waiting] += 1  # NEXT_STEP: the step that deals a finished game anew is no learner step
        done = terminated | truncated
        if done.any():
            assert np.array_equal(infos["_episode"], done)
            np.testing.assert_array_equal(infos["episode"]["r"][done], reward[done])
            np.testing.assert_array_equal(infos["episode"]["l"][done], length[done])
            ends += int(done.sum())
        length[done] = 0
        waiting = done if mode is AutoresetMode.NEXT_STEP else waiting
    assert ends > 10


def test_engine_runs_the_true_rules_without_autoreset():
    rules = UnoRules(max_turns=33)
    venv = UnoVectorEnv(4, rules=rules)
    assert venv.engine.rules == rules and venv.engine.rules.max_turns == 33
    assert not venv.engine.autoreset


def test_same_seed_same_trajectory_with_random_opponents():
    """Opponents draw from the env's np_random, seeded by reset(seed): a run replays exactly."""
    runs = []
    for _ in range(2):
        venv = UnoVectorEnv(
            16, num_players=3, learner_seat="random", rules=UnoRules(hand_size=3, max_turns=40), autoreset_mode=SAME
        )
        obs, _ = venv.reset(seed=7)
        rng = np.random.default_rng(3)
        trace = [obs]
        for _ in range(60):
            obs, reward, terminated, truncated, infos = venv.step(sample_legal(venv.action_masks(), rng))
            finals = [f for f in infos.get("final_obs", []) if f is not None]
            trace += [obs, reward, terminated, truncated, venv.learner_seats, *finals]
        runs.append(trace)
    assert len(runs[0]) == len(runs[1]) and len(runs[0]) > 1 + 5 * 60
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


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
        rel = (venv.engine.current_player - venv.driver.seats) % 4
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
    env = UnoEnv(on_illegal="raise")
    obs, info = env.reset(seed=2)
    before = env.game_state()
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)
    assert env.game_state() == before
    assert env.step(int(np.flatnonzero(info["action_mask"])[0]))  # still playable


@pytest.mark.parametrize(
    "action, match",
    [
        (116, "0..115"),
        (-1, "0..115"),
        (2.0, "0..115"),
        (True, "0..115"),
        ("3", "0..115"),
        (np.array([1, 2]), "shape"),
    ],
)
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
    for actions, match in [
        (legal[:3], r"shape \(4,\)"),
        (legal.astype(float), "integer"),
        (np.where(np.arange(4) == 1, 116, legal), "game 1: action 116 is out of range"),
        (np.where(np.arange(4) == 0, -1, legal), "game 0: action -1"),
        (bad, "game 2: action .* not legal"),
    ]:
        with pytest.raises(ValueError, match=match):
            venv.step(actions)
        assert np.array_equal(venv.engine.observation, obs)
    with pytest.raises(ValueError, match="reset"):
        UnoVectorEnv(2).step(np.zeros(2, np.int64))


def _trace(venv, seed, steps=80):
    """Observations, rewards and done flags of a run with learner actions hashed from the observation."""
    obs, _ = venv.reset(seed=seed)
    learner = HashAgent(5)
    out = [obs]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = venv.step(learner.act(obs, venv.action_masks(), None))
        out += [obs, reward, terminated, truncated]
    return out


def test_opponent_groups_play_the_games_of_separate_envs():
    """Groups split the batch in order: each group's games are those of an env of its own with its
    opponents and the seeds that follow on (deterministic opponents: their choice on a row is a
    function of that row)."""
    rules, P = UnoRules(hand_size=4, max_turns=60), 3
    a, b = HashAgent(0), HashAgent(2)
    grouped = UnoVectorEnv(8, P, rules=rules, learner_seat="random", opponents=[(a, 3), ([b, a], 5)])
    assert grouped.group_of.tolist() == [0, 0, 0, 1, 1, 1, 1, 1]
    alone = [
        UnoVectorEnv(3, P, rules=rules, learner_seat="random", opponents=a),
        UnoVectorEnv(5, P, rules=rules, learner_seat="random", opponents=[b, a]),
    ]
    together = _trace(grouped, 11)
    parts = [_trace(alone[0], 11), _trace(alone[1], 14)]
    for k, x in enumerate(together):
        np.testing.assert_array_equal(x, np.concatenate([parts[0][k], parts[1][k]]))
    for bad, match in (
        ([(a, 3), (b, 4)], "cover the 8 games exactly"),
        ([(a, 8), ([a], 0)], "num_games"),
        ([(a, 4), ([a, a, a], 4)], "list of 3"),
    ):
        with pytest.raises(ValueError, match=match):
            UnoVectorEnv(8, P, opponents=bad)


def test_set_opponents_swaps_one_group_from_the_next_step():
    calls = {}

    class Counting(HashAgent):
        def act(self, observation, action_mask, rng):
            calls[self.name] = calls.get(self.name, 0) + observation.shape[0]
            return super().act(observation, action_mask, rng)

    first, second, other = Counting(0), Counting(0), Counting(1)
    first.name, second.name, other.name = "first", "second", "other"
    venv = UnoVectorEnv(6, opponents=[(first, 2), (other, 4)], learner_seat="random")
    before = _trace(venv, 3, steps=30)
    venv.set_opponents(second, group=0)
    calls.clear()
    after = _trace(venv, 3, steps=30)
    assert set(calls) == {"second", "other"}  # first is gone; the other group kept its own
    # The same deterministic play: the swap changed who is called, not the games.
    for x, y in zip(before, after, strict=True):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="group must be an integer in 0..1"):
        venv.set_opponents(second, group=2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_players": 1}, r"num_players must be an integer in 2\.\.10, got 1"),
        ({"num_players": "2"}, "num_players"),
        ({"learner_seat": 2}, r"learner_seat must be a seat 0\.\.1 or 'random', got 2"),
        ({"learner_seat": "any"}, "learner_seat"),
        ({"opponents": [None]}, "opponents must be agents"),
        ({"opponents": [HashAgent(), HashAgent()]}, "list of 2"),
        ({"rules": 3}, "rules must be None, a UnoRules, a preset name"),
        ({"rules": "casual"}, "unknown preset"),
        ({"rules": {"colour": 1}}, "unknown option"),
        ({"render_mode": "video"}, r"render_mode must be None or one of \['ansi', 'human', 'rgb_array'\]"),
        ({"on_illegal": "ignore"}, "on_illegal must be 'raise' or 'terminate'"),
    ],
)
def test_single_env_bad_kwargs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        UnoEnv(**kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_envs": 0}, r"num_envs must be an integer in 1\.\."),
        ({"copy": 1}, "copy must be True or False"),
        ({"render_mode": "human"}, "render_mode must be None or one of"),
        ({"num_players": 11}, "num_players"),
    ],
)
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

    with pytest.raises(ValueError, match="agent .Broken. returned float64 actions of shape"):
        UnoVectorEnv(4, opponents=Broken(), learner_seat=1).reset(seed=0)

    class Passive:  # -1 would leave the game untouched in the engine: the loop would never end
        def act(self, observation, action_mask, rng):
            return np.full(observation.shape[0], -1)

    def play(venv):
        venv.reset(seed=0)
        for _ in range(20):  # the opponents are asked at the latest after the learner's first action
            venv.step(venv.action_masks().argmax(1))

    with pytest.raises(ValueError, match=r"agent .Passive. returned action -1 for game \d+; .* in 0\.\.115"):
        play(UnoVectorEnv(4, opponents=Passive(), learner_seat=1))

    class Illegal:
        def act(self, observation, action_mask, rng):
            return (~action_mask).argmax(1)

    with pytest.raises(
        ValueError, match=r"an opponent chose an action the engine refused \(game \d+: action .* not legal"
    ):
        play(UnoVectorEnv(4, opponents=Illegal(), learner_seat=1))


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
    # The same games through UnoVectorEnv (deterministic opponents: the two envs seed their
    # generators differently).
    venv = UnoSB3VecEnv(num_envs=8, rules=UnoRules(max_turns=30), seed=4, opponents=HashAgent())
    obs = venv.reset()
    twin = UnoVectorEnv(8, rules=UnoRules(max_turns=30), opponents=HashAgent(), autoreset_mode=SAME)
    assert np.array_equal(twin.reset(seed=4)[0], obs)
    for _ in range(40):
        actions = np.array([random_legal(m, rng) for m in venv.action_masks()])
        obs, rewards, dones, infos = venv.step(actions)
        tobs, trew, tterm, ttrunc, tinfos = twin.step(actions)
        assert np.array_equal(obs, tobs) and np.array_equal(rewards, trew) and np.array_equal(dones, tterm | ttrunc)
        assert len(infos) == 8 and obs.shape == (8, venv.observation_space.shape[0])
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert np.array_equal(info["terminal_observation"], tinfos["final_obs"][i])
            assert info["TimeLimit.truncated"] == (ttrunc[i] and not tterm[i])
            assert set(info["episode"]) == {"r", "l", "t"} and info["episode"]["r"] == rewards[i]
            truncations += info["TimeLimit.truncated"]
            if info["TimeLimit.truncated"]:
                assert rewards[i] == 0.0
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


# --- history=K: the learner's public history in the observation ----------------------------

K = 6
HISTORY_CFG = dict(num_players=3, rules=UnoRules(hand_size=3, max_turns=40), learner_seat="random")


def assert_same_obs(a, b, where=None):
    """Two dict observations (or two Box observations) hold the same arrays."""
    if isinstance(a, dict):
        assert set(a) == set(b) == {"observation", "history", "history_counts"}, where
        for key in a:
            assert np.array_equal(a[key], b[key]), (where, key)
    else:
        assert np.array_equal(a, b), where


@pytest.mark.parametrize(
    "kwargs", [{}, {"num_players": 4, "learner_seat": "random"}, {"num_players": 3, "rules": {"open_hands": True}}]
)
def test_gymnasium_check_env_with_history(kwargs):
    env = gym.make(ENV_ID, on_illegal="terminate", history=K, **kwargs)
    assert isinstance(env.observation_space, gym.spaces.Dict)
    assert env.observation_space["history"].shape[0] == K
    with warnings.catch_warnings():
        # The history's counts have no upper bound (they grow with the round): the checker says so.
        warnings.filterwarnings("ignore", message=".*maximum value is infinity.*")
        gym_check_env(env.unwrapped)


def test_history_zero_is_the_env_of_today():
    plain, zero = UnoEnv(**HISTORY_CFG), UnoEnv(**HISTORY_CFG, history=0)
    assert zero.observation_space == plain.observation_space and zero.engine.history_length == 0
    assert np.array_equal(plain.reset(seed=3)[0], zero.reset(seed=3)[0])
    venv = gym.make_vec(ENV_ID, num_envs=2, history=0)
    assert isinstance(venv.single_observation_space, gym.spaces.Box) and venv.engine.history_length == 0


@pytest.mark.parametrize("history", [-1, 1.5, True, "8", 1025])
def test_bad_history_is_refused_naming_the_range(history):
    for make in (lambda: UnoEnv(history=history), lambda: UnoVectorEnv(2, history=history)):
        with pytest.raises(ValueError, match=r"history must be an integer in 0\.\.1024"):
            make()


def test_single_env_history_is_the_engines_history_of_the_learners_seat():
    env = UnoEnv(**HISTORY_CFG, history=K)
    rng = np.random.default_rng(0)
    seats, episodes, longest = set(), 0, 0
    obs, _ = env.reset(seed=1)
    for _ in range(200):
        assert env.observation_space.contains(obs)
        history, counts = env.engine.history(env.learner_seat)
        assert np.array_equal(obs["history"], history[0]) and np.array_equal(obs["history_counts"], counts[0])
        assert np.array_equal(obs["observation"], env.engine.observe(env.learner_seat)[0])
        longest = max(longest, int(obs["history"][:, 0].sum()))
        obs, _, term, trunc, _ = env.step(random_legal(env.action_masks(), rng))
        if term or trunc:
            seats.add(env.learner_seat)
            episodes += 1
            history, counts = env.engine.history(env.learner_seat)  # the finished round, as kept
            assert np.array_equal(obs["history"], history[0]) and np.array_equal(obs["history_counts"], counts[0])
            obs, _ = env.reset()
    assert episodes >= 3 and len(seats) > 1 and longest == K  # rounds longer than K fill the rows


@pytest.mark.parametrize("mode", [SAME, AutoresetMode.NEXT_STEP])
def test_vector_env_history_equals_single_envs_and_the_engine(mode, read_path):
    """Game i of the vector env is UnoEnv(seed + i) with its history, step for step: under
    SAME_STEP final_obs holds the finished round's history (the single env's last observation),
    under NEXT_STEP the ending step returns it; every other observation's history is
    Engine.history from each game's learner seat."""
    cfg = dict(HISTORY_CFG, opponents=HashAgent())
    B, seed = 4, 5
    venv = UnoVectorEnv(B, **cfg, history=K, autoreset_mode=mode)
    singles = [UnoEnv(**cfg, history=K) for _ in range(B)]
    vobs, _ = venv.reset(seed=seed)
    sobs = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    rng = np.random.default_rng(0)
    waiting = np.zeros(B, bool)
    ends = 0
    for t in range(80):
        assert venv.observation_space.contains(vobs)
        history, counts = venv.engine.history(venv.learner_seats)
        assert np.array_equal(vobs["history"], history) and np.array_equal(vobs["history_counts"], counts)
        for i in range(B):
            assert_same_obs({k: v[i] for k, v in vobs.items()}, sobs[i], (t, i))
        actions = np.array([random_legal(m, rng) for m in venv.action_masks()])
        vobs, _, vterm, vtrunc, vinfo = venv.step(actions)
        for i, env in enumerate(singles):
            if waiting[i]:
                sobs[i] = env.reset()[0]
                continue
            sobs[i], _, term, trunc, _ = env.step(int(actions[i]))
            if term or trunc:
                ends += 1
                if mode is SAME:
                    final = vinfo["final_obs"][i]
                    assert venv.single_observation_space.contains(final)
                    assert_same_obs(final, sobs[i], (t, i))
                    sobs[i] = env.reset()[0]
        waiting = (vterm | vtrunc) if mode is not SAME else waiting
    assert ends >= 3


def test_twin_games_differing_in_hidden_cards_give_the_learner_the_same_history():
    """R11: seat 2's hand and the cards seats 2 and 0 draw differ between the twins; the learner
    (seat 1) sees the same public events, so its whole observation, history included, is the same."""
    twins = [("yellow 3, yellow 4", "blue 3, blue 5"), ("yellow 5, green 6", "blue 4, green 7")]
    views, states = [], []
    for seat2, drawn in twins:
        env = UnoEnv(num_players=3, learner_seat=1, opponents=PreferAgent("draw"), history=K, on_illegal="raise")
        env.reset(seed=0)
        hands = ["green 1, green 2", "red 1, red 2, blue 7", seat2]
        place(env.engine, 0, env.rules, hands, "red 9", drawn, player=1)
        obs, *_ = env.step(ACTION_NAMES.index("play red 1"))  # seat 2, then seat 0, draw and pass
        assert env.learner_seat == env.engine.game_state(0)["current_player"] == 1
        views.append(obs)
        states.append(env.game_state())
    assert states[0]["hands"][2] != states[1]["hands"][2] and states[0]["hands"][0] != states[1]["hands"][0]
    assert int(views[0]["history"][:, 0].sum()) >= 3  # the play and both draws are in it
    assert_same_obs(views[0], views[1])


def test_history_reading_opponent_gets_its_seats_history():
    """An opponent with history_length is asked with the dict observation of its own seat."""

    class Reader(PreferAgent):
        history_length = 4

        def __init__(self):
            super().__init__("draw")
            self.seen = []

        def act(self, observation, action_mask, rng):
            self.seen.append({k: v.copy() for k, v in observation.items()})
            return super().act(observation["observation"], action_mask, rng)

    reader = Reader()
    venv = UnoVectorEnv(3, num_players=2, learner_seat=0, opponents=reader)
    assert venv.engine.history_length == 4 and venv.history == 0  # the learner's obs stays the Box
    obs, _ = venv.reset(seed=0)
    assert isinstance(obs, np.ndarray)
    rng = np.random.default_rng(0)
    for _ in range(5):
        venv.step(sample_legal(venv.action_masks(), rng))
    assert reader.seen and all(s["history"].shape[1:] == (4, venv.engine.history(1)[0].shape[2]) for s in reader.seen)
    assert any(s["history"][:, 0, 0].any() for s in reader.seen)
    with pytest.raises(ValueError, match="reads the last 8 events"):
        bigger = Reader()
        bigger.history_length = 8
        venv.set_opponents(bigger)
    assert venv.driver.groups[0][0] is reader  # refused: the opponents are unchanged


def test_sb3_adapter_with_history():
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    venv = UnoSB3VecEnv(num_envs=4, rules=UnoRules(hand_size=3, max_turns=30), seed=2, history=K)
    assert isinstance(venv.observation_space, gym.spaces.Dict)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(40):
        assert all(venv.observation_space.contains({k: v[i] for k, v in obs.items()}) for i in range(4))
        history, counts = venv.venv.engine.history(venv.venv.learner_seats)
        assert np.array_equal(obs["history"], history) and np.array_equal(obs["history_counts"], counts)
        obs, _, dones, infos = venv.step(np.array([random_legal(m, rng) for m in venv.action_masks()]))
        for i in np.flatnonzero(dones):
            assert venv.observation_space.contains(infos[i]["terminal_observation"])
            finished += 1
    assert finished > 0
    with pytest.raises(ValueError, match="privileged=True and history=6 cannot be combined"):
        UnoSB3VecEnv(num_envs=2, history=K, privileged=True)
