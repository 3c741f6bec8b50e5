#!/usr/bin/env python
"""RLCard's own loop on ``uno-env`` (``uno_env.rlcard_env``) vs on ``rlcard.make("uno")``: a Markdown table."""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import rlcard
import torch
from rlcard.agents import DQNAgent
from rlcard.utils import reorganize

import uno_env.rlcard_env  # noqa: F401 (registers uno-env)

# label -> (RLCard env id, game_rules)
ENVS = {"uno": ("uno", None), "uno-env": ("uno-env", None), "uno-env rlcard": ("uno-env", "rlcard")}


def make(label: str, seed: int):
    env_id, rules = ENVS[label]
    config: dict = {"seed": seed}
    if rules is not None:
        config["game_rules"] = rules
    return rlcard.make(env_id, config=config)


class RandomLegal:
    """RLCard's agent protocol with its own generator (the same agent for both envs)."""

    use_raw = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def step(self, state):
        return int(self.rng.choice(list(state["legal_actions"])))

    def eval_step(self, state):
        return self.step(state), {}


def count_decisions(trajectories) -> int:
    """Actions taken in one ``env.run`` (a trajectory alternates state, action, ..., state)."""
    return sum((len(t) - 1) // 2 for t in trajectories)


def time_random(label: str, games: int, seed: int) -> tuple[float, int, int]:
    env = make(label, seed)
    env.set_agents([RandomLegal(seed), RandomLegal(seed + 1)])
    env.run()  # warm-up (numba kernels for uno-env)
    t0, decisions = time.process_time(), 0
    for _ in range(games):
        trajectories, _ = env.run(is_training=False)
        decisions += count_decisions(trajectories)
    return time.process_time() - t0, games, decisions


def time_dqn(label: str, episodes: int, seed: int) -> tuple[float, int, int]:
    torch.manual_seed(seed)
    env = make(label, seed)
    agent = DQNAgent(
        num_actions=env.num_actions,
        state_shape=env.state_shape[0],
        mlp_layers=[64, 64],
        replay_memory_init_size=100,
        train_every=1,
        device=torch.device("cpu"),
    )
    env.set_agents([agent, RandomLegal(seed)])
    env.run()
    t0, decisions = time.process_time(), 0
    for _ in range(episodes):
        trajectories, payoffs = env.run(is_training=True)
        decisions += count_decisions(trajectories)
        for ts in reorganize(trajectories, payoffs)[0]:
            agent.feed(ts)
    return time.process_time() - t0, episodes, decisions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--dqn-episodes", type=int, default=40)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    if args.quick:
        args.runs, args.games, args.dqn_episodes = 1, 5, 2
    if min(args.runs, args.games, args.dqn_episodes) < 1:
        p.error("--runs, --games and --dqn-episodes must be at least 1")
    torch.set_num_threads(1)
    rows = {("run (random)", e): [] for e in ENVS} | {("DQN train", e): [] for e in ENVS}
    labels = list(ENVS)
    for r in range(args.runs):
        order = labels[r % len(labels) :] + labels[: r % len(labels)]
        for label in order:
            rows[("run (random)", label)].append(time_random(label, args.games, seed=r))
        for label in order:
            rows[("DQN train", label)].append(time_dqn(label, args.dqn_episodes, seed=r))
    print(f"RLCard {rlcard.__version__}, 2 players, {args.runs} runs, CPU time (medians)\n")
    print("| loop | env | games/s | decisions/game | µs/decision | uno-env speed-up per decision |")
    print("|---|---|---:|---:|---:|---:|")
    for loop in ("run (random)", "DQN train"):
        per_decision = {}
        for label in ENVS:
            samples = rows[(loop, label)]
            per_decision[label] = statistics.median(cpu / d * 1e6 for cpu, _, d in samples)
            games_s = statistics.median(g / cpu for cpu, g, _ in samples)
            length = statistics.median(d / g for _, g, d in samples)
            speed = "" if label == "uno" else f"{per_decision['uno'] / per_decision[label]:.2f}x"
            name = f"`{ENVS[label][0]}`" + (f", rules `{ENVS[label][1]}`" if ENVS[label][1] else "")
            print(f"| {loop} | {name} | {games_s:.1f} | {length:.0f} | {per_decision[label]:.1f} | {speed} |")


if __name__ == "__main__":
    main()
