#!/usr/bin/env python
"""Benchmark the uno_env Engine against RLCard's UNO game object, and time numba start-up.

    python -m benchmarks.engine_speed                  # full run (minutes)
    python -m benchmarks.engine_speed --quick          # CI smoke: a few hundred steps each, no cold compile
    python -m benchmarks.engine_speed --json out.json --runs 7 --seconds 2

Rows and method: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tyro

from agents.model_card import cpu_model
from benchmarks._timing import Measurement, fmt_rate, interleave
from benchmarks._timing import loadavg as _loadavg
from uno_env.policy import pick_legal

REPO = Path(__file__).resolve().parents[1]

TARGETS_RATIO = {1: 1.5, 4096: 18.0}  # batch size -> minimum ours / RLCard
TARGET_COLD_S = 30.0
# Distributions whose versions every report lists.
VERSIONS = (
    "numpy",
    "numba",
    "rlcard",
    "uno_env",
    "pettingzoo",
    "gymnasium",
    "stable-baselines3",
    "sb3-contrib",
    "torch",
)
TARGET_CACHED_S = 2.0


@dataclasses.dataclass
class Args:
    """Options of ``benchmarks/engine_speed.py`` (``--help``)."""

    runs: int = 5
    """runs per measurement, median reported"""
    seconds: float = 1.0
    """duration of each measurement (one implementation, one size, one run)"""
    min_steps: int = 0
    """minimum game steps per measurement (the loop stops when both are reached)"""
    batch_sizes: tuple[int, ...] = (1, 64, 1024, 4096)
    """batch sizes"""
    num_players: tuple[int, ...] = (2, 4)
    """player counts"""
    presets: tuple[str, ...] = ("official", "house")
    """presets measured besides classic, at batch 1 and the largest batch (none: --presets with no name)"""
    cached_runs: int = 3
    """cached-start subprocess runs"""
    skip_cold: bool = False
    """skip the cold-compile subprocess (implied by --quick)"""
    skip_startup: bool = False
    """skip both start-up measurements"""
    skip_rlcard: bool = False
    """do not measure RLCard"""
    quick: bool = False
    """CI smoke: 1 run of 300 steps per measurement, 1 cached start, no cold compile"""
    seed: int = 0
    """seed of the games"""
    json: str | None = None
    """also write the results as JSON to this path"""

    @property
    def cold(self) -> bool:
        """Whether the cold compile is measured."""
        return not (self.quick or self.skip_cold or self.skip_startup)


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` of the command line, with ``--quick``'s sizes."""
    a = tyro.cli(Args, args=argv, description=__doc__)
    if a.quick:
        a = dataclasses.replace(a, runs=1, seconds=0.0, min_steps=300, cached_runs=1)
    if a.runs < 1 or a.cached_runs < 1:
        raise SystemExit("--runs and --cached-runs must be >= 1")
    if a.seconds <= 0 and a.min_steps <= 0:
        raise SystemExit("give --seconds > 0 or --min-steps > 0")
    if not a.batch_sizes or not a.num_players or min(*a.batch_sizes, *a.num_players) < 1:
        raise SystemExit("--batch-sizes and --num-players must list positive integers")
    return a


# --- environment description ----------------------------------------------------------------


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _sources_digest() -> str:
    """Hash of the engine's and agents' Python sources (to flag edits made during the run)."""
    h = hashlib.sha256()
    for path in sorted([*(REPO / "uno_env").rglob("*.py"), *(REPO / "agents").rglob("*.py")]):
        h.update(str(path.relative_to(REPO)).encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:16]


def machine_info() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    status = _git("status", "--porcelain", "--", "uno_env", "agents")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable,
        "versions": {name: _version(name) for name in VERSIONS},
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "engine_sources_modified": bool(status) if status is not None else None,
        "sources_digest": _sources_digest(),
        "load_average_at_start": _loadavg(),
    }


# --- throughput ---------------------------------------------------------------------------------


