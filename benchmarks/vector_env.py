"""Learner steps per second of the batched Gymnasium env ``UnoVectorEnv`` and its SB3 adapter (a markdown table).

    python -m benchmarks.vector_env --num-envs 1024 --num-players 2

Rows: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import os
import platform
from collections.abc import Callable

import numpy as np
import tyro

import uno_env
from benchmarks._timing import interleave, loadavg, print_profile, summarize
from uno_env import RandomAgent, sample_legal
from uno_env.gym_env import UnoVectorEnv

TARGET = 500_000  # learner steps/s with 1024 games and RandomAgent opponents


@dataclasses.dataclass
class Args:
    num_envs: int = 1024
    """games per vector env"""
    num_players: int = 2
    """players per game"""
    steps: int = 200
    """vector steps per timed run"""
    runs: int = 5
    """timed runs per row (the median is reported)"""
    sb3: bool = True
    """also time the stable-baselines3 adapter rows (--no-sb3 to skip)"""
    profile: bool = False
    """cProfile one run of UnoVectorEnv and print its top entries"""


def parse_args() -> Args:
    """``Args`` from the command line (one option per field, its docstring as help)."""
    args = tyro.cli(Args, description=__doc__)
    if min(args.num_envs, args.steps, args.runs) < 1:
        raise SystemExit("--num-envs, --steps and --runs must be positive")
    return args


class _Loop:
    """A bench (``benchmarks/_timing.py``): ``chunk()`` is one vector step of random legal learner actions."""

    num_envs: int
    rng: np.random.Generator

    def chunk(self) -> int:
        self.step(sample_legal(self.masks(), self.rng))
        return self.num_envs

    def masks(self) -> np.ndarray:
        raise NotImplementedError

    def step(self, actions: np.ndarray) -> None:
        raise NotImplementedError


class EngineLoop(_Loop):
    """The env's game flow on a bare ``Engine``: no checks, infos, copies or final observations."""

    def __init__(self, num_envs: int, num_players: int) -> None:
        self.engine = uno_env.Engine(num_envs, num_players, autoreset=True, seed=0)
        self.opponent = RandomAgent()
        self.num_envs, self.rng = num_envs, np.random.default_rng(0)
        self._opponents()

    def masks(self) -> np.ndarray:
        return self.engine.legal_mask

    def step(self, actions: np.ndarray) -> None:
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


class VectorLoop(_Loop):
    """``UnoVectorEnv`` as a training loop drives it."""

    def __init__(self, num_envs: int, num_players: int, copy: bool) -> None:
        self.env = UnoVectorEnv(num_envs, num_players, copy=copy, autoreset_mode="same_step")  # as training drives it
        self.num_envs, self.rng = num_envs, np.random.default_rng(0)
        self.env.reset(seed=0)

    def masks(self) -> np.ndarray:
        return self.env.action_masks()

    def step(self, actions: np.ndarray) -> None:
        self.env.step(actions)


class SB3Loop(_Loop):
    """``UnoSB3VecEnv`` as MaskablePPO drives it (``stack``: masks through ``env_method``)."""

    def __init__(self, num_envs: int, num_players: int, stack: bool) -> None:
        from uno_env.sb3_vec_env import UnoSB3VecEnv  # the train extra; not needed with --no-sb3

        self.env = UnoSB3VecEnv(num_envs, num_players)
        self.num_envs, self.rng, self.stack = num_envs, np.random.default_rng(0), stack
        self.env.seed(0)
        self.env.reset()

    def masks(self) -> np.ndarray:
        if self.stack:
            return np.stack(self.env.env_method("action_masks"))  # sb3-contrib's get_action_masks
        return self.env.action_masks()

    def step(self, actions: np.ndarray) -> None:
        self.env.step(actions)


def main() -> None:
    args = parse_args()
    rows: list[tuple[str, Callable[[], object]]] = [
        ("engine loop (floor)", lambda: EngineLoop(args.num_envs, args.num_players)),
        ("UnoVectorEnv", lambda: VectorLoop(args.num_envs, args.num_players, copy=True)),
        ("UnoVectorEnv copy=False", lambda: VectorLoop(args.num_envs, args.num_players, copy=False)),
    ]
    if args.sb3:
        rows += [
            (
                "UnoSB3VecEnv, masks as MaskablePPO gets them",
                lambda: SB3Loop(args.num_envs, args.num_players, stack=True),
            ),
            ("UnoSB3VecEnv, masks from action_masks()", lambda: SB3Loop(args.num_envs, args.num_players, stack=False)),
        ]
    loops = {name: make() for name, make in rows}
    for loop in loops.values():
        for _ in range(10):  # warm-up: numba cache load, first allocations
            loop.chunk()

    load_before = loadavg()
    # interleaved: a busy spell hits every row alike
    timed = interleave(list(loops.values()), args.runs, 0.0, min_steps=args.steps * args.num_envs)
    results = dict(zip(loops, map(summarize, timed), strict=True))
    print(
        f"uno_env {uno_env.__version__}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs; {args.num_envs} games, {args.num_players} players, RandomAgent opponents; "
        f"{args.runs} runs x {args.steps} vector steps, median reported; load average "
        f"{load_before} before, {loadavg()} after"
    )
    print()
    print(
        "| loop | learner steps/s (wall) | learner steps/s (CPU time) | µs CPU / vector step | of floor (CPU) "
        "| runs (wall, k/s) | runs (CPU, k/s) | >= 500k (wall / CPU) |"
    )
    print("|---|---:|---:|---:|---:|---|---|---|")
    floor = results["engine loop (floor)"]["cpu_steps_per_s"]
    for name, r in results.items():
        w, c = r["steps_per_s"], r["cpu_steps_per_s"]
        met = (
            "" if name.startswith("engine") else f"{'yes' if w >= TARGET else 'no'} / {'yes' if c >= TARGET else 'no'}"
        )
        runs_w = " ".join(f"{x / 1e3:.0f}" for x in r["runs_steps_per_s"])
        runs_c = " ".join(f"{x / 1e3:.0f}" for x in r["runs_cpu_steps_per_s"])
        print(
            f"| {name} | {w:,.0f} | {c:,.0f} | {args.num_envs / c * 1e6:,.0f} | {c / floor:.0%} | {runs_w} | "
            f"{runs_c} | {met} |"
        )

    if args.profile:
        loop = loops["UnoVectorEnv"]
        print_profile(
            lambda: [loop.chunk() for _ in range(args.steps)],
            f"UnoVectorEnv, {args.num_envs} games, {args.steps} vector steps",
        )


if __name__ == "__main__":
    main()
