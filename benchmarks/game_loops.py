"""CPU time of the two loops where a batch of games meets its agents, as a markdown table.

    python -m benchmarks.game_loops [--driver-steps 8000] [--arena-games 120000]

| row | what it plays |
|---|---|
| ``training driver`` | ``UnoVectorEnv`` with 256 games, the learner seated at random and a ``HeuristicAgent`` opponent played in-batch; the learner picks a uniformly random legal action |
| ``arena`` | ``arena.play`` of ``HeuristicAgent`` against ``RLCardRuleAgent``, seats rotated |

It uses only the public API that both sides of the one-table change have (``arena.play``, or
``arena.play_match`` on a checkout from before ``play``), so the same file runs on a checkout
from before it (``PYTHONPATH=<checkout> python benchmarks/game_loops.py``)
to compare the loops across commits (docs/benchmarks.md, "The one table, before and after").
"""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np
import tyro

from agents import HeuristicAgent, RLCardRuleAgent
from uno_env import UnoVectorEnv, sample_legal


@dataclasses.dataclass
class Args:
    driver_steps: int = 8000
    """vector steps of the training driver (each a decision in each of its 256 games)"""
    arena_games: int = 120_000
    """games of the arena's match"""


def driver(steps: int) -> int:
    """Step the training driver ``steps`` times; returns the learner decisions made."""
    env = UnoVectorEnv(num_envs=256, num_players=2, learner_seat="random", opponents=[HeuristicAgent()])
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        _, _, _, _, info = env.step(sample_legal(info["action_mask"], rng))
    return steps * 256


def arena(games: int) -> int:
    """Play ``games`` games in the arena; returns them."""
    try:
        from arena import play
    except ImportError:  # a checkout from before arena.play: its play_match plays the same games
        from arena import play_match as play
    play([HeuristicAgent(), RLCardRuleAgent()], num_games=games, seed=0)
    return games


def main() -> None:
    args = tyro.cli(Args)
    driver(10), arena(100)  # compile and load the kernels before timing
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)\n")
    print("| loop | work | CPU s | per CPU-second |")
    print("|---|---:|---:|---:|")
    for name, run, n, unit in [
        ("training driver", driver, args.driver_steps, "learner decisions"),
        ("arena", arena, args.arena_games, "games"),
    ]:
        c0 = time.process_time()
        work = run(n)
        cpu = time.process_time() - c0
        print(f"| {name} | {work:,} {unit} | {cpu:.2f} | {work / cpu:,.0f} |")


if __name__ == "__main__":
    main()
