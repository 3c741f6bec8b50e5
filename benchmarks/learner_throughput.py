"""Learner throughput: samples per second that ``train.py``'s MaskablePPO consumes, by torch threads.

    python -m benchmarks.learner_throughput             # 5 interleaved runs of 8 rollouts per row
    python -m benchmarks.learner_throughput --quick     # smoke: tiny sizes, numbers not meaningful

Each row is ``train.py``'s default run (its ``Args`` defaults,
``benchmarks.time_to_skill.train_defaults``; the same opponents, env, network and PPO settings)
with one setting changed; a chunk is one rollout of ``num_envs * n_steps`` learner decisions and
its PPO update (``model.learn``), so a rate counts the decisions consumed, collection and update
together. The rows are timed in interleaved runs (``benchmarks._timing.interleave``) and the
table gives the medians, by wall clock and by this process's CPU time, with the ratio to the
first row measured in the same runs.

| row | rollouts (env, opponents, policy forward) | PPO update |
|---|---|---|
| ``1 thread`` | 1 torch thread | 1 thread |
| ``update on 2 threads`` | 1 torch thread | 2 threads (``training.sb3.with_update_threads``, ``train.py --update-threads 2``) |
| ``2 threads throughout`` | 2 torch threads | 2 threads (``train.py --torch-threads 2``) |

Why a second thread helps only the update, and only on an idle machine: ``docs/training.md``
(``--update-threads``). Writes ``learner_throughput.md`` and ``.json`` (date, machine, load) to
``--results-dir``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import tyro

from benchmarks._timing import add_ratio, fmt_rate, interleave, loadavg, summarize
from benchmarks.engine_speed import machine_info, machine_lines
from benchmarks.time_to_skill import train_defaults

ROWS = (
    ("1 thread", 1, 1),
    ("update on 2 threads", 1, 2),
    ("2 threads throughout", 2, 2),
)
QUICK = dict(num_envs=16, n_steps=16, batch_size=128, n_epochs=1)


@dataclasses.dataclass
class Args:
    """Options of the learner-throughput benchmark (``python -m benchmarks.learner_throughput --help``)."""

    runs: int = 5
    """interleaved runs per row (the table gives medians)"""
    rollouts: int = 8
    """rollouts (each with its update) timed per row in each run"""
    quick: bool = False
    """smoke run: tiny rollouts, one run (numbers not meaningful)"""
    results_dir: str = "benchmarks/results"
    """where learner_throughput.md and learner_throughput.json are written"""


class LearnerBench:
    """``train.py``'s default model on its default env; ``chunk`` = one rollout and its update."""

    def __init__(self, d: SimpleNamespace, torch_threads: int, update_threads: int) -> None:
        import torch

        from training.opponents import opponent_groups, parse_mix
        from training.sb3 import LinearSchedule, make_model, with_update_threads
        from uno_env import parse_rules
        from uno_env.sb3_vec_env import UnoSB3VecEnv

        rules = parse_rules(d.rules)
        # Snapshots of the learner play as the untrained model itself: throughput does not depend on the weights.
        mix = {k: v for k, v in parse_mix(d.opponent_mix).items() if k not in ("self", "league")} or {"random": 1.0}
        groups = opponent_groups(mix, d.num_envs, rules, num_players=d.num_players)
        venv = UnoSB3VecEnv(
            d.num_envs, d.num_players, rules, seed=d.seed, opponents=[(g.agent, g.games) for g in groups]
        )
        self.model = make_model(d, venv, LinearSchedule(d.learning_rate, d.total_timesteps, d.anneal_lr))
        with_update_threads(self.model, update_threads)
        self.torch_threads, self.torch = torch_threads, torch
        self.steps = d.num_envs * d.n_steps
        self.rollouts = 1

    def chunk(self) -> int:
        self.torch.set_num_threads(self.torch_threads)
        for _ in range(self.rollouts):
            self.model.learn(self.steps, reset_num_timesteps=False)
        return self.steps * self.rollouts


def measure(args: Args, argv: list[str]) -> dict[str, Any]:
    """Time the rows (module table) in interleaved runs; the report."""
    import torch

    d = SimpleNamespace(**train_defaults())
    if args.quick:
        d.__dict__.update(QUICK)
    torch.distributions.Distribution.set_default_validate_args(False)  # as train.py
    benches = [LearnerBench(d, t, u) for _, t, u in ROWS]
    for b in benches:
        b.chunk()  # warm-up: numba compilation, first allocations
        b.rollouts = 1 if args.quick else args.rollouts
    machine = machine_info()  # holds the load average at the start
    results = interleave(benches, 1 if args.quick else args.runs, 0.0, log=lambda s: print(s, flush=True))
    rows = []
    for (name, t, u), ms in zip(ROWS, results, strict=True):
        row = {"row": name, "torch_threads": t, "update_threads": u, **summarize(ms)}
        rows.append(row)
    for row in rows:
        add_ratio(row, rows[0])
    return {
        "machine": machine,
        "command": " ".join(["python -m benchmarks.learner_throughput", *argv]),
        "load_average_at_end": loadavg(),
        "args": dataclasses.asdict(args),
        "settings": {
            k: getattr(d, k) for k in ("num_envs", "n_steps", "batch_size", "n_epochs", "hidden", "opponent_mix")
        },
        "rows": rows,
    }


def report_lines(report: dict[str, Any]) -> list[str]:
    """The Markdown report: machine, then the table of medians."""
    s = report["settings"]
    lines = [
        "## Learner throughput: learner decisions consumed per second (rollouts and PPO updates)",
        "",
        *machine_lines(report["machine"], report["load_average_at_end"]),
        f"- command: `{report['command']}`",
        f"- train.py defaults: {s['num_envs']} games x {s['n_steps']} steps per rollout, minibatch "
        f"{s['batch_size']}, {s['n_epochs']} epochs, network {tuple(s['hidden'])}, opponents {s['opponent_mix']}",
        "",
        "| row | torch threads (rollouts / update) | steps/s wall (median) | ratio | steps per CPU-s | ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['row']} | {r['torch_threads']} / {r['update_threads']} | {fmt_rate(r['steps_per_s'])} | "
            f"{r['ratio']:.2f}x | {fmt_rate(r['cpu_steps_per_s'])} | {r['cpu_ratio']:.2f}x |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = tyro.cli(Args, args=argv)
    report = measure(args, argv)
    lines = report_lines(report)
    print("\n".join(lines))
    out = Path(args.results_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "learner_throughput.md").write_text("\n".join(lines) + "\n")
    (out / "learner_throughput.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
