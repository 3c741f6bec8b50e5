"""The PFSP league (training.league), expert iteration's warm start (training.expert) and train.py running both."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT, TINY_PPO

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from helpers import labels

from training.expert import POSITION_DTYPES, clone, load_positions, save_positions
from training.league import League, league_members, pfsp_probabilities
from training.opponents import LEAGUE, PendingSnapshot, opponent_groups, parse_mix
from uno_env import UnoRules

TINY_LEAGUE = [
    *TINY_PPO,
    "--eval-every",
    "0",
    "--eval-opponents",
    "random",
    "--final-eval-games",
    "60",
    "--checkpoint-every",
    "1024",
    "--snapshot-every",
    "1024",
    "--no-progress",
    "--no-tensorboard",
    "--opponent-mix",
    "0.75*league,0.25*random",
    "--league-groups",
    "2",
    "--league-opponents",
    "random,search:4",
    "--bc-positions",
    "200",
    "--bc-teacher",
    "search:8",
    "--bc-opponents",
    "random",
    "--seed",
    "5",
]


def run_train(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"train.py failed:\nSTDOUT\n{proc.stdout[-3000:]}\nSTDERR\n{proc.stderr[-3000:]}"
    return proc


# --- PFSP weights ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "win_rates, power, expected",
    [
        ([0.5, 0.5], 2.0, [0.5, 0.5]),  # equal records, equal chances
        ([0.0, 0.5, 1.0], 2.0, [0.8, 0.2, 0.0]),  # (1-p)^2 = 1, 0.25, 0: a mastered member is not drawn
        ([0.0, 0.5, 1.0], 1.0, [2 / 3, 1 / 3, 0.0]),  # linear weighting
        ([0.2, 0.6, 0.9], 0.0, [1 / 3, 1 / 3, 1 / 3]),  # power 0: uniform (plain fictitious self-play)
        ([0.75, 0.5], 2.0, [0.2, 0.8]),  # 0.0625 vs 0.25
        ([1.0, 1.0], 2.0, [0.5, 0.5]),  # the learner beats everyone: uniform
    ],
)
def test_pfsp_probabilities_table(win_rates, power, expected):
    np.testing.assert_allclose(pfsp_probabilities(win_rates, power), expected, atol=1e-12)


@pytest.mark.parametrize(
    "win_rates, power, match",
    [
        ([], 2.0, "non-empty"),
        ([1.5], 2.0, r"\[0, 1\]"),
        ([0.5], -1.0, ">= 0"),
    ],
)
def test_pfsp_probabilities_refuses_bad_input(win_rates, power, match):
    with pytest.raises(ValueError, match=match):
        pfsp_probabilities(win_rates, power)


# --- the league -------------------------------------------------------------------------------


def _tiny_model(venv, hidden=8, batch_size=32):
    """A MaskablePPO of ``hidden`` units on ``venv``: rollouts of 8 steps, minibatches of ``batch_size``."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import UnoFeatures, UnoMaskablePolicy

    return MaskablePPO(
        UnoMaskablePolicy,
        venv,
        n_steps=8,
        batch_size=batch_size,
        seed=0,
        device="cpu",
        policy_kwargs=dict(features_extractor_class=UnoFeatures, features_extractor_kwargs=dict(hidden=(hidden,))),
    )


def _league_setup(seed: int = 0, pool_size: int = 2):
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    rules = UnoRules()
    groups = opponent_groups(parse_mix("0.25*greedy,0.75*league"), 8, rules, league_groups=3, num_players=2)
    assert [(g.kind, g.games) for g in groups] == [("greedy", 2), (LEAGUE, 2), (LEAGUE, 2), (LEAGUE, 2)]
    assert isinstance(groups[1].agent, PendingSnapshot) and groups[1].agent.name == LEAGUE
    venv = UnoSB3VecEnv(8, 2, rules, learner_seat="random", opponents=[(g.agent, g.games) for g in groups], seed=0)
    model = _tiny_model(venv)
    members = league_members(["random", "heuristic"], rules, groups)
    league = League(venv, groups, members, pool_size=pool_size, window=50, seed=seed)
    return model, league


