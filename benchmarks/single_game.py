#!/usr/bin/env python
"""One game at a time: the engine at batch 1 and the AEC loops beside RLCard, and the floor of one Python -> numba call.

    python -m benchmarks.single_game --runs 5 --seconds 1.0 --json out.json
    python -m benchmarks.single_game --quick     # a smoke run, numbers not meaningful

Rows, targets and the call table: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tyro

from benchmarks._timing import add_ratio, fmt_rate, interleave, loadavg, ratio_cells, summarize
from benchmarks.engine_speed import OursBench, RLCardBench, machine_info, machine_lines
from benchmarks.env_loop import AECBench, RLCardEnvBench

TARGETS = {"uno_env 1": 5.0, "uno_env 4096": 40.0, "raw_env": 3.0, "env()": 2.5}


@dataclasses.dataclass
class Args:
    """Options of ``benchmarks/single_game.py``."""

    runs: int = 5
    """interleaved runs per row (median reported)"""
    seconds: float = 1.0
    """length of each timed run"""
    calls: int = 200_000
    """calls per timing of the call table (best of 5 reported)"""
    seed: int = 0
    """seed of the games"""
    quick: bool = False
    """smoke run: 1 run of 0.05 s, 2,000 calls (numbers not meaningful)"""
    json: str | None = None
    """also write the results as JSON to this path"""


# --- the call table -------------------------------------------------------------------------


def _best_us(fn: Callable[[], Any], calls: int, repeats: int = 5) -> float:
    """Best of ``repeats`` timings of ``calls`` calls of ``fn``, in µs per call."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - t0)
    return 1e6 * best / calls


def call_rows(calls: int, seed: int) -> list[dict[str, Any]]:
    """µs per call of the floor (empty njit functions) and of the step's pieces, batch 1."""
    from numba import njit

    import uno_env
    from uno_env.engine import batch
    from uno_env.engine.engine import Engine
    from uno_env.policy import pick_legal

    @njit
    def empty_step_batch(buf, actions, validate):
        return 0

    @njit
    def empty_step_one(buf, action):
        return 0

    @njit
    def empty_19(a, b, c, d, e, f, g, h, i, j, k, m, n, o, p, q, r, s, t):
        return 0

    engine = Engine(1, 2, seed=seed)
    buf = engine.buf
    arrays = engine.arrays
    nothing = np.full(1, -1, np.int64)  # -1 leaves the game as it is: the call without the rules
    old_args = (
        *engine.state_arrays,
        arrays["cfg"],
        arrays["points"],
        arrays["deck"],
        nothing,
        engine.observation,
        engine.legal_mask,
        engine.current_player,
        engine.terminated,
        engine.truncated,
        engine.rewards,
        engine.final_observation,
    )  # the 18 arrays the step took before the engine kept one buffer, and its flag
    env = uno_env.raw_env(2)
    env.reset(seed=seed)
    u = np.random.default_rng(seed).random((1, 1))
    out = np.zeros(1, np.int64)
    bad = np.int64(10**6)  # out of range: step_one validates it and returns at once
    rows = [
        (
            "empty njit function, 2 arrays + a bool (the floor of Engine.step's call)",
            lambda: empty_step_batch(buf, nothing, True),
        ),
        ("empty njit function, 1 array + an int (the floor of the AEC step's call)", lambda: empty_step_one(buf, 7)),
        ("empty njit function, 18 arrays + a bool (the old engine call's floor)", lambda: empty_19(*old_args, True)),
        (
            "batch.step_batch(buf, [-1], True): the driver, no game stepped",
            lambda: batch.step_batch(buf, nothing, True),
        ),
        ("batch.step_one(buf, 10**6): the AEC driver, refused at once", lambda: batch.step_one(buf, bad)),
        ("Engine.step([-1]): wrapper + driver, no game stepped", lambda: engine.step(nothing)),
        ("pick_legal(mask, u[0], out): the benchmark's random pick", lambda: pick_legal(engine.legal_mask, u[0], out)),
        ("raw_env.last(): the acting agent's observation dict (two copies) and flags", lambda: env.last()),
    ]
    for _label, fn in rows:
        fn()  # compile the empty functions
    return [{"call": label, "us_per_call": _best_us(fn, calls)} for label, fn in rows]


