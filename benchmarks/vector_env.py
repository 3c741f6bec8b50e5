"""Learner steps per second of the batched Gymnasium env ``UnoVectorEnv`` (a script that prints a table).

The loop is a training loop without the network: one uniformly random legal action per game
for the learner (``agents.sample_legal`` on ``action_masks()``), then ``step``; the opponents
are ``RandomAgent``s, run inside the env on the whole batch at once. A *learner step* is one
decision of the learner in one game, so a ``step`` of ``N`` games counts ``N``. Each figure is
the median of ``--runs`` timed runs of ``--steps`` vector steps; the rows are timed in turn
within each run (interleaved), so a busy machine slows them alike.

| row | what it measures |
|---|---|
| ``engine loop (floor)`` | the same game flow written directly on ``Engine`` (learner step, then opponent steps until every game waits for the learner): the most any env layer over this engine can reach |
| ``UnoVectorEnv`` | ``uno_env.UnoVectorEnv`` (``copy=True``, the default: fresh arrays each step) |
| ``UnoVectorEnv copy=False`` | the same, returning views of the engine's buffers |
| ``UnoSB3VecEnv`` | the stable-baselines3 adapter: ``step`` plus ``env_method("action_masks")`` and ``np.stack``, as MaskablePPO calls them |

Usage: ``python benchmarks/vector_env.py [--num-envs 1024] [--players 2] [--steps 200] [--runs 5] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import statistics
import time
from typing import Callable

import numpy as np

import uno_env
from agents.base import RandomAgent, sample_legal
from uno_env.gym_env import UnoVectorEnv

TARGET = 500_000  # learner steps/s with 1024 games and RandomAgent opponents (the brief)


class EngineLoop:
    """The env's game flow on a bare ``Engine``: no checks, infos, copies or final observations."""

    def __init__(self, num_envs: int, num_players: int) -> None:
        self.engine = uno_env.Engine(num_envs, num_players, autoreset=True, seed=0)
        self.opponent = RandomAgent()
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        """Deal every game and play the opponents up to seat 0's turn."""
        self.engine.reset(seed)
        self._opponents()

    def masks(self) -> np.ndarray:
        """Seat 0's legal actions (a view)."""
        return self.engine.legal_mask

    def step(self, actions: np.ndarray) -> None:
        """Seat 0 acts everywhere, then the opponents until seat 0 is to act everywhere."""
        self.engine.step(actions)
        self._opponents()

    def _opponents(self) -> None:
        e = self.engine
        while True:
            need = e.current_player != 0
            if not need.any():
                return
            idx = np.flatnonzero(need)
            actions = np.full(e.num_envs, -1, np.int64)
            actions[idx] = self.opponent.act(e.observation[idx], e.legal_mask[idx], self.rng)
            e.step(actions)


class VectorLoop:
    """``UnoVectorEnv`` as a training loop drives it."""

    def __init__(self, num_envs: int, num_players: int, copy: bool) -> None:
        self.env = UnoVectorEnv(num_envs, num_players, copy=copy)

    def reset(self, seed: int) -> None:
        """``reset(seed)``."""
        self.env.reset(seed=seed)

    def masks(self) -> np.ndarray:
        """``action_masks()``."""
        return self.env.action_masks()

    def step(self, actions: np.ndarray) -> None:
        """``step(actions)``."""
        self.env.step(actions)


class SB3Loop:
    """``UnoSB3VecEnv`` as MaskablePPO drives it (masks through ``env_method``)."""

    def __init__(self, num_envs: int, num_players: int) -> None:
        from uno_env.sb3_vec_env import UnoSB3VecEnv

        self.env = UnoSB3VecEnv(num_envs, num_players)

    def reset(self, seed: int) -> None:
        """``seed(seed)`` then ``reset()``."""
        self.env.seed(seed)
        self.env.reset()

    def masks(self) -> np.ndarray:
        """sb3-contrib's ``get_action_masks``: ``np.stack(env_method("action_masks"))``."""
        return np.stack(self.env.env_method("action_masks"))

    def step(self, actions: np.ndarray) -> None:
        """``step(actions)`` (``step_async`` + ``step_wait``)."""
        self.env.step(actions)


def run(loop, steps: int, seed: int) -> tuple[float, float]:
    """``steps`` vector steps of random legal learner actions; (wall, CPU) seconds."""
    rng = np.random.default_rng(seed)
    loop.reset(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        loop.step(sample_legal(loop.masks(), rng))
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=1024, help="games per vector env")
    parser.add_argument("--players", type=int, default=2, help="players per game")
    parser.add_argument("--steps", type=int, default=200, help="vector steps per timed run")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per row (median reported)")
    parser.add_argument("--no-sb3", action="store_true", help="skip the stable-baselines3 row")
    parser.add_argument("--profile", action="store_true", help="cProfile one run of UnoVectorEnv and print the top entries")
    args = parser.parse_args()
    if min(args.num_envs, args.steps, args.runs) < 1:
        parser.error("--num-envs, --steps and --runs must be positive")

    rows: list[tuple[str, Callable[[], object]]] = [
        ("engine loop (floor)", lambda: EngineLoop(args.num_envs, args.players)),
        ("UnoVectorEnv", lambda: VectorLoop(args.num_envs, args.players, copy=True)),
        ("UnoVectorEnv copy=False", lambda: VectorLoop(args.num_envs, args.players, copy=False)),
    ]
    if not args.no_sb3:
        rows.append(("UnoSB3VecEnv", lambda: SB3Loop(args.num_envs, args.players)))
    loops = {name: make() for name, make in rows}
    for loop in loops.values():
        run(loop, 10, seed=12345)  # warm-up: numba cache load, first allocations

    wall: dict[str, list[float]] = {name: [] for name in loops}
    cpu: dict[str, list[float]] = {name: [] for name in loops}
    learner_steps = args.steps * args.num_envs
    for r in range(args.runs):
        for name, loop in loops.items():  # interleaved: a busy spell hits every row alike
            w, c = run(loop, args.steps, seed=r)
            wall[name].append(learner_steps / w)
            cpu[name].append(learner_steps / c)

    print(f"uno_env {uno_env.__version__}, Python {platform.python_version()}, numpy {np.__version__}; "
          f"{args.num_envs} games, {args.players} players, RandomAgent opponents; "
          f"{args.runs} runs x {args.steps} vector steps, median reported")
    print()
    # CPU-time rates are shown too: on a shared machine they move less than wall-clock ones.
    print("| loop | learner steps/s (wall, median) | µs / vector step | learner steps/s (CPU time, median) "
          "| of floor (CPU) | runs (wall, k/s) | target >= 500k |")
    print("|---|---:|---:|---:|---:|---|---|")
    floor = statistics.median(cpu["engine loop (floor)"])
    for name in loops:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        met = "" if name.startswith("engine") else ("yes" if w >= TARGET else "**no**")
        runs_text = " ".join(f"{x / 1e3:.0f}" for x in wall[name])
        print(f"| {name} | {w:,.0f} | {args.num_envs / w * 1e6:,.0f} | {c:,.0f} | {c / floor:.0%} | {runs_text} | {met} |")

    if args.profile:
        loop = loops["UnoVectorEnv"]
        prof = cProfile.Profile()
        prof.enable()
        run(loop, args.steps, seed=0)
        prof.disable()
        print(f"\n## cProfile: UnoVectorEnv, {args.num_envs} games, {args.steps} vector steps")
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