def test_league_draws_by_pfsp_counts_results_per_member_and_keeps_its_pool():
    model, league = _league_setup()
    league.start(model.policy)
    assert league.members == ["random", "heuristic", "self@0"] and league.groups == [1, 2, 3]
    assert all(m in league.members for m in league.current)
    model.learn(400, callback=[league])  # every league group plays its member: no PendingSnapshot error
    counted = sum(len(r) for r in league.results.values())
    assert counted > 0
    # Results go to the member the group played: fake one step where games 2..7 (league) and 0 (greedy) end.
    for r in league.results.values():
        r.clear()
    league.locals = {
        "dones": np.array([1, 0, 1, 1, 0, 0, 0, 0], bool),
        "infos": [{"is_success": w} if w is not None else {} for w in [True, None, True, False, *[None] * 4]],
    }
    league._on_step()
    # Games 2 and 3 are group 1's (its member's results); game 0 is greedy's, not the league's.
    assert list(league.results[league.current[0]]) == [True, False]
    assert sum(len(r) for r in league.results.values()) == 2
    # The probabilities follow the recorded win rates.
    league.results["random"].extend([True] * 50)
    league.results["heuristic"].extend([False] * 50)
    p = league.probabilities()
    assert p[1] > p[2] > p[0] and p.sum() == pytest.approx(1.0)
    # The newest pool_size snapshots stay; an evicted one's results go with it.
    league.add_snapshot(model.policy, 100)
    league.add_snapshot(model.policy, 200)
    assert league.members == ["random", "heuristic", "self@100", "self@200"]
    assert set(league.results) == set(league.members)


def test_league_draws_are_seeded_and_its_state_round_trips():
    model, league = _league_setup(seed=7)
    league.start(model.policy)
    league.add_snapshot(model.policy, 50)
    league.results["random"].extend([True, True, False])
    state = league.state_dict()
    draws = []
    for _ in range(5):
        league.redraw()
        draws.append(list(league.current))
    model2, restored = _league_setup(seed=99)
    restored.start(model2.policy)
    restored.load_state_dict(state)
    assert restored.members == league.members and list(restored.results["random"]) == [True, True, False]
    assert restored.current == state["current"]
    again = []
    for _ in range(5):
        restored.redraw()
        again.append(list(restored.current))
    assert again == draws  # the generator came back with the state
    for k, weights in restored.snapshots.items():
        for name, tensor in weights.items():
            assert (tensor == league.snapshots[k][name]).all()


def test_self_and_league_groups_draw_from_one_pool_and_resume_what_they_played():
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    rules = UnoRules()
    groups = opponent_groups(
        parse_mix("0.5*self,0.5*league"), 8, rules, self_play_groups=2, league_groups=2, num_players=2
    )
    assert [g.kind for g in groups] == ["self", "self", LEAGUE, LEAGUE]

    def setup(seed):
        venv = UnoSB3VecEnv(8, 2, rules, opponents=[(g.agent, g.games) for g in groups], seed=0)
        return _tiny_model(venv), League(
            venv, groups, league_members(["random"], rules, groups), pool_size=3, latest_prob=0.0, seed=seed
        )

    model, league = setup(3)
    league.start(model.policy)
    for step in (10, 20, 30):
        league.add_snapshot(model.policy, step)
    # One pool: the league's snapshot members are the snapshots the self groups draw.
    assert list(league.pool.snapshots) == ["self@10", "self@20", "self@30"] and league.pool.added == 4
    assert league.members == ["random", "self@10", "self@20", "self@30"]
    assert set(league.self_current) <= set(league.pool.snapshots) and league.self_agents[0].name == "self"
    assert league.self_groups == [0, 1] and league.groups == [2, 3]
    state = league.state_dict()
    model2, restored = setup(99)
    restored.start(model2.policy)
    restored.load_state_dict(state)
    assert restored.self_current == league.self_current and restored.current == league.current
    for _ in range(3):  # both generators came back with the state
        league.add_snapshot(model.policy, 40)
        restored.add_snapshot(model2.policy, 40)
        league.redraw()
        restored.redraw()
        assert restored.self_current == league.self_current and restored.current == league.current


# --- expert iteration's warm start -----------------------------------------------------------