# --- throughput ------------------------------------------------------------------------------


def throughput(args: Args, log: Callable[[str], None]) -> list[dict[str, Any]]:
    import uno_env

    chunk = 200 if args.quick else 1000
    benches: list[Any] = [
        RLCardBench(2, args.seed + 2),
        OursBench(1, 2, args.seed + 2001),
        OursBench(4096, 2, args.seed + 6096),
        RLCardEnvBench(args.seed, chunk),
        AECBench(uno_env.raw_env(num_players=2), args.seed, chunk, True, "raw_env"),
        AECBench(uno_env.env(num_players=2), args.seed, chunk, True, "env()"),
    ]
    for b in benches[3:]:
        b.chunk()  # warm-up (the engine benches warm up on construction)
    measured = interleave(benches, args.runs, args.seconds, log=log)
    rows = []
    for bench, ms in zip(benches, measured, strict=True):
        rows.append({"impl": bench.impl, "players": bench.players, "batch": bench.batch, **summarize(ms)})
    core, env = rows[0], rows[3]
    for r in rows[1:3]:
        add_ratio(r, core, TARGETS[f"uno_env {r['batch']}"])
    for r in rows[4:]:
        add_ratio(r, env, TARGETS[r["impl"]])
    return rows


def render(report: dict[str, Any]) -> str:
    lines = [
        "## One game at a time: uno_env vs RLCard",
        "",
        *machine_lines(report["machine"], report["load_average_at_end"]),
        f"- {report['args']['runs']} interleaved runs of {report['args']['seconds']:g} s per row, medians; one thread; "
        "2 players; ratios of the wall-clock (and CPU-time) medians, peer in the same runs"
        + ("; QUICK MODE: numbers not meaningful" if report["args"]["quick"] else ""),
        "",
        "| impl | batch | steps/s (median) | µs / call | runs | CPU steps/s | x peer | x peer (CPU) | target met (wall / CPU) |",
        "|---|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for r in report["throughput"]:
        runs = " ".join(fmt_rate(x) for x in r["runs_steps_per_s"])
        lines.append(
            f"| {r['impl']} | {r['batch']} | {fmt_rate(r['steps_per_s'])} | "
            f"{1e6 * r['batch'] / r['steps_per_s']:.2f} | {runs} | {fmt_rate(r['cpu_steps_per_s'])}"
            + ratio_cells(r)
            + " |"
        )
    lines += [
        "",
        "Steps of the AEC rows are decisions (the None steps of finished agents run but are not counted).",
        "",
        "### Where a batch-1 call goes (µs per call, best of 5)",
        "",
        "| call | µs |",
        "|---|---:|",
    ]
    lines += [f"| {c['call']} | {c['us_per_call']:.3f} |" for c in report["calls"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(Args, args=argv, description=__doc__)
    if args.quick:
        args = dataclasses.replace(args, runs=1, seconds=0.05, calls=2_000)
    if args.runs < 1 or args.seconds <= 0 or args.calls < 1:
        raise SystemExit("--runs, --seconds and --calls must be positive")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    machine = machine_info()
    log("throughput ...")
    rows = throughput(args, log)
    log("calls ...")
    calls = call_rows(args.calls, args.seed)
    report = {
        "machine": machine,
        "args": dataclasses.asdict(args),
        "throughput": rows,
        "calls": calls,
        "load_average_at_end": loadavg(),
    }
    md = render(report)
    print(md, end="", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({**report, "markdown": md}, indent=2) + "\n")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
