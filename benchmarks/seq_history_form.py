"""The sequence policy's learner throughput reading the history as tokens or as float rows.

    python -m benchmarks.seq_history_form                      # --history 32, 3 interleaved runs
    python -m benchmarks.seq_history_form --quick              # smoke: tiny sizes, numbers not meaningful

Each row is ``train.py --policy seq --history K`` (its ``Args`` defaults: network, PPO settings,
opponents; ``--num-envs`` games) on an env whose ``history_form`` is the row's: ``tokens``
(what ``train.py`` gives the sequence policy, ``agents.ppo.POLICY_HISTORY_FORMS``) or ``rows``
(the float rows it read before). A chunk is one rollout of ``num_envs * n_steps`` learner
decisions and its PPO update (``model.learn``), on one torch thread; the rows are timed in
interleaved runs (``benchmarks._timing.interleave``), and the table gives the medians of CPU
milliseconds per learner step and of steps per wall second, with the load average.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import tyro

from benchmarks._timing import interleave, loadavg, summarize
from benchmarks.engine import machine_info, machine_lines

FORMS = ("tokens", "rows")


@dataclasses.dataclass
class Args:
    """Options of ``python -m benchmarks.seq_history_form`` (module docstring)."""

    history: int = 32
    """K: the events the sequence policy reads"""
    num_envs: int = 64
    """games per rollout (train.py's --num-envs); a chunk is num_envs * n_steps learner steps"""
    runs: int = 3
    """interleaved runs per row (the table gives medians)"""
    quick: bool = False
    """smoke run: tiny rollouts, one run (numbers not meaningful)"""
    out: str = ""
    """a JSON file for the report (none: printed only)"""


class SeqBench:
    """``train.py --policy seq --history K``'s model on its env in one history form; ``chunk`` = one rollout and update."""

    def __init__(self, args: Args, form: str) -> None:
        import torch

        from training.main import Args as TrainArgs
        from training.opponents import opponent_groups, parse_mix
        from training.sb3 import LinearSchedule, make_model
        from uno_env import parse_rules
        from uno_env.sb3_vec_env import UnoSB3VecEnv

        d = TrainArgs(policy="seq", history=args.history, num_envs=args.num_envs, bc_positions=0)
        if args.quick:
            d = dataclasses.replace(d, num_envs=8, n_steps=16, batch_size=64, n_epochs=1, hidden=(16,))
        rules = parse_rules(d.rules)
        groups = opponent_groups(parse_mix(d.opponent_mix), d.num_envs, rules, num_players=d.num_players)
        venv = UnoSB3VecEnv(
            d.num_envs,
            d.num_players,
            rules,
            seed=d.seed,
            opponents=[(g.agent, g.games) for g in groups],
            history=d.history,
            history_form=form,
        )
        self.model = make_model(d, venv, LinearSchedule(d.learning_rate, d.total_timesteps, d.anneal_lr))
        self.torch = torch
        self.steps = d.num_envs * d.n_steps
        self.settings = {k: getattr(d, k) for k in ("num_envs", "n_steps", "batch_size", "n_epochs", "hidden")}

    def chunk(self) -> int:
        self.torch.set_num_threads(1)
        self.model.learn(self.steps, reset_num_timesteps=False)
        return self.steps


def measure(args: Args, argv: list[str]) -> dict[str, Any]:
    """Time the two forms in interleaved runs; the report."""
    import torch

    torch.distributions.Distribution.set_default_validate_args(False)  # as train.py
    benches = [SeqBench(args, form) for form in FORMS]
    for b in benches:
        b.chunk()  # warm-up: numba compilation, first allocations
    machine = machine_info()  # holds the load average at the start
    results = interleave(benches, 1 if args.quick else args.runs, 0.0, log=lambda s: print(s, flush=True))
    rows = [{"form": form, **summarize(ms)} for form, ms in zip(FORMS, results, strict=True)]
    return {
        "machine": machine,
        "command": " ".join(["python -m benchmarks.seq_history_form", *argv]),
        "load_average_at_end": loadavg(),
        "args": dataclasses.asdict(args),
        "settings": benches[0].settings,
        "rows": rows,
    }


def report_lines(report: dict[str, Any]) -> list[str]:
    """Markdown: machine, then per form the median CPU ms and wall rate per learner step."""
    s, k = report["settings"], report["args"]["history"]
    lines = [
        *machine_lines(report["machine"], report["load_average_at_end"]),
        f"- command: `{report['command']}`; {s['num_envs']} games x {s['n_steps']} steps per rollout, minibatch "
        f"{s['batch_size']}, {s['n_epochs']} epochs, trunk {tuple(s['hidden'])}, one torch thread",
        "",
        f"| `--policy seq --history {k}` reads | CPU ms per learner step (median) | runs | learner steps/s wall |",
        "|---|---:|---|---:|",
    ]
    base = 1e3 / report["rows"][0]["cpu_steps_per_s"]
    for r in report["rows"]:
        ms = 1e3 / r["cpu_steps_per_s"]
        runs = ", ".join(f"{1e3 / x:.2f}" for x in r["runs_cpu_steps_per_s"])
        lines.append(f"| {r['form']} ({ms / base:.2f}x) | {ms:.2f} | {runs} | {r['steps_per_s']:,.0f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = tyro.cli(Args, args=argv)
    report = measure(args, argv)
    print("\n".join(report_lines(report)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