def test_labelled_positions_are_seeded_legal_choices_with_outcomes(tmp_path):
    rules = UnoRules()
    a = labels("search:8", ["heuristic", "greedy"], rules, 2, 150, seed=3, chunk=16)
    b = labels("search:8", ["heuristic", "greedy"], rules, 2, 150, seed=3, chunk=16)
    assert len(a) == 150
    for name, dtype in POSITION_DTYPES.items():
        assert np.array_equal(getattr(a, name), getattr(b, name)) and getattr(a, name).dtype == dtype
    assert a.mask[np.arange(150), a.action].all()  # the teacher's action is legal where it was taken
    assert (a.mask.sum(1) >= 2).all()  # forced moves are not labelled
    assert set(np.unique(a.outcome)) <= {-1.0, 0.0, 1.0} and (a.outcome == 1).any() and (a.outcome == -1).any()
    meta = {"teacher": "search:8", "positions": 150}
    save_positions(str(tmp_path / "p.npz"), a, meta)
    c = load_positions(str(tmp_path / "p.npz"), meta)
    assert np.array_equal(c.action, a.action) and c.obs.dtype == np.float32
    with pytest.raises(ValueError, match="labelled with"):
        load_positions(str(tmp_path / "p.npz"), {**meta, "teacher": "heuristic"})


def test_a_searching_teacher_labels_positions_with_the_seats_history():
    """With history=K a search's positions carry the dict observation a history=K table hands the seat to act:
    the same games and labels as without, and the seat's last K public events."""
    from uno_env import Engine
    from uno_env.table import history_observation

    rules = UnoRules()
    plain = labels("search:8", ["heuristic"], rules, 2, 120, seed=4, chunk=8)
    a = labels("search:8", ["heuristic"], rules, 2, 120, seed=4, chunk=8, history=16)
    assert isinstance(a.obs, dict) and set(a.obs) == {"observation", "history", "history_counts"}
    assert np.array_equal(a.obs["observation"], plain.obs) and np.array_equal(a.action, plain.action)
    assert a.obs["history"].shape[:2] == (120, 16) and a.obs["history"].dtype == np.float32
    # A round's first decision with a choice may come before any event; most come after several.
    events = (a.obs["history"] != 0).any(axis=2).sum(axis=1)
    assert (events > 0).mean() > 0.9 and (events == 16).any()
    # The rows are what the table's reader gives: one seat to act, its events in the engine's order.
    e = Engine(1, 2, rules, seed=0, history=16)
    seen = history_observation(e, e.observation, np.array([0]), 16)
    assert seen["history"].shape[1:] == a.obs["history"].shape[1:]
    assert seen["history_counts"].shape[1:] == a.obs["history_counts"].shape[1:]


def test_a_teacher_without_engine_access_labels_a_whole_batch_at_once():
    """A heuristic teacher sits in the learner's seat of a vector env (training.expert._label_batched): the
    positions are seeded, legal, real choices seen by the player to act, with each round's result; a mixed
    table names one opponent per other seat."""
    from uno_env.observation import OBS_IS_CURRENT

    rules = UnoRules()
    table = ["heuristic+rlcard_rule+greedy", "random"]
    a = labels("heuristic", table, rules, 4, 400, seed=5, chunk=8)
    b = labels("heuristic", table, rules, 4, 400, seed=5, chunk=8)
    assert len(a) == 400
    for name, dtype in POSITION_DTYPES.items():
        assert np.array_equal(getattr(a, name), getattr(b, name)) and getattr(a, name).dtype == dtype
    assert a.mask[np.arange(400), a.action].all() and (a.mask.sum(1) >= 2).all()
    assert (a.obs[:, OBS_IS_CURRENT] == 1).all()  # the teacher's own view, as the learner's
    assert set(np.unique(a.outcome)) <= {-1.0, 0.0, 1.0} and (a.outcome == 1).any() and (a.outcome == -1).any()
    c = labels("heuristic", table, rules, 4, 400, seed=6, chunk=8)
    assert not np.array_equal(a.action, c.action)
    with pytest.raises(ValueError, match="names 2 seats; a table of 4 players needs 3"):
        labels("heuristic", ["heuristic+greedy"], rules, 4, 10, seed=0)


def test_cloning_fits_the_teachers_actions():

    from uno_env.sb3_vec_env import UnoSB3VecEnv

    data = labels("heuristic", ["random"], UnoRules(), 2, 300, seed=0, chunk=16)
    venv = UnoSB3VecEnv(2, 2, seed=0)
    model = _tiny_model(venv, hidden=64, batch_size=16)
    # All positions held in training (holdout 0): the agreement is measured on what it was fitted to.
    stats = clone(model.policy, data, epochs=60, batch_size=64, learning_rate=3e-3, holdout=0.0, seed=0)
    assert stats["positions"] == 300 and np.isnan(stats["agreement_after"])
    from agents.ppo import PPOAgent

    chosen = PPOAgent(model.policy, deterministic=True).act(data.obs, data.mask, np.random.default_rng(0))
    assert (chosen == data.action).mean() > 0.9
    with pytest.raises(ValueError, match="epochs"):
        clone(model.policy, data, epochs=0)


