"""``UnoSB3VecEnv(threads=N)``: learner steps/s and CPU per step on N threads, and where one step's time goes.

    python -m benchmarks.env_threads --num-envs 4096 --threads 1 2

The opponents are training's groups (``training.opponents.opponent_groups`` of ``--mix``); the
learner plays uniformly random legal actions. Rows: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import tyro

import uno_env
from benchmarks._timing import fmt_rate, interleave, loadavg, summarize
from training.opponents import opponent_groups, parse_mix
from uno_env import UnoRules, sample_legal
from uno_env.checks import MAX_THREADS
from uno_env.sb3_vec_env import UnoSB3VecEnv


@dataclasses.dataclass
class Args:
    num_envs: int = 4096
    """games per vector env"""
    num_players: int = 2
    """players per game"""
    mix: str = "0.5*heuristic,0.5*rlcard_rule"
    """the opponents, as train.py's --opponent-mix"""
    threads: tuple[int, ...] = (1, 2)
    """the thread counts compared (one env each, timed interleaved)"""
    steps: int = 40
    """vector steps per timed run"""
    runs: int = 5
    """timed runs per row (the median is reported)"""
    breakdown: bool = True
    """also time the parts of a step (engine, opponents' decisions, the rest) per thread count"""
    engine: bool = True
    """also time Engine.step alone (random legal actions, autoreset) per thread count and with parallel=True"""


def parse_args() -> Args:
    """``Args`` from the command line (one option per field, its docstring as help)."""
    args = tyro.cli(Args, description=__doc__)
    if min(args.num_envs, args.steps, args.runs) < 1:
        raise SystemExit("--num-envs, --steps and --runs must be positive")
    if not args.threads or any(not 1 <= t <= MAX_THREADS for t in args.threads):
        raise SystemExit(f"--threads must list thread counts in 1..{MAX_THREADS}")
    return args


class EnvLoop:
    """A bench (``benchmarks/_timing.py``): ``chunk()`` is one learner step of random legal actions."""

    def __init__(self, args: Args, threads: int) -> None:
        rules = UnoRules()
        groups = opponent_groups(parse_mix(args.mix), args.num_envs, rules, num_players=args.num_players)
        self.env = UnoSB3VecEnv(
            args.num_envs,
            args.num_players,
            rules=rules,
            opponents=[(g.agent, g.games) for g in groups],
            threads=threads,
        )
        self.env.seed(0)
        self.env.reset()
        self.num_envs, self.rng = args.num_envs, np.random.default_rng(0)

    def chunk(self) -> int:
        self.env.step_async(sample_legal(self.env.action_masks(), self.rng))
        self.env.step_wait()
        return self.num_envs


class EngineLoop:
    """A bench: ``chunk()`` is one ``Engine.step`` of random legal actions on every game (autoreset)."""

    def __init__(self, args: Args, threads: int, parallel: bool = False) -> None:
        self.engine = uno_env.Engine(
            args.num_envs, args.num_players, seed=0, autoreset=True, threads=threads, parallel=parallel
        )
        self.num_envs, self.rng = args.num_envs, np.random.default_rng(0)
        self.actions = np.empty(args.num_envs, np.int64)

    def chunk(self) -> int:
        self.engine.step(sample_legal(self.engine.legal_mask, self.rng, out=self.actions))
        return self.num_envs


