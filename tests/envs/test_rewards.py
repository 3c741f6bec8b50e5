"""The single-learner envs' ``reward`` option: win, score and rank at a round's end (docs/spaces.md)."""

from __future__ import annotations

import numpy as np
import pytest
from builder import place

from agents import sample_legal
from uno_env import ACTION_NAMES, Engine, UnoRules
from uno_env.checks import REWARDS
from uno_env.gym_env import UnoEnv, UnoVectorEnv
from uno_env.rewards import round_rewards
from uno_env.sb3_vec_env import UnoSB3VecEnv


class LowestAgent:
    """Plays its lowest legal action id: a card when it has one (plays come before draw)."""

    def act(self, observation, action_mask, rng):
        return action_mask.argmax(1).astype(np.int64)


# (name, rules, hands, top, learner seat (to act), learner's action, score and rank of every seat)
# Points (R8): numbers their face value, skip 20, wild 50. The opponents play LowestAgent.
END_POSITIONS = [
    (
        "2 players, the learner goes out",
        UnoRules(),
        ["red 7", "blue 1, green skip"],
        "red 3",
        0,
        "play red 7",
        [0.21, -0.21],
        [1, -1],
    ),
    (
        "2 players, the opponent goes out",
        UnoRules(),
        ["red 7, wild", "red 5"],
        "red 3",
        0,
        "play red 7",
        [-0.5, 0.5],
        [-1, 1],
    ),
    (
        "4 players, places by points left",
        UnoRules(),
        ["red 7", "blue 1, green 2", "yellow 9, red skip", "blue 3, blue 4"],
        "red 3",
        0,
        "play red 7",
        [0.39, -0.03, -0.29, -0.07],
        [1, 1 / 3, -1, -1 / 3],
    ),
    (
        "4 players, a tie on points shares its places",
        UnoRules(),
        ["red 7", "blue 1, green 2", "yellow 9, red skip", "blue 3"],
        "red 3",
        0,
        "play red 7",
        [0.35, -0.03, -0.29, -0.03],
        [1, 0, -1, 0],
    ),
    (
        "4 players, teams: partners share their team's total",
        UnoRules(teams=True),
        ["blue 1, green 2", "red 7", "yellow 9, red skip", "blue 3, wild"],
        "red 3",
        1,
        "play red 7",
        [-0.32, 0.32, -0.32, 0.32],
        [-1, 1, -1, 1],
    ),
    (
        "6 players, teams: three teams ranked",
        UnoRules(teams=True),
        ["red 7", "blue 1", "red skip", "yellow 5", "blue 2", "green 9"],
        "red 3",
        0,
        "play red 7",
        [0.32, -0.03, -0.29, 0.32, -0.03, -0.29],
        [1, 0, -1, 1, 0, -1],
    ),
    (
        "3 players, fewest cards wins: tied winners split the pot and the first places",
        UnoRules(max_turns=1, turn_limit_rule="fewest_cards_wins"),
        ["red 7, blue 1", "green 4", "yellow 9, blue 2"],
        "red 3",
        0,
        "play red 7",
        [0.055, 0.055, -0.11],
        [0.5, 0.5, -1],
    ),
    (
        "3 players, a truncated round pays nothing",
        UnoRules(max_turns=2),
        ["red 7, blue 1", "red 4, green 4", "yellow 9, blue 2"],
        "red 3",
        0,
        "play red 7",
        [0, 0, 0],
        [0, 0, 0],
    ),
]


def _play_out(scenario) -> Engine:
    """The scenario's position in a one-game engine, played to its end."""
    _, rules, hands, top, seat, action, _, _ = scenario
    engine = Engine(1, len(hands), rules)
    place(engine, 0, rules, hands, top, player=seat)
    engine.step(np.array([ACTION_NAMES.index(action)]))
    while not (engine.terminated[0] or engine.truncated[0]):
        engine.step(LowestAgent().act(None, engine.legal_mask, None))
    return engine


@pytest.mark.parametrize("scenario", END_POSITIONS, ids=[s[0] for s in END_POSITIONS])
def test_every_seats_reward_of_a_known_end(scenario):
    """score and rank of every seat, from the finished round's hands; win is the engine's reward."""
    *_, score, rank = scenario
    engine = _play_out(scenario)
    np.testing.assert_allclose(round_rewards(engine, "score")[0], score, atol=1e-6)
    np.testing.assert_allclose(round_rewards(engine, "rank")[0], rank, atol=1e-6)
    np.testing.assert_array_equal(round_rewards(engine, "win")[0], engine.rewards[0])


