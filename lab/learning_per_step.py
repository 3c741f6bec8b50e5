"""Learning per step of train.py's backends: equal-step curves over seeds against heuristic.

    python -m lab.learning_per_step                         # 3 seeds x 3 settings x 2M steps, then the table
    python -m lab.learning_per_step --collect-only          # the table from runs already in --runs-dir

Each setting is train.py's default recipe (the warm start scaled to the run) at --total-timesteps,
evaluated against heuristic every --eval-every steps (1,000 games, Wilson intervals) and at the end
(2,000 games). Writes learning_per_step.md to --results-dir.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import tyro

SETTINGS: dict[str, list[str]] = {
    "sb3": ["--backend", "sb3"],
    "batched-bf16": ["--backend", "batched", "--precision", "bf16", "--num-envs", "256", "--n-steps", "64",
                     "--batch-size", "4096", "--n-epochs", "4"],
    "batched-big": ["--backend", "batched", "--num-envs", "1024", "--n-steps", "32", "--batch-size", "8192",
                    "--n-epochs", "2"],
}  # fmt: skip


@dataclasses.dataclass
class Args:
    seeds: tuple[int, ...] = (1, 2, 3)
    """seeds of each setting"""
    total_timesteps: int = 2_000_000
    """learner steps per run"""
    eval_every: int = 500_000
    """steps between the evaluations of the curve"""
    runs_dir: str = "runs/learning_per_step"
    """where the runs are written (or read, with --collect-only)"""
    collect_only: bool = False
    """only tabulate the runs in --runs-dir"""
    results_dir: str = "lab/results"
    """where learning_per_step.md is written"""


def run(args: Args, name: str, seed: int) -> None:
    """One train.py run of a setting."""
    cmd = [sys.executable, "train.py", *SETTINGS[name], "--total-timesteps", str(args.total_timesteps),
           "--eval-every", str(args.eval_every), "--eval-games", "1000", "--eval-opponents", "heuristic",
           "--final-eval-games", "2000", "--checkpoint-every", "0", "--no-progress", "--no-tensorboard",
           "--seed", str(seed), "--output-dir", args.runs_dir, "--exp-name", f"{name}_s{seed}"]  # fmt: skip
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def table(args: Args) -> list[str]:
    """A row per setting and seed: the win rate at each evaluation, the final one, steps per CPU-second."""
    steps: list[int] = []
    rows = []
    for name in SETTINGS:
        finals = []
        for seed in args.seeds:
            path = Path(args.runs_dir) / f"{name}_s{seed}" / "final_eval.json"
            if not path.is_file():
                continue
            final = json.loads(path.read_text())
            curve = [(h["step"], h["eval"][0]["win_rate"]) for h in final["history"]]
            steps = steps or [s for s, _ in curve]
            last = final["final_eval"][0]
            rate = (final["steps"] - final["start_step"]) / max(final["train_cpu_seconds"], 1e-9)
            cells = " | ".join(f"{w:.1%}" for _, w in curve)
            lo, hi = last["ci95"]
            rows.append(
                f"| {name} | {seed} | {cells} | {last['win_rate']:.1%} ({lo:.1%} – {hi:.1%}) | {rate / 1000:.1f}k |"
            )
            finals.append(last["win_rate"])
        if finals:
            rows.append(
                f"| {name} | mean of {len(finals)} | " + " | " * len(steps) + f"{sum(finals) / len(finals):.1%} | |"
            )
    head = " | ".join(f"{s / 1e6:.1f}M" for s in steps)
    return [
        "## Learning per step: train.py's backends against heuristic, equal steps",
        "",
        f"- runs: `{args.runs_dir}`, {args.total_timesteps:,} steps each, the default recipe otherwise",
        "- each evaluation: 1,000 games against heuristic, seats rotated (95% Wilson interval about ±3 points); "
        "final: 2,000 games",
        "",
        f"| setting | seed | {head} | final (95% CI) | steps per CPU-s |",
        "|---|---|" + "---:|" * len(steps) + "---|---:|",
        *rows,
    ]


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(Args, args=argv)
    if not args.collect_only:
        os.makedirs(args.runs_dir, exist_ok=True)
        for seed in args.seeds:
            for name in SETTINGS:
                run(args, name, seed)
    lines = table(args)
    print("\n".join(lines))
    out = Path(args.results_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "learning_per_step.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