def _timed(spent: dict[str, float], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` that adds its wall time to ``spent[key]``."""

    def wrapper(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[key] += time.perf_counter() - t

    return wrapper


def breakdown(loop: EnvLoop, steps: int, runs: int) -> dict[str, float]:
    """Median wall ms per learner step of: the engine (steps and deals), the opponents' decisions, the rest of ``step_wait``."""
    driver = loop.env.venv.driver
    engine, table = driver.engine, driver.table
    spent = {"engine": 0.0, "opponents": 0.0}
    # Instance attributes shadow the methods the driver calls; deleted again below.
    engine.step = _timed(spent, "engine", engine.step)  # type: ignore[method-assign]
    engine.reset = _timed(spent, "engine", engine.reset)  # type: ignore[method-assign]
    table.ask = _timed(spent, "opponents", table.ask)  # type: ignore[method-assign]
    parts: dict[str, list[float]] = {"step_wait": [], "engine": [], "opponents": [], "rest": []}
    try:
        for _ in range(runs):
            spent["engine"] = spent["opponents"] = 0.0
            total = 0.0
            for _ in range(steps):
                actions = sample_legal(loop.env.action_masks(), loop.rng)
                t = time.perf_counter()
                loop.env.step_async(actions)
                loop.env.step_wait()
                total += time.perf_counter() - t
            ms = {"step_wait": total, "engine": spent["engine"], "opponents": spent["opponents"]}
            ms["rest"] = total - spent["engine"] - spent["opponents"]
            for k, v in ms.items():
                parts[k].append(v / steps * 1e3)
    finally:
        del engine.step, engine.reset, table.ask
    return {k: statistics.median(v) for k, v in parts.items()}


def main() -> None:
    args = parse_args()
    loops = {t: EnvLoop(args, t) for t in args.threads}
    for loop in loops.values():
        for _ in range(5):  # warm-up: numba cache load, first allocations, the pools' threads
            loop.chunk()
    load_before = loadavg()
    timed = interleave(list(loops.values()), args.runs, 0.0, min_steps=args.steps * args.num_envs)
    results = dict(zip(loops, map(summarize, timed), strict=True))
    parts = {t: breakdown(loop, args.steps, args.runs) for t, loop in loops.items()} if args.breakdown else {}
    engines: dict[str, Any] = {}
    if args.engine:
        engines = {f"threads={t}": EngineLoop(args, t) for t in args.threads}
        engines["parallel=True (numba's threads)"] = EngineLoop(args, 1, parallel=True)
        for loop in engines.values():
            loop.chunk()
        engine_runs = interleave(list(engines.values()), args.runs, 0.0, min_steps=args.steps * 10 * args.num_envs)
        engine_results = dict(zip(engines, map(summarize, engine_runs), strict=True))
    print(
        f"uno_env {uno_env.__version__}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}); UnoSB3VecEnv, {args.num_envs} games, "
        f"{args.num_players} players, opponents {args.mix!r}; {args.runs} runs x {args.steps} vector steps, "
        f"interleaved, median reported; load average {load_before} before, {loadavg()} after"
    )
    print()
    print(
        "| threads | learner steps/s (wall) | vs 1 thread (wall) | learner steps per CPU-second "
        "| CPU ms / vector step | runs (wall, k/s) |"
    )
    print("|---:|---:|---:|---:|---:|---|")
    base = results[args.threads[0]]["steps_per_s"]
    for t, r in results.items():
        w, c = r["steps_per_s"], r["cpu_steps_per_s"]
        runs_w = " ".join(f"{x / 1e3:.0f}" for x in r["runs_steps_per_s"])
        print(f"| {t} | {fmt_rate(w)} | {w / base:.2f}x | {fmt_rate(c)} | {args.num_envs / c * 1e3:.2f} | {runs_w} |")
    if parts:
        print()
        print(
            "| threads | step_wait, wall ms | engine (steps, deals) | opponents' decisions | rest (scans, views, "
            "copies, infos) |"
        )
        print("|---:|---:|---:|---:|---:|")
        for t, p in parts.items():
            print(f"| {t} | {p['step_wait']:.2f} | {p['engine']:.2f} | {p['opponents']:.2f} | {p['rest']:.2f} |")
    if engines:
        print()
        print(f"`Engine.step` alone, {args.steps * 10} steps per run (game steps per second):")
        print()
        print("| engine | game steps/s (wall) | game steps per CPU-second | runs (wall, M/s) |")
        print("|---|---:|---:|---|")
        for name, r in engine_results.items():
            runs_w = " ".join(f"{x / 1e6:.2f}" for x in r["runs_steps_per_s"])
            print(f"| {name} | {fmt_rate(r['steps_per_s'])} | {fmt_rate(r['cpu_steps_per_s'])} | {runs_w} |")


if __name__ == "__main__":
    main()
