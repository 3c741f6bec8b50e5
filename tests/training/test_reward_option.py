"""``train.py --reward``: the learner trains on score or rank, and its win rates still count wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from helpers import ROOT

from training.batched_ppo import rounds_won
from training.opponents import opponent_groups, parse_mix
from training.sb3 import WinsByKind
from uno_env import UnoRules, sample_legal
from uno_env.sb3_vec_env import UnoSB3VecEnv


def test_win_rates_count_wins_not_positive_rewards():
    """Under rank a second place is paid more than 0, yet only the learner's wins count as won rounds."""
    groups = opponent_groups(parse_mix("random"), 64, UnoRules(), num_players=4)
    venv = UnoSB3VecEnv(64, 4, UnoRules(hand_size=3), learner_seat="random", seed=0, reward="rank")
    wins = WinsByKind(groups)
    venv.reset()
    rng = np.random.default_rng(0)
    paid, counted = [], []
    for _ in range(40):
        venv.step_async(sample_legal(venv.action_masks(), rng))
        _, rewards, dones, infos = venv.step_wait()
        won = rounds_won(infos, dones)
        wins.record(won, dones)
        paid += rewards[dones].tolist()
        counted += won[dones].tolist()
    paid_arr, counted_arr = np.array(paid), np.array(counted)
    assert ((paid_arr == 1.0) == counted_arr).all()
    assert ((paid_arr > 0) & (paid_arr < 1)).any()  # second places: positive rewards, not wins
    assert list(wins.recent["random"]) == counted


def test_train_trains_on_the_score_reward_and_records_it(tmp_path):
    """A tiny run with --reward score: it trains, evaluates in win rate, and its model card names the reward."""
    args = [
        *("--total-timesteps", "2048", "--num-envs", "16", "--n-steps", "16", "--batch-size", "128"),
        *("--n-epochs", "1", "--hidden", "16", "--bc-positions", "0", "--eval-every", "0"),
        *("--final-eval-games", "0", "--checkpoint-every", "0", "--no-progress", "--reward", "score"),
    ]
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), *args, "--output-dir", str(tmp_path), "--exp-name", "score"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    card = json.loads((tmp_path / "score" / "model.json").read_text())
    assert card["train_args"]["reward"] == "score" and card["steps"] == 2048
