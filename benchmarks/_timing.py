"""Interleaved timing shared by the benchmark scripts: medians of runs, wall clock and CPU time.

A *bench* is any object with ``chunk() -> int`` (do a little work, return the steps done); every
bench is timed once per run, in a rotating order.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


@dataclasses.dataclass
class Measurement:
    """One timed run: steps done, wall seconds, CPU seconds of this process."""

    steps: int
    seconds: float
    cpu_seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.steps / self.seconds

    @property
    def cpu_rate(self) -> float:
        return self.steps / max(self.cpu_seconds, 1e-9)


def timed_loop(chunk: Callable[[], int], seconds: float, min_steps: int = 0) -> Measurement:
    """Call ``chunk`` until both the time and the step budget are met."""
    gc.collect()
    steps = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while True:
        steps += chunk()
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds and steps >= min_steps:
            return Measurement(steps, elapsed, time.process_time() - c0)


def interleave(
    benches: Sequence[Any], runs: int, seconds: float, min_steps: int = 0, log: Callable[[str], None] | None = None
) -> list[list[Measurement]]:
    """Time every bench once per run (rotating start); one list of measurements per bench."""
    results: list[list[Measurement]] = [[] for _ in benches]
    order = list(range(len(benches)))
    for run in range(runs):
        k = run % max(1, len(order))
        for i in order[k:] + order[:k]:
            results[i].append(timed_loop(benches[i].chunk, seconds, min_steps))
        if log:
            log(f"    run {run + 1}/{runs} done")
    return results


def summarize(ms: Sequence[Measurement]) -> dict[str, Any]:
    """Median, min and max of the wall-clock rates, median CPU-time rate, and every run."""
    rates = [m.rate for m in ms]
    cpu = [m.cpu_rate for m in ms]
    return {
        "steps_per_s": statistics.median(rates),
        "min_steps_per_s": min(rates),
        "max_steps_per_s": max(rates),
        "cpu_steps_per_s": statistics.median(cpu),
        "runs_steps_per_s": rates,
        "runs_cpu_steps_per_s": cpu,
        "runs_steps": [m.steps for m in ms],
    }


def add_ratio(row: dict[str, Any], base: dict[str, Any], target: float | None = None) -> None:
    """Ratio of medians (wall and CPU) and of paired runs against ``base``; target verdict if given."""
    row["ratio"] = row["steps_per_s"] / base["steps_per_s"]
    row["cpu_ratio"] = row["cpu_steps_per_s"] / base["cpu_steps_per_s"]
    paired = [a / b for a, b in zip(row["runs_steps_per_s"], base["runs_steps_per_s"], strict=True)]
    row["paired_ratios"] = paired
    row["median_paired_ratio"] = statistics.median(paired) if paired else None
    if target is not None:
        row["target"] = target
        row["target_met"] = row["ratio"] >= target
        row["cpu_target_met"] = row["cpu_ratio"] >= target


def ratio_cells(row: dict[str, Any]) -> str:
    """`` | ratio | CPU ratio | target verdict`` of an ``add_ratio`` row, as Markdown cells (empty without one)."""
    if "ratio" not in row:
        return " | | | "
    target = ""
    if row.get("target") is not None:
        yes = {True: "yes", False: "**no**"}
        target = f">= {row['target']:g}x: {yes[row['target_met']]} / {yes[row['cpu_target_met']]}"
    return f" | {row['ratio']:.2f}x | {row['cpu_ratio']:.2f}x | {target}"


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def fmt_rate(x: float) -> str:
    """1.23M / 45.6k / 789 steps per second."""
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def profile_text(fn: Callable[[], Any], top: int = 15) -> str:
    """cProfile one call of ``fn``; its ``top`` entries by own time, as text."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def print_profile(fn: Callable[[], Any], title: str, top: int = 15) -> None:
    """``profile_text`` of ``fn`` printed under a heading."""
    print(f"\n## cProfile: {title}\n{profile_text(fn, top)}")


def write_report(results_dir: str | Path, name: str, lines: Sequence[str], report: dict[str, Any]) -> None:
    """``<name>.md`` (the printed lines) and ``<name>.json`` (the figures) in ``results_dir``, created if need be."""
    out = Path(results_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text("\n".join(lines).rstrip("\n") + "\n")
    (out / f"{name}.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
