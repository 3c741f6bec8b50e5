"""The sequence policy against the MLP at an equal budget: learning curves on held-out duplicate deals.

    python -m lab.seq_vs_mlp --minutes 8 --out /tmp/seq                  # 2 players, the whole run in 8 minutes
    python -m lab.seq_vs_mlp --minutes 60 --four-players --out /tmp/seq  # 2 and 4 players
    python -m lab.seq_vs_mlp --steps 2000000 --minutes 90 --out /tmp/seq # equal steps instead of equal time

Configurations, budget and outputs: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import datetime
import glob
import importlib
import json
import multiprocessing
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import tyro

# The budget counts from here: the engine's kernels may compile when arena is first imported.
STARTED = time.monotonic()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL_SEED = 0x5E0_0001  # the evaluation deals' seed: no training run draws from it


@dataclass
class Args:
    """Options of ``python -m lab.seq_vs_mlp``."""

    minutes: float = 8.0
    """wall-clock budget of the whole command, training and evaluation"""
    out: str = "seq_vs_mlp"
    """folder for seq_vs_mlp.json, seq_vs_mlp.md and the PNG curves"""
    history: int = 32
    """K: the public events the history configurations read"""
    four_players: bool = False
    """also train and evaluate every configuration at 4 players"""
    steps: int = 0
    """learner steps per run (0: as many as the time budget allows)"""
    device: str = "cpu"
    """torch device of the learners (cpu, cuda); evaluations run on the CPU"""
    opponents: str = "heuristic"
    """the evaluations' opponents, comma-separated agent specs (a+b+c: a mixed table)"""
    eval_deals: int = 500
    """held-out duplicate deals per evaluation (each played once per seat rotation)"""
    points: int = 6
    """checkpoints evaluated along each run, besides its final model"""
    checkpoint_every: int = 65_536
    """learner steps between a run's checkpoints (the candidates for the curves)"""
    eval_share: float = 0.3
    """share of the budget left for the evaluations"""
    update_threads: int = 0
    """torch threads of each run's PPO update (0: the cores shared among the runs, at most 4)"""
    workers: int = 0
    """evaluation processes (0: every core; 1: in this process)"""
    seed: int = 1
    """training seed of every run"""
    train_args: str = ""
    """more train.py options for every run, joined by '=': --train-args='--num-envs 128 --hidden 128 128'"""
    warm_up: bool = True
    """compile the numba kernels (a tiny train.py run and game) before the runs start their clocks"""
    keep_runs: bool = False
    """keep the runs (models, checkpoints, logs) in <out>/runs"""
    beliefs: bool = True
    """also train mlp+beliefs: the MLP that reads the belief network's reading of each other seat"""


def configurations(history: int, four_players: bool, beliefs: bool = True) -> list[dict[str, Any]]:
    """The runs: (players, name, train.py options) of each configuration."""
    kinds = [("mlp", "mlp", 0), (f"mlp+h{history}", "mlp", history), (f"seq+h{history}", "seq", history)]
    kinds += [("mlp+beliefs", "mlp", 0)] if beliefs else []
    return [
        {
            "players": p,
            "name": name,
            "policy": policy,
            "history": k,
            "beliefs": "net" if name == "mlp+beliefs" else "none",
            "exp": f"{p}p_{name.replace('+', '_')}",
        }
        for p in ((2, 4) if four_players else (2,))
        for name, policy, k in kinds
    ]