class OursBench:
    """Our Engine, autoreset, one uniformly random legal action per game each step (``sample_legal``'s pick).

    ``observations=False`` ("uno_env core") skips writing observations, the like-for-like
    comparison with RLCard's game object, whose ``step`` builds no state either."""

    def __init__(
        self,
        batch: int,
        players: int,
        seed: int,
        observations: bool = True,
        preset: str = "classic",
        overrides: dict[str, Any] | None = None,
        label: str = "",
        parallel: bool = False,
    ) -> None:
        from uno_env import UnoRules
        from uno_env.engine.engine import Engine

        self.batch, self.players = batch, players
        self.impl = ("uno_env" if observations else "uno_env core") + ("" if preset == "classic" else f" {preset}")
        self.impl += f" {label}" if label else ""
        if parallel:
            import numba

            self.impl += f" parallel ({numba.get_num_threads()} threads)"
        rules = UnoRules.preset(preset, **(overrides or {}))
        self.engine = Engine(
            batch, players, rules, seed=seed, autoreset=True, observations=observations, parallel=parallel
        )
        self.rng = np.random.default_rng(seed)
        self.actions = np.zeros(batch, np.int64)
        # Enough game steps per chunk that reading the clock between chunks costs nothing measurable.
        self.calls_per_chunk = max(1, 512 // batch)
        self.chunk()  # warm up (and compile, if the numba cache is cold)

    def chunk(self) -> int:
        # sample_legal's pick, with its uniforms drawn as one block per chunk like RLCardBench's
        # (one rng call per step would cost a batch-1 step a sizeable share of its time) and written
        # into one action buffer (a new array returned from numba costs more; docs/development.md,
        # engine measurements).
        engine, actions = self.engine, self.actions
        u = self.rng.random((self.calls_per_chunk, self.batch))
        mask = engine.legal_mask
        for k in range(self.calls_per_chunk):
            pick_legal(mask, u[k], actions)
            mask = engine.step(actions).legal_mask
        return self.calls_per_chunk * self.batch


class RLCardBench:
    """RLCard's raw ``UnoGame``: get_legal_actions, a random choice, game.step; init_game when over."""

    # Uniforms drawn in blocks per chunk, as for our engine: cheaper than one rng call per step.

    impl = "rlcard"
    batch = 1

    def __init__(self, players: int, seed: int) -> None:
        from rlcard.games.uno.game import UnoGame

        self.players = players
        self.game = UnoGame(num_players=players)
        self.game.np_random = np.random.RandomState(seed)
        self.game.init_game()
        self.rng = np.random.default_rng(seed)
        self.steps_per_chunk = 256
        self.games = 0
        self.chunk()

    def chunk(self) -> int:
        game = self.game
        u = self.rng.random(self.steps_per_chunk)
        for i in range(self.steps_per_chunk):
            legal = game.get_legal_actions()
            n = len(legal)
            game.step(legal[min(int(u[i] * n), n - 1)])
            if game.is_over():
                game.init_game()
                self.games += 1
        return self.steps_per_chunk


def measure_throughput(cfg: Args, log: Callable[[str], None]) -> tuple[list[dict[str, Any]], list[str]]:
    notes: list[str] = []
    benches: list[Any] = []
    for players in cfg.num_players:
        for batch in cfg.batch_sizes:
            log(f"  preparing uno_env players={players} batch={batch}")
            benches.append(OursBench(batch, players, cfg.seed + 1000 * players + batch))
        for batch in sorted({min(cfg.batch_sizes), max(cfg.batch_sizes)}):
            benches.append(OursBench(batch, players, cfg.seed + 1000 * players + batch, observations=False))
            for preset in cfg.presets:
                benches.append(OursBench(batch, players, cfg.seed + 1000 * players + batch, preset=preset))
    if not cfg.skip_rlcard:
        try:
            for players in cfg.num_players:
                log(f"  preparing rlcard players={players}")
                benches.append(RLCardBench(players, cfg.seed + players))
        except ImportError as exc:
            notes.append(f"RLCard not measured ({exc}); install it with `pip install rlcard`.")
            benches = [b for b in benches if b.impl != "rlcard"]
    # Interleaved: every implementation and size once per run, starting at a rotating offset
    # so slow drifts in machine load spread over all of them.
    measured = interleave(benches, cfg.runs, cfg.seconds, cfg.min_steps, log)
    results: dict[int, list[Measurement]] = {id(b): m for b, m in zip(benches, measured, strict=True)}
    rows = []
    for bench in benches:
        rates = [m.rate for m in results[id(bench)]]
        med = statistics.median(rates)
        rows.append(
            {
                "impl": bench.impl,
                "players": bench.players,
                "batch": bench.batch,
                "steps_per_s": med,
                "min_steps_per_s": min(rates),
                "max_steps_per_s": max(rates),
                "ns_per_game_step": 1e9 / med,
                "us_per_call": 1e6 * bench.batch / med,
                "runs_steps_per_s": rates,
                "runs_steps": [m.steps for m in results[id(bench)]],
            }
        )
    # Ratios against RLCard with the same number of players: of the medians, and per run (paired).
    rl = {r["players"]: r for r in rows if r["impl"] == "rlcard"}
    for r in rows:
        base = rl.get(r["players"])
        if not r["impl"].startswith("uno_env") or base is None:
            continue
        r["ratio_vs_rlcard"] = r["steps_per_s"] / base["steps_per_s"]
        r["paired_ratios"] = [a / b for a, b in zip(r["runs_steps_per_s"], base["runs_steps_per_s"], strict=True)]
        r["median_paired_ratio"] = statistics.median(r["paired_ratios"])
        r["best_ratio"] = r["max_steps_per_s"] / base["max_steps_per_s"]
        # The targets are for the classic preset.
        if r["batch"] in TARGETS_RATIO and r["impl"] in ("uno_env", "uno_env core"):
            r["target_ratio"] = TARGETS_RATIO[r["batch"]]
            r["target_met"] = r["ratio_vs_rlcard"] >= TARGETS_RATIO[r["batch"]]
    return rows, notes


# --- start-up (subprocesses) -------------------------------------------------------------------

_CHILD = r"""
import time
t0 = time.perf_counter()
import json, sys
import numpy as np
from uno_env.engine.engine import Engine
t1 = time.perf_counter()
engine = Engine(1, {players}, seed=0, autoreset=True)
result = engine.step(np.argmax(engine.legal_mask, axis=1))
t2 = time.perf_counter()
assert result.legal_mask.any() or result.terminated.any() or result.truncated.any()
print("RESULT " + json.dumps({{"import_s": t1 - t0, "first_step_s": t2 - t1, "import_to_step_s": t2 - t0}}))
"""


def _cache_snapshot(dirs: list[Path]) -> dict[str, tuple[int, int]]:
    snap = {}
    for d in dirs:
        if d.exists():
            for f in d.rglob("*"):
                if f.suffix in (".nbi", ".nbc"):
                    try:
                        st = f.stat()
                    except OSError:
                        continue
                    snap[str(f)] = (st.st_size, st.st_mtime_ns)
    return snap


def _run_child(players: int, cache_dir: Path | None, timeout: float) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("NUMBA_DISABLE_JIT", None)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD.format(players=players)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"start-up subprocess failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    out = json.loads(line[len("RESULT ") :])
    out["process_wall_s"] = wall
    return out


def measure_startup(cfg: Args, log: Callable[[str], None]) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    players = cfg.num_players[0]
    out: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="uno_bench_numba_"))
    try:
        if cfg.cold:
            cache_dir: Path | None = tmp / "cache"
            cache_dirs = [tmp / "cache"]
            log("  cold compile (fresh NUMBA_CACHE_DIR) ...")
            cold = _run_child(players, cache_dir, timeout=900)
            cold["cache_files"] = len(_cache_snapshot(cache_dirs))
            cold["target_s"] = TARGET_COLD_S
            cold["target_met"] = cold["first_step_s"] <= TARGET_COLD_S
            out["cold"] = cold
        else:
            # No cold compile (--quick): time the start from the default cache, which this
            # process has just filled by running the engine.
            cache_dir = None
            cache_dirs = [REPO / "uno_env", REPO / "agents"]
            if os.environ.get("NUMBA_CACHE_DIR"):
                cache_dirs = [Path(os.environ["NUMBA_CACHE_DIR"])]
        runs, discarded = [], []
        attempts = 0
        while len(runs) < cfg.cached_runs and attempts < cfg.cached_runs + 3:
            attempts += 1
            before = _cache_snapshot(cache_dirs)
            log(f"  cached start {len(runs) + 1}/{cfg.cached_runs} ...")
            r = _run_child(players, cache_dir, timeout=900)
            # A cached start that wrote to the cache recompiled something (e.g. a kernel source
            # was edited since the cache was filled): not a cached start, so it is set aside.
            r["recompiled"] = _cache_snapshot(cache_dirs) != before
            (discarded if r["recompiled"] else runs).append(r)
        if discarded:
            notes.append(
                f"{len(discarded)} cached-start run(s) recompiled (the numba cache changed during the "
                f"run, e.g. engine sources edited) and were set aside."
            )
        if not runs:
            notes.append("no cached-start run loaded entirely from the cache; reporting the recompiling runs")
            runs = discarded
        med = statistics.median(r["import_to_step_s"] for r in runs)
        out["cached"] = {
            "import_to_step_s": med,
            "process_wall_s": statistics.median(r["process_wall_s"] for r in runs),
            "import_s": statistics.median(r["import_s"] for r in runs),
            "runs": runs,
            "discarded_runs": discarded,
            "cache": "fresh NUMBA_CACHE_DIR filled by the cold run" if cfg.cold else "default numba cache",
            "target_s": TARGET_CACHED_S,
            "target_met": med <= TARGET_CACHED_S,
        }
        out["players"] = players
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out, notes