@pytest.mark.parametrize("reward", ["score", "rank"])
@pytest.mark.parametrize("scenario", END_POSITIONS, ids=[s[0] for s in END_POSITIONS])
def test_the_envs_give_the_learner_its_reward_of_a_known_end(scenario, reward):
    """UnoVectorEnv (game 1 of 3, read before its new deal), UnoSB3VecEnv and UnoEnv give the learner its seat's value."""
    _, rules, hands, top, seat, action, score, rank = scenario
    want = np.float32({"score": score, "rank": rank}[reward][seat])
    P = len(hands)
    venv = UnoVectorEnv(
        3, P, rules, learner_seat=seat, opponents=LowestAgent(), autoreset_mode="same_step", reward=reward
    )
    venv.reset(seed=0)
    place(venv.engine, 1, rules, hands, top, player=seat)
    actions = venv.action_masks().argmax(1)
    actions[1] = ACTION_NAMES.index(action)
    _, got, terminated, truncated, _ = venv.step(actions)
    assert terminated[1] or truncated[1]
    assert got[1] == pytest.approx(want, abs=1e-6)

    sb3 = UnoSB3VecEnv(3, P, rules, learner_seat=seat, opponents=LowestAgent(), reward=reward)
    sb3.reset()
    place(sb3.venv.engine, 1, rules, hands, top, player=seat)
    actions = sb3.action_masks().argmax(1)
    actions[1] = ACTION_NAMES.index(action)
    sb3.step_async(actions)
    _, got_sb3, dones, infos = sb3.step_wait()
    assert dones[1] and got_sb3[1] == got[1]
    assert infos[1]["is_success"] == (round_rewards(_play_out(scenario), "win")[0, seat] > 0)

    env = UnoEnv(P, rules, learner_seat=seat, opponents=LowestAgent(), reward=reward)
    env.reset(seed=0)
    place(env.engine, 0, rules, hands, top, player=seat)
    *_, r, term, trunc, _ = env.step(ACTION_NAMES.index(action))
    assert (term or trunc) and r == got[1]


TABLES = {
    "2 players": (2, UnoRules(hand_size=3)),
    "3 players": (3, UnoRules(hand_size=3)),
    "4 players, fewest cards wins": (4, UnoRules(hand_size=5, max_turns=14, turn_limit_rule="fewest_cards_wins")),
    "4 players, truncated": (4, UnoRules(hand_size=5, max_turns=30)),
    "4 players, teams": (4, UnoRules(hand_size=3, teams=True)),
    "6 players, teams": (6, UnoRules(hand_size=3, teams=True)),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_score_and_rank_are_zero_sum_over_random_play(name):
    """Over random finished rounds: score and rank sum to 0 over the seats (rank is win at two sides);
    the winners get the most, a truncated round nothing."""
    P, rules = TABLES[name]
    engine = Engine(256, P, rules, seed=7)
    rng = np.random.default_rng(7)
    while not (done := engine.terminated | engine.truncated).all():
        actions = sample_legal(engine.legal_mask, rng)
        actions[done] = -1
        engine.step(actions)
    win, score, rank = (round_rewards(engine, r) for r in REWARDS)
    won = win > 0
    assert engine.terminated.any()
    np.testing.assert_allclose(score.sum(1), 0, atol=1e-5)
    sides = P // 2 if rules.teams else P
    if sides == 2:
        np.testing.assert_array_equal(rank, win)
    else:
        np.testing.assert_allclose(rank.sum(1), 0, atol=1e-5)
    for r in (score, rank):
        assert (np.where(won, r, np.inf).min(1) >= np.where(won, -np.inf, r).max(1))[engine.terminated].all()
        assert not r[engine.truncated].any()


def _trajectory(reward: str, P: int, rules: UnoRules, steps: int = 60) -> list[tuple]:
    """A NEXT_STEP vector env's steps under random actions: obs, flags, rewards, and every seat's
    ``round_rewards`` of the finished games, which wait frozen until the next step."""
    venv = UnoVectorEnv(16, P, rules, learner_seat="random", reward=reward)
    obs, _ = venv.reset(seed=3)
    rng = np.random.default_rng(3)
    out = []
    for _ in range(steps):
        obs, r, term, trunc, _ = venv.step(sample_legal(venv.action_masks(), rng))
        seats = venv.learner_seats
        full = {mode: round_rewards(venv.engine, mode)[np.arange(16), seats] for mode in REWARDS}
        out.append((obs, term, trunc, r, full, term | trunc))
    return out


@pytest.mark.parametrize("P, rules", [(2, UnoRules(hand_size=4)), (4, UnoRules(hand_size=4, max_turns=40))])
def test_the_reward_changes_the_rewards_only(P, rules):
    """The same seed plays the same games under every reward; win is the engine's reward (the default's),
    score and rank the learner's seat of ``round_rewards`` of the finished round; rank is win at 2 players."""
    default = _trajectory("win", P, rules)
    ends = 0
    for reward in REWARDS:
        for (obs, term, trunc, r, full, ended), (obs0, term0, trunc0, r0, *_) in zip(
            _trajectory(reward, P, rules), default, strict=True
        ):
            np.testing.assert_array_equal(obs, obs0)
            np.testing.assert_array_equal(term, term0)
            np.testing.assert_array_equal(trunc, trunc0)
            np.testing.assert_array_equal(r[ended], full[reward][ended])
            assert not r[~ended].any()
            if reward == "win" or (reward == "rank" and P == 2):
                np.testing.assert_array_equal(r, r0)
            ends += int(ended.sum())
    assert ends > 0


@pytest.mark.parametrize("make", [UnoEnv, UnoVectorEnv, UnoSB3VecEnv])
@pytest.mark.parametrize("reward", ["points", "", None, 1, "WIN"])
def test_a_bad_reward_is_refused_naming_the_allowed_values(make, reward):
    with pytest.raises(ValueError, match="reward must be one of 'win', 'score', 'rank', got"):
        make(reward=reward)


@pytest.mark.parametrize("make", [UnoEnv, UnoVectorEnv, UnoSB3VecEnv])
def test_score_and_rank_refuse_a_match_episode(make):
    with pytest.raises(ValueError, match="reward='score' .* episode='match'"):
        make(rules={"episode": "match"}, reward="score")
    env = make(rules={"episode": "match"}, reward="win")
    assert getattr(env, "venv", env).rules.episode == "match"