def test_positions_with_a_history_hold_the_same_games_and_clone_a_history_policy(tmp_path):
    """history=K labels the same seeded games (the teacher reads the observation alone) and adds each
    position's history as the learner's env shows it; the dict saves, loads and clones a Dict policy;
    positions of another history length are refused."""

    from agents.ppo import PPOAgent
    from uno_env.sb3_vec_env import UnoSB3VecEnv
    from uno_env.spaces import history_spaces

    rules = UnoRules()
    plain = labels("heuristic", ["random", "greedy"], rules, 2, 300, seed=4, chunk=8)
    data = labels("heuristic", ["random", "greedy"], rules, 2, 300, seed=4, chunk=8, history=4)
    assert set(data.obs) == {"observation", "history", "history_counts"}
    assert np.array_equal(data.obs["observation"], plain.obs) and np.array_equal(data.action, plain.action)
    for key, space in history_spaces(4).items():
        assert data.obs[key].shape == (300, *space.shape) and data.obs[key].dtype == np.float32
    assert (data.obs["history"][:, 0] != 0).any(axis=1).mean() > 0.9  # past the deal, the newest row is an event
    meta = {"teacher": "heuristic", "history": 4}
    save_positions(str(tmp_path / "h.npz"), data, meta)
    back = load_positions(str(tmp_path / "h.npz"), meta)
    assert all(np.array_equal(back.obs[k], data.obs[k]) for k in data.obs)
    venv = UnoSB3VecEnv(2, 2, seed=0, history=4)
    model = _tiny_model(venv, hidden=64, batch_size=16)
    clone(model.policy, data, epochs=60, batch_size=64, learning_rate=3e-3, holdout=0.0, seed=0)
    chosen = PPOAgent(model.policy, deterministic=True).act(data.obs, data.mask, np.random.default_rng(0))
    assert (chosen == data.action).mean() > 0.9
    with pytest.raises(ValueError, match="another history length"):
        clone(model.policy, labels("heuristic", ["random"], rules, 2, 50, seed=0, history=2))


# --- train.py with both -------------------------------------------------------------------------


def test_train_with_league_and_warm_start_is_seeded_and_resumes_with_the_league(tmp_path):
    first = run_train(*TINY_LEAGUE, "--output-dir", str(tmp_path), "--exp-name", "a")
    run_train(*TINY_LEAGUE, "--output-dir", str(tmp_path), "--exp-name", "b")
    assert "warm start: 200 positions labelled by search:8" in first.stdout
    runs = [json.load(open(tmp_path / name / "final_eval.json")) for name in ("a", "b")]
    assert runs[0]["final_eval"] == runs[1]["final_eval"] and runs[0]["league"] == runs[1]["league"]
    assert runs[0]["warm_start"]["agreement_after"] == runs[1]["warm_start"]["agreement_after"]
    import torch

    state = torch.load(tmp_path / "a" / "checkpoints" / "step_2048.state.pt", weights_only=False)
    assert [name for name, _ in state["league"]["snapshots"]] == ["self@0", "self@1024", "self@2048"]
    resumed = run_train(
        *TINY_LEAGUE,
        "--total-timesteps",
        "3072",
        "--output-dir",
        str(tmp_path),
        "--exp-name",
        "a",
        "--resume",
        str(tmp_path / "a"),
    )
    assert "league: 5 members" in resumed.stdout and "warm start" not in resumed.stdout  # no second cloning
    assert json.load(open(tmp_path / "a" / "final_eval.json"))["steps"] == 3072


@pytest.mark.parametrize(
    "args, message",
    [
        (["--league-groups", "0"], "--league-groups must be >= 1"),
        (["--bc-positions", "10", "--bc-teacher", "nobody"], "unknown agent 'nobody'"),
        (["--opponent-mix", "league", "--league-opponents", "nobody"], "unknown agent 'nobody'"),
        (["--learning-rate", "2"], "--learning-rate must be in"),
        (["--backend", "rllib", "--bc-positions", "10"], "is for the sb3 and batched backends"),
    ],
)
def test_train_refuses_bad_league_and_warm_start_settings(tmp_path, args, message):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), *args, "--output-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and message in proc.stderr and not os.listdir(tmp_path)