# --- report -------------------------------------------------------------------------------------


def _ok(met: bool | None) -> str:
    return "" if met is None else ("yes" if met else "**no**")


def machine_lines(m: dict[str, Any], load_at_end: list[float] | None) -> list[str]:
    """Markdown bullets: date and commit, machine, load average, versions (``machine_info()``)."""
    v = m["versions"]
    return [
        f"- date: {m['date']}; git {m['git_commit']}"
        + (" (engine sources modified in the working tree)" if m["engine_sources_modified"] else ""),
        f"- machine: {m['platform']}; CPU {m['cpu_model']}; {m['cpu_count']} cores ({m['usable_cores']} usable); Python {m['python']}",
        f"- load average (1/5/15 min) at start {m['load_average_at_start']}, at end {load_at_end}",
        "- versions: " + ", ".join(f"{k} {x}" for k, x in v.items()),
    ]


def render_markdown(report: dict[str, Any]) -> str:
    m, cfg = report["machine"], report["config"]
    lines = [
        "## uno_env engine benchmark",
        "",
        *machine_lines(m, report["load_average_at_end"]),
        f"- settings: {cfg['runs']} run(s) per measurement, interleaved; each "
        + (f"{cfg['seconds']:g} s" if cfg["seconds"] > 0 else "")
        + (" and " if cfg["seconds"] > 0 and cfg["min_steps"] > 0 else "")
        + (f">= {cfg['min_steps']} steps" if cfg["min_steps"] > 0 else "")
        + "; one thread; random legal actions chosen inside the timed loop"
        + ("; QUICK MODE (smoke test, numbers not meaningful)" if cfg["quick"] else ""),
        "",
        "### Throughput (game steps per second; uno_env steps = batch size x Engine.step calls)",
        "",
        "| impl | players | batch | steps/s (median) | min | max | ns / game step | µs / call | x RLCard | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["throughput"]:
        ratio = f"{r['ratio_vs_rlcard']:.2f}x" if "ratio_vs_rlcard" in r else ""
        target = f">= {r['target_ratio']:g}x {_ok(r['target_met'])}" if "target_ratio" in r else ""
        lines.append(
            f"| {r['impl']} | {r['players']} | {r['batch']} | {fmt_rate(r['steps_per_s'])} | "
            f"{fmt_rate(r['min_steps_per_s'])} | {fmt_rate(r['max_steps_per_s'])} | "
            f"{r['ns_per_game_step']:.0f} | {r['us_per_call']:.1f} | {ratio} | {target} |"
        )
    ratios = [r for r in report["throughput"] if "target_ratio" in r]
    if ratios:
        lines += [
            "",
            "### Ratio ours / RLCard UnoGame (target judged on the ratio of medians)",
            "",
            "| players | batch | ratio of medians | median of per-run ratios | ratio of best runs | per run | target | met |",
            "|---:|---:|---:|---:|---:|---|---:|---|",
        ]
        for r in ratios:
            paired = ", ".join(f"{x:.2f}" for x in r["paired_ratios"])
            lines.append(
                f"| {r['players']} | {r['batch']} | {r['ratio_vs_rlcard']:.2f}x | {r['median_paired_ratio']:.2f}x | "
                f"{r['best_ratio']:.2f}x | [{paired}] | >= {r['target_ratio']:g}x | {_ok(r['target_met'])} |"
            )
    st = report.get("startup")
    if st:
        lines += [
            "",
            f"### numba start-up (subprocesses, wall clock, Engine(1, {st['players']}) + one step)",
            "",
            "| measurement | seconds | process wall (s) | runs | target | met |",
            "|---|---:|---:|---|---:|---|",
        ]
        if "cold" in st:
            c = st["cold"]
            lines.append(
                f"| cold compile: first Engine(...) + one step, empty NUMBA_CACHE_DIR | {c['first_step_s']:.2f} | "
                f"{c['process_wall_s']:.2f} | 1 (import {c['import_s']:.2f} s) | <= {c['target_s']:g} s | {_ok(c['target_met'])} |"
            )
        c = st["cached"]
        runs = ", ".join(f"{r['import_to_step_s']:.2f}" for r in c["runs"])
        lines.append(
            f"| cached start: import to first step done ({c['cache']}) | {c['import_to_step_s']:.2f} | "
            f"{c['process_wall_s']:.2f} | median of [{runs}] | <= {c['target_s']:g} s | {_ok(c['target_met'])} |"
        )
    if report["notes"]:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in report["notes"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    cfg = parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    t_start = time.perf_counter()
    machine = machine_info()
    notes: list[str] = []
    log("throughput ...")
    rows, n = measure_throughput(cfg, log)
    notes += n
    startup = None
    if not cfg.skip_startup:
        log("start-up ...")
        startup, n = measure_startup(cfg, log)
        notes += n
    if _sources_digest() != machine["sources_digest"]:
        notes.append("engine/agents sources changed while the benchmark ran; numbers may mix versions.")
    if any(r["impl"] == "rlcard" for r in rows):
        notes.append(
            "RLCard is its raw UnoGame object, one game at a time: each step builds its state dict and "
            "legal actions, but not the env wrapper's encoded observation; ours builds the float32 "
            "observation and the legal mask of every game on every step."
        )
    report = {
        "machine": machine,
        "config": dataclasses.asdict(cfg),
        "throughput": rows,
        "startup": startup,
        "notes": notes,
        "total_seconds": time.perf_counter() - t_start,
        "load_average_at_end": _loadavg(),
    }
    md = render_markdown(report)
    report["markdown"] = md
    print(md, end="", flush=True)
    if cfg.json:
        path = Path(cfg.json)
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2) + "\n")
        log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