def train_command(args: Args, config: dict[str, Any], out: str, minutes: float, threads: int) -> list[str]:
    """The ``train.py`` command of one run."""
    cmd = [sys.executable, os.path.join(ROOT, "train.py")]
    cmd += ["--exp-name", config["exp"], "--output-dir", out, "--seed", str(args.seed)]
    cmd += ["--num-players", str(config["players"]), "--policy", config["policy"], "--history", str(config["history"])]
    cmd += ["--beliefs", config.get("beliefs", "none")]
    cmd += ["--bc-positions", "0", "--eval-every", "0", "--final-eval-games", "0", "--no-progress", "--no-tensorboard"]
    cmd += ["--max-minutes", f"{minutes:.4f}", "--checkpoint-every", str(args.checkpoint_every)]
    cmd += ["--torch-threads", "1", "--update-threads", str(threads), "--device", args.device]
    cmd += (
        ["--total-timesteps", str(args.steps)] if args.steps else ["--total-timesteps", str(10**12), "--no-anneal-lr"]
    )
    return cmd + shlex.split(args.train_args)


def compile_kernels(args: Args, work: str) -> float:
    """Compile the numba kernels once (a tiny seq run, a tiny game with history): seconds taken."""
    start = time.perf_counter()
    tiny = dataclasses.replace(args, steps=256, checkpoint_every=10**9, train_args=args.train_args)
    config = {"players": 2, "policy": "seq", "history": min(args.history, 4), "exp": "warm_up"}
    cmd = train_command(tiny, config, work, 1.0, 1)
    cmd += ["--num-envs", "8", "--n-steps", "32", "--batch-size", "128", "--n-epochs", "1", "--hidden", "16"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(
            f"the warm-up train.py run failed:\n{' '.join(cmd)}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
        )
    _evaluate(os.path.join(work, "warm_up", "model.zip"), 2, args.opponents.split(",")[0], 2, 1)
    return time.perf_counter() - start


def _evaluate(path: str, players: int, opponent: str, deals: int, seed: int) -> dict[str, Any]:
    """One model on ``deals`` duplicate deals against ``opponent``: win rate, paired 95% interval, per-deal wins."""
    from agents.registry import make_agent
    from arena import play
    from training.opponents import seat_agents
    from uno_env import UnoRules

    rules = UnoRules()
    learner = make_agent(path, rules, num_players=players)  # a PPOAgent, or a belief policy by its card
    start = time.perf_counter()
    r = play([learner, *seat_agents(opponent, rules, players)], deals * players, rules, seed, duplicate=True)
    assert r.deal_wins is not None
    return {
        "win_rate": float(r.win_rate[0]),
        "ci95": list(r.ci95[0]),
        "deals": deals,
        "games": r.games,
        "seconds": time.perf_counter() - start,
        "per_deal": (r.deal_wins[:, 0] / players).tolist(),
    }


def coarse_first(n: int) -> list[int]:
    """0..n-1 in van der Corput order (0, n/2, n/4, 3n/4, ...): a curve cut short is still spread out."""
    bits = max(1, (n - 1).bit_length())
    return sorted(range(n), key=lambda i: (int(format(i, f"0{bits}b")[::-1], 2), i))


def checkpoints_of(run: str) -> list[tuple[int, str]]:
    """``(step, path)`` of a run's checkpoints, by step."""
    found = []
    for path in glob.glob(os.path.join(run, "checkpoints", "step_*.zip")):
        m = re.fullmatch(r"step_(\d+)\.zip", os.path.basename(path))
        if m:
            found.append((int(m.group(1)), path))
    return sorted(found)


def pick(checkpoints: list[tuple[int, str]], points: int) -> list[tuple[int, str]]:
    """Up to ``points`` checkpoints nearest to evenly spread fractions of the last one's step."""
    if not checkpoints or points < 1:
        return []
    last = checkpoints[-1][0]
    steps = np.array([s for s, _ in checkpoints])
    chosen = {int(np.abs(steps - last * (i + 1) / points).argmin()) for i in range(points)}
    return [checkpoints[i] for i in sorted(chosen)]


def summary_of(run: str) -> dict[str, Any]:
    """The training figures of a run (``final_eval.json``), or ``{}`` for a run killed before it wrote them."""
    try:
        with open(os.path.join(run, "final_eval.json")) as f:
            final = json.load(f)
    except (OSError, ValueError):
        return {}
    trained = final["steps"] - final.get("start_step", 0)
    return {
        "steps": final["steps"],
        "train_seconds": final["train_seconds"],
        "train_cpu_seconds": final["train_cpu_seconds"],
        "steps_per_second": final["steps_per_second"],
        "cpu_ms_per_step": 1000 * final["train_cpu_seconds"] / max(trained, 1),
        "stopped_early": final["stopped_early"],
    }


def _difference(a: list[float], b: list[float]) -> dict[str, Any]:
    """Mean of ``a - b`` over the same deals, with its paired 95% interval."""
    from arena.ratings import Z95

    d = np.asarray(a) - np.asarray(b)
    half = Z95 * float(d.std(ddof=1)) / np.sqrt(d.size) if d.size > 1 else 1.0
    return {"mean": float(d.mean()), "ci95": [float(d.mean()) - half, float(d.mean()) + half], "deals": int(d.size)}


def plot(result: dict[str, Any], out: str) -> list[str]:
    """One PNG per table size: win rate against learner steps and against CPU-seconds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    for players in sorted({c["players"] for c in result["configs"]}):
        configs = [c for c in result["configs"] if c["players"] == players]
        opponents = result["args"]["opponents"].split(",")
        fig, axes = plt.subplots(len(opponents), 2, figsize=(11, 4 * len(opponents)), squeeze=False)
        for row, opponent in enumerate(opponents):
            for c in configs:
                pts = sorted((p for p in c["curve"] if p["opponent"] == opponent), key=lambda p: p["step"])
                if not pts:
                    continue
                rate = np.array([p["win_rate"] for p in pts])
                err = np.array([[p["win_rate"] - p["ci95"][0], p["ci95"][1] - p["win_rate"]] for p in pts]).T
                cpu_ms = c["train"].get("cpu_ms_per_step")
                for col, x in enumerate(
                    ([p["step"] for p in pts], [p["step"] * cpu_ms / 1000 for p in pts] if cpu_ms else None)
                ):
                    if x is not None:
                        axes[row, col].errorbar(x, rate, yerr=err, marker="o", capsize=3, label=c["name"])
            for col, label in enumerate(("learner steps", "CPU-seconds (steps x the run's CPU per step)")):
                ax = axes[row, col]
                ax.set_xlabel(label)
                ax.set_ylabel(f"win rate vs {opponent} ({players} players)")
                ax.axhline(1 / players, color="grey", lw=0.8, ls=":")
                ax.grid(alpha=0.3)
                if ax.lines:
                    ax.legend()
        fig.suptitle(f"{players} players: held-out duplicate deals, paired 95% intervals")
        fig.tight_layout()
        path = os.path.join(out, f"seq_vs_mlp_{players}p.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        files.append(path)
    return files


def table(result: dict[str, Any]) -> str:
    """The markdown table of the final models, then the paired differences."""
    lines = [
        "| players | configuration | steps | train min | steps/s | CPU ms/step | opponent | final win rate | 95% CI |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in result["configs"]:
        t = c["train"]
        for opponent, f in c["final"].items():
            lines.append(
                f"| {c['players']} | {c['name']} | {t.get('steps', '?'):,} | {t.get('train_seconds', 0) / 60:.1f} | "
                f"{t.get('steps_per_second', 0):,.0f} | {t.get('cpu_ms_per_step', float('nan')):.3f} | {opponent} | "
                f"{f['win_rate']:.1%} | {f['ci95'][0]:.1%}–{f['ci95'][1]:.1%} |"
            )
    if result["differences"]:
        lines += [
            "",
            "| players | opponent | difference | mean | 95% CI (paired over deals) |",
            "|---|---|---|---|---|",
        ]
        for d in result["differences"]:
            lines.append(
                f"| {d['players']} | {d['opponent']} | {d['a']} − {d['b']} | {d['mean']:+.1%} | "
                f"{d['ci95'][0]:+.1%} to {d['ci95'][1]:+.1%} |"
            )
    return "\n".join(lines)


def _machine() -> dict[str, Any]:
    import torch

    return {
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "python": platform.python_version(),
        "torch": torch.__version__,
    }


def main(args: Args) -> dict[str, Any]:
    """Train, evaluate, write; returns what seq_vs_mlp.json holds."""
    if args.minutes <= 0 or not 0 < args.eval_share < 1 or args.eval_deals < 2 or args.points < 0:
        raise ValueError("--minutes must be > 0, --eval-share in (0, 1), --eval-deals >= 2 and --points >= 0")
    if args.history < 1:
        raise ValueError(f"--history must be >= 1 (the events the history configurations read), got {args.history}")
    from benchmarks._timing import loadavg

    deadline = STARTED + 60 * args.minutes
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    load_start = loadavg()
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "runs") if args.keep_runs else tempfile.mkdtemp(prefix="seq_vs_mlp_")
    configs = configurations(args.history, args.four_players, args.beliefs)
    cores = os.cpu_count() or 1
    threads = args.update_threads or max(1, min(4, cores // len(configs)))
    workers = args.workers or cores
    opponents = [s for s in args.opponents.split(",") if s]
    try:
        warm = compile_kernels(args, work) if args.warm_up else 0.0
        reserve = args.eval_share * 60 * args.minutes
        margin = 30.0  # a process's start (imports, env, model) and its final save, outside --max-minutes
        train_minutes = (deadline - time.monotonic() - reserve - margin) / 60
        if train_minutes <= 0:
            raise ValueError(
                f"--minutes {args.minutes:g} leaves no training time after the warm-up ({warm:.0f} s) and the "
                f"evaluations' share ({reserve:.0f} s): give more minutes"
            )
        print(
            f"warm-up {warm:.0f} s; training {len(configs)} runs for {train_minutes:.2f} min each "
            f"({threads} update threads each, device {args.device})",
            flush=True,
        )
        procs = []
        for c in configs:
            log = open(os.path.join(work, f"{c['exp']}.log"), "w")  # closed below
            cmd = train_command(args, c, work, train_minutes, threads)
            procs.append((c, subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log, cmd))
        train_end = deadline - reserve
        for c, proc, log, cmd in procs:
            try:
                proc.wait(timeout=max(train_end - time.monotonic(), 1.0))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                c["killed"] = True
            log.close()
            c["command"] = shlex.join(cmd[1:])
            if proc.returncode and not c.get("killed"):
                with open(log.name) as f:
                    raise RuntimeError(f"{c['exp']} failed:\n{c['command']}\n{f.read()[-3000:]}")
        jobs: list[tuple[int, dict[str, Any], int, str, str]] = []  # (priority, config, step, path, opponent)
        for c in configs:
            run = os.path.join(work, c["exp"])
            c["train"] = summary_of(run)
            final = os.path.join(run, "model.zip")
            ckpts = checkpoints_of(run)
            final_step = c["train"].get("steps")
            if not os.path.isfile(final):  # killed: its last checkpoint stands for it
                final, final_step = (ckpts[-1][1], ckpts[-1][0]) if ckpts else ("", None)
            c["final_step"] = final_step
            curve = [(s, p) for s, p in pick(ckpts, args.points) if s != final_step]
            for o in opponents:
                if final:
                    jobs.append((0, c, int(final_step or 0), final, o))
                for rank, i in enumerate(coarse_first(len(curve))):
                    jobs.append((1 + rank, c, curve[i][0], curve[i][1], o))
        jobs.sort(key=lambda j: j[0])
        print(f"training done at {time.monotonic() - STARTED:.0f} s; {len(jobs)} evaluations", flush=True)
        results = run_jobs(jobs, args, workers, deadline - 10.0)
        print(f"{len(results)} evaluations done at {time.monotonic() - STARTED:.0f} s", flush=True)
        for c in configs:
            mine = {(step, o): r for (exp, step, o), r in results.items() if exp == c["exp"]}
            c["curve"] = [
                {"step": step, "opponent": o, **{k: v for k, v in r.items() if k != "per_deal"}}
                for (step, o), r in sorted(mine.items(), key=lambda kv: (kv[0][1], kv[0][0]))
            ]
            c["final"] = {o: r for (step, o), r in mine.items() if step == (c["final_step"] or 0)}
            c["evaluations_skipped"] = sum(1 for j in jobs if j[1] is c) - len(mine)
        differences = []
        for players in sorted({c["players"] for c in configs}):
            at = [c for c in configs if c["players"] == players]
            for o in opponents:
                for a in at[1:]:
                    if o in a["final"] and o in at[0]["final"]:
                        d = _difference(a["final"][o]["per_deal"], at[0]["final"][o]["per_deal"])
                        differences.append({"players": players, "opponent": o, "a": a["name"], "b": at[0]["name"], **d})
                # The sequence policy against the MLP over the same history, and against the MLP with beliefs.
                for b in at[1:2] + at[3:]:
                    if len(at) >= 3 and o in b["final"] and o in at[2]["final"]:
                        d = _difference(at[2]["final"][o]["per_deal"], b["final"][o]["per_deal"])
                        differences.append({"players": players, "opponent": o, "a": at[2]["name"], "b": b["name"], **d})
        for c in configs:
            for f in c["final"].values():
                f.pop("per_deal", None)
        result = {
            "benchmark": "seq_vs_mlp",
            "date": started,
            "command": "python -m lab.seq_vs_mlp " + shlex.join(sys.argv[1:]),
            "machine": _machine(),
            "load_average_at_start": load_start,
            "load_average_at_end": loadavg(),
            "args": dataclasses.asdict(args),
            "warm_up_seconds": warm,
            "train_minutes_each": train_minutes,
            "update_threads_each": threads,
            "eval_seed": EVAL_SEED,
            "configs": configs,
            "differences": differences,
        }
    finally:
        if not args.keep_runs:
            shutil.rmtree(work, ignore_errors=True)
    text = table(result)
    print(text)
    with open(os.path.join(args.out, "seq_vs_mlp.json"), "w") as f:
        json.dump(result, f, indent=1, default=str)
    with open(os.path.join(args.out, "seq_vs_mlp.md"), "w") as f:
        f.write(f"{result['command']}\n\n{started}, {result['machine']}, load {load_start}\n\n{text}\n")
    plot(result, args.out)
    return result


def run_jobs(
    jobs: list[tuple[int, dict[str, Any], int, str, str]], args: Args, workers: int, deadline: float
) -> dict[tuple[str, int, str], dict[str, Any]]:
    """The evaluations, in order, on ``workers`` processes (1: here) until ``deadline``:
    ``{(run, step, opponent): result}``; those unfinished at the deadline are left out."""
    out: dict[tuple[str, int, str], dict[str, Any]] = {}
    if workers == 1:
        for _, c, step, path, o in jobs:
            if time.monotonic() >= deadline:
                break
            out[(c["exp"], step, o)] = _evaluate(path, c["players"], o, args.eval_deals, EVAL_SEED)
        return out
    # Through the module's importable name, so that spawned workers find the function.
    evaluate = importlib.import_module("lab.seq_vs_mlp")._evaluate
    pool = multiprocessing.get_context("spawn").Pool(min(workers, len(jobs)) or 1)
    try:
        pending = {
            (c["exp"], step, o): pool.apply_async(evaluate, (path, c["players"], o, args.eval_deals, EVAL_SEED))
            for _, c, step, path, o in jobs
        }
        while pending and time.monotonic() < deadline:
            for key in [k for k, r in pending.items() if r.ready()]:
                out[key] = pending.pop(key).get()
            time.sleep(0.2)
    finally:
        pool.terminate()
        pool.join()
    return out


if __name__ == "__main__":
    try:
        main(tyro.cli(Args, description=__doc__))
    except ValueError as exc:
        sys.exit(f"error: {exc}")
