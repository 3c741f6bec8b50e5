"""UNO in OpenSpiel: NFSP on ``python_uno`` and CFR+ on ``python_mini_uno`` (docs/openspiel.md).

    pip install -e ".[openspiel]"   # open_spiel from the package index
    python examples/openspiel_uno.py --nfsp-episodes 200 --cfr-iterations 50

Importing ``uno_env.openspiel_game`` registers both games. NFSP (OpenSpiel's PyTorch
implementation) plays the full game through OpenSpiel's ``rl_environment`` and is then measured
against a uniformly random player; CFR+ (OpenSpiel's) solves the mini game and
``exploitability.nash_conv`` says how far its average policy is from a Nash equilibrium.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pyspiel
import tyro
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import cfr, exploitability
from open_spiel.python.pytorch import nfsp

import uno_env.openspiel_game  # noqa: F401  (registers python_uno and python_mini_uno)


@dataclasses.dataclass
class Args:
    nfsp_episodes: int = 200
    """NFSP training episodes on python_uno (2 players)."""
    eval_games: int = 20
    """Games of the NFSP average policy against a random player, seats rotated."""
    cfr_iterations: int = 50
    """CFR+ iterations on python_mini_uno."""
    max_turns: int = 300
    """python_uno's turn limit (R8), to keep untrained play short."""
    seed: int = 0


def main(args: Args) -> None:
    for name in ("nfsp_episodes", "eval_games", "cfr_iterations", "max_turns"):
        if getattr(args, name) < 1:
            sys.exit(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")

    # --- NFSP on the full game --------------------------------------------------------------
    # The R11 observation, not the information state tensor: untrained rounds outgrow its history.
    env = rl_environment.Environment(
        "python_uno",
        observation_type=rl_environment.ObservationType.OBSERVATION,
        max_turns=args.max_turns,
        seed=args.seed,
    )
    size = env.observation_spec()["info_state"][0]
    num_actions = env.action_spec()["num_actions"]
    agents = [
        nfsp.NFSP(
            p,
            size,
            num_actions,
            [64],
            reservoir_buffer_capacity=10_000,
            anticipatory_param=0.1,
            min_buffer_size_to_learn=64,
            batch_size=32,
            learn_every=16,
            replay_buffer_capacity=10_000,
            epsilon_decay_duration=args.nfsp_episodes * 50,
            seed=args.seed + p,
        )
        for p in range(2)
    ]
    for _ in range(args.nfsp_episodes):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            step = env.step([agents[player].step(step).action])
        for agent in agents:
            agent.step(step)
    print(f"NFSP: trained {args.nfsp_episodes} episodes on python_uno")

    rng = np.random.default_rng(args.seed)
    wins = 0
    for game in range(args.eval_games):
        seat = game % 2
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            if player == seat:
                with agents[seat].temp_mode_as(nfsp.MODE.AVERAGE_POLICY):
                    action = agents[seat].step(step, is_evaluation=True).action
            else:
                action = int(rng.choice(step.observations["legal_actions"][player]))
            step = env.step([action])
        wins += step.rewards[seat] > 0
    print(f"NFSP average policy vs random: won {wins} of {args.eval_games} games (seats rotated)")

    # --- CFR+ on the mini game --------------------------------------------------------------
    mini = pyspiel.load_game("python_mini_uno")
    solver = cfr.CFRPlusSolver(mini)
    for _ in range(args.cfr_iterations):
        solver.evaluate_and_update_policy()
    nash = exploitability.nash_conv(mini, solver.average_policy())
    print(f"CFR+: NashConv {nash:.4f} after {args.cfr_iterations} iterations on python_mini_uno")


if __name__ == "__main__":
    main(tyro.cli(Args))
