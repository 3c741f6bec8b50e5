"""Learner throughput: learner decisions per second that ``train.py``'s backends consume, and their strength.

    python -m benchmarks.learner_throughput                         # the speed table, 5 interleaved runs
    python -m benchmarks.learner_throughput --strength-minutes 5    # and each backend trained 5 min, then rated
    python -m benchmarks.learner_throughput --device cuda --rows batched,batched-fp32
    python -m benchmarks.learner_throughput --quick                 # smoke: tiny sizes, numbers not meaningful

Each row is ``train.py``'s default run with one backend and its settings (module ``ROWS``); a chunk is
one rollout of ``num_envs * n_steps`` learner decisions and its PPO update, so a rate counts collection
and update together. Rows are timed in interleaved runs (``benchmarks._timing.interleave``); the table
gives medians by wall clock and by this process's CPU time, with the ratio to the first row. Below it,
the figures that predict other hardware: the update's samples/s by minibatch, and the env's steps/s.
``--strength-minutes`` trains each backend's first row for that wall time and plays both against
``heuristic`` on the same duplicate deals (paired interval of the difference). Writes
``learner_throughput.md`` and ``.json`` (date, machine, load) to ``--results-dir``.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import tyro

from benchmarks._timing import add_ratio, fmt_rate, interleave, loadavg, summarize, write_report
from benchmarks.engine_speed import machine_info, machine_lines

# name -> train.py options over its defaults
# name -> train.py options over its defaults; "batched" is train.py's default run (BACKEND_DEFAULTS: its shape,
# the update on every core, bf16 where the CPU or GPU multiplies it in hardware)
SB3_SHAPE = dict(num_envs=256, n_steps=64, batch_size=4096, n_epochs=4)
ROWS: dict[str, dict[str, Any]] = {
    "sb3": dict(backend="sb3"),
    "sb3-update2": dict(backend="sb3", update_threads=2),
    "batched": dict(backend="batched"),
    "batched-1thread": dict(backend="batched", update_threads=1),
    "batched-sb3-shape": dict(backend="batched", **SB3_SHAPE),
    "batched-fp32": dict(backend="batched", precision="fp32"),
    "batched-bf16": dict(backend="batched", precision="bf16"),
}
QUICK = dict(num_envs=16, n_steps=16, batch_size=128, n_epochs=1)


@dataclasses.dataclass
class Args:
    """Options of the learner-throughput benchmark (``python -m benchmarks.learner_throughput --help``)."""

    rows: str = "sb3,sb3-update2,batched,batched-1thread,batched-sb3-shape"
    """rows to time, comma-separated names of ROWS; the first is the ratios' base"""
    runs: int = 5
    """interleaved runs per row (the table gives medians)"""
    rollouts: int = 4
    """rollouts (each with its update) timed per row in each run"""
    device: str = "cpu"
    """torch device of the batched rows (sb3 rows stay on the CPU)"""
    minibatches: tuple[int, ...] = (4096, 16384, 65536)
    """minibatch sizes of the update-only figures"""
    strength_minutes: float = 0.0
    """train sb3 and batched (the first row of each) for this wall time, then rate both (0: skip)"""
    strength_games: int = 2000
    """duplicate games per backend against heuristic in the strength part"""
    quick: bool = False
    """smoke run: tiny rollouts, one run (numbers not meaningful)"""
    results_dir: str = "benchmarks/results"
    """where learner_throughput.md and learner_throughput.json are written"""
    runs_dir: str = "runs/learner_throughput"
    """where the strength part's train.py runs are written"""


def train_args(overrides: dict[str, Any], quick: bool, device: str, **more: Any) -> Any:
    """``train.py``'s ``Args`` with a row's options (the batched rows on ``device``)."""
    from training.main import Args as TrainArgs

    options = {**overrides, **(QUICK if quick else {}), **more}
    if options.get("backend") == "batched" and device != "cpu":
        options["device"] = device
    return TrainArgs(**options)


class LearnerBench:
    """One row: ``train.py``'s model and env with the row's options; ``chunk`` = one rollout and its update."""

    def __init__(self, name: str, args: Any) -> None:
        from training.main import batched_learner, build_env, check_args
        from training.opponents import opponent_groups
        from training.sb3 import LinearSchedule, make_model, with_update_threads

        rules, mix, _init = check_args(args)
        # Snapshots of the learner play as the untrained model itself: throughput does not depend on the weights.
        mix = {k: v for k, v in mix.items() if k not in ("self", "league")}
        groups = opponent_groups(mix, args.num_envs, rules, num_players=args.num_players)
        venv, _ = build_env(args, rules, groups)
        schedule = LinearSchedule(args.learning_rate, args.total_timesteps, args.anneal_lr)
        self.model = make_model(args, venv, schedule)
        self.name, self.args, self.venv = name, args, venv
        self.steps = args.num_envs * args.n_steps
        self.rollouts = 1
        self.learner = batched_learner(args, self.model, venv, schedule, []) if args.backend == "batched" else None
        if self.learner is None and args.update_threads:
            with_update_threads(self.model, args.update_threads)

    def chunk(self) -> int:
        import torch

        from training.main import update_thread_count

        torch.set_num_threads(self.args.torch_threads)
        for _ in range(self.rollouts):
            if self.learner is None:
                self.model.learn(self.steps, reset_num_timesteps=False)
            else:
                self.learner.rollout()
                with self.learner.threads(update_thread_count(self.args)):
                    self.learner.update()
        if self.learner is not None and self.learner.device.type == "cuda":
            torch.cuda.synchronize()
        return self.steps * self.rollouts


def update_rates(args: Args, precision: str) -> list[dict[str, Any]]:
    """Samples/s of the default network's PPO update (one epoch) and forward pass by minibatch size and threads."""
    import torch

    from training.batched_ppo import heads
    from training.run import usable_cores
    from training.sb3 import update_threads

    rows = []
    for mb in args.minibatches if not args.quick else (128,):
        bench = LearnerBench(f"update {mb}", train_args(ROWS["batched"], args.quick, args.device, precision=precision))
        learner = bench.learner
        assert learner is not None
        cuda = learner.device.type == "cuda"
        obs = torch.rand((mb, *learner.buf_obs.shape[2:]), device=learner.device)
        mask = torch.ones((mb, learner.buf_mask.shape[2]), dtype=torch.bool, device=learner.device)
        zeros = torch.zeros(mb, device=learner.device)
        action = torch.zeros(mb, dtype=torch.int64, device=learner.device)
        repeats = 1 if args.quick else max(1, 65536 // mb)
        for threads in (0,) if cuda else sorted({1, usable_cores()}):
            times, forward = [], []
            with learner.threads(threads):  # as the learner's update: a shard of each minibatch per thread
                for _ in range(4):
                    t0 = time.perf_counter()
                    for _ in range(repeats):
                        learner.step_minibatch(obs, mask, action, zeros, zeros + 1, zeros)
                    if cuda:
                        torch.cuda.synchronize()
                    times.append((time.perf_counter() - t0) / (repeats * mb))
            with update_threads(threads), torch.inference_mode(), learner.autocast():  # torch's own threads
                for _ in range(4):
                    t0 = time.perf_counter()
                    heads(learner.policy, obs)
                    if cuda:
                        torch.cuda.synchronize()
                    forward.append((time.perf_counter() - t0) / mb)
            rows.append(
                {"minibatch": mb, "precision": precision, "threads": threads or "gpu",
                 "update_per_s": 1 / float(np.median(times[1:])), "forward_per_s": 1 / float(np.median(forward[1:]))}
            )  # fmt: skip
    return rows


def env_rate(args: Args) -> dict[str, Any]:
    """The training env alone (default opponents, random legal learner actions): steps/s and per CPU-second."""
    bench = LearnerBench("env", train_args(ROWS["batched"], args.quick, "cpu"))
    venv, rng = bench.venv, np.random.default_rng(0)
    steps = 64 if args.quick else 512
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        mask = venv.action_masks()
        venv.step_async(np.argmax(rng.random(mask.shape) * mask, axis=1))
        venv.step_wait()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "games": venv.num_envs,
        "steps_per_s": steps * venv.num_envs / wall,
        "cpu_steps_per_s": steps * venv.num_envs / cpu,
    }


def strength(args: Args, names: list[str], out: Path) -> dict[str, Any]:
    """Each backend's first row trained for ``--strength-minutes``, then both against heuristic on the same deals."""
    from agents.registry import make_agent
    from arena import play
    from arena.ratings import Z95
    from training.main import main as train
    from uno_env import parse_rules

    runs = {}
    for backend in ("sb3", "batched"):
        name = next((n for n in names if ROWS[n]["backend"] == backend), backend)
        overrides = ROWS.get(name, {"backend": backend})
        a = train_args(
            overrides, args.quick, args.device, max_minutes=args.strength_minutes, final_eval_games=0,
            eval_every=0, checkpoint_every=0, progress=False, tensorboard=False, output_dir=str(out),
            exp_name=f"strength_{name}", **({"total_timesteps": 4096, "bc_positions": 256} if args.quick else {}),
        )  # fmt: skip
        final = train(a, "benchmarks.learner_throughput")
        runs[name] = {
            "steps": final["steps"],
            "train_seconds": final["train_seconds"],
            "total_seconds": final["total_seconds"],
        }
    rules = parse_rules("classic")
    games = 40 if args.quick else args.strength_games
    per_deal = {}
    for name in runs:
        agent = make_agent(str(out / f"strength_{name}" / "model.zip"), rules)
        result = play([agent, make_agent("heuristic", rules)], games, rules, seed=12345, duplicate=True)
        assert result.deal_wins is not None
        per_deal[name] = result.deal_wins[:, 0] / result.rotations
        lo, hi = result.ci95[0]
        runs[name].update(win_rate=float(result.win_rate[0]), ci95=[lo, hi], games=games)
    a, b = (per_deal[n] for n in runs)
    diff = b - a
    half = Z95 * float(diff.std(ddof=1)) / np.sqrt(diff.size)
    return {
        "minutes": args.strength_minutes,
        "runs": runs,
        "difference": [float(diff.mean()) - half, float(diff.mean()) + half],
    }


def measure(args: Args, argv: list[str]) -> dict[str, Any]:
    """Time the rows in interleaved runs, then the update and env figures and the strength part; the report."""
    import torch

    from training.main import update_thread_count

    torch.distributions.Distribution.set_default_validate_args(False)  # as train.py
    names = [n.strip() for n in args.rows.split(",") if n.strip()]
    unknown = [n for n in names if n not in ROWS]
    if unknown or not names:
        raise SystemExit(f"--rows: unknown {unknown}; choose from {', '.join(ROWS)}")
    benches = [LearnerBench(n, train_args(ROWS[n], args.quick, args.device)) for n in names]
    for b in benches:
        b.chunk()  # warm-up: numba compilation, first allocations
        b.rollouts = 1 if args.quick else args.rollouts
    machine = machine_info()  # holds the load average at the start
    results = interleave(benches, 1 if args.quick else args.runs, 0.0, log=lambda s: print(s, flush=True))
    rows = []
    for b, ms in zip(benches, results, strict=True):
        a = b.args
        precision = "fp32" if b.learner is None else ("bf16" if b.learner.dtype == torch.bfloat16 else "fp32")
        rows.append(
            {"row": b.name, "backend": a.backend, "precision": precision, "device": str(b.model.policy.device),
             "num_envs": a.num_envs, "n_steps": a.n_steps, "batch_size": a.batch_size, "n_epochs": a.n_epochs,
             "update_threads": update_thread_count(a) or a.torch_threads, **summarize(ms)}
        )  # fmt: skip
    for row in rows:
        add_ratio(row, rows[0])
    del benches
    from training.batched_ppo import bf16_matrix_units

    device = torch.device(args.device)
    precisions = ["fp32", "bf16"] if bf16_matrix_units(device) else ["fp32"]
    report = {
        "machine": machine,
        "command": " ".join(["python -m benchmarks.learner_throughput", *argv]),
        "args": dataclasses.asdict(args),
        "bf16_matrix_units": bf16_matrix_units(device),
        "rows": rows,
        "update": [r for p in precisions for r in update_rates(args, p)],
        "env": env_rate(args),
    }
    if args.strength_minutes:
        report["strength"] = strength(args, names, Path(args.runs_dir))
    report["load_average_at_end"] = loadavg()
    return report


def report_lines(report: dict[str, Any]) -> list[str]:
    """The Markdown report: machine, the table of medians, the predicting figures, the strength part."""
    lines = [
        "## Learner throughput: learner decisions consumed per second (rollouts and PPO updates)",
        "",
        *machine_lines(report["machine"], report["load_average_at_end"]),
        f"- command: `{report['command']}`",
        f"- bf16 matrix units on the learner's device: {'yes' if report['bf16_matrix_units'] else 'no'}",
        "- every row: train.py's defaults (2 players, classic, network (256, 256), opponents "
        "0.5*heuristic,0.5*rlcard_rule) with the settings shown",
        "",
        "| row | backend | precision | games x steps | minibatch x epochs | update threads | steps/s wall (median) "
        "| ratio | steps per CPU-s | ratio |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['row']} | {r['backend']} | {r['precision']} | {r['num_envs']} x {r['n_steps']} | "
            f"{r['batch_size']} x {r['n_epochs']} | {r['update_threads']} | {fmt_rate(r['steps_per_s'])} | "
            f"{r['ratio']:.2f}x | "
            f"{fmt_rate(r['cpu_steps_per_s'])} | {r['cpu_ratio']:.2f}x |"
        )
    lines += [
        "",
        "| update minibatch | precision | torch threads | update samples/s (one epoch) | forward samples/s |",
        "|---:|---|---|---:|---:|",
    ]
    for u in report["update"]:
        lines.append(
            f"| {u['minibatch']} | {u['precision']} | {u['threads']} | {fmt_rate(u['update_per_s'])} | "
            f"{fmt_rate(u['forward_per_s'])} |"
        )
    e = report["env"]
    lines += [
        "",
        f"The env alone ({e['games']} games, the default opponents, random legal learner actions): "
        f"{fmt_rate(e['steps_per_s'])} learner steps/s, {fmt_rate(e['cpu_steps_per_s'])} per CPU-second.",
    ]
    if "strength" in report:
        s = report["strength"]
        lines += [
            "",
            f"Strength at equal wall time ({s['minutes']:g} minutes of training each, then duplicate deals against "
            "heuristic):",
            "",
            "| row | steps trained | win rate vs heuristic | 95% CI (paired over deals) |",
            "|---|---:|---:|---|",
        ]
        for name, r in s["runs"].items():
            lo, hi = r["ci95"]
            lines.append(f"| {name} | {r['steps']:,} | {r['win_rate']:.1%} | {lo:.1%} – {hi:.1%} |")
        lo, hi = s["difference"]
        lines += ["", f"batched minus sb3, paired over the same deals: {lo:+.1%} to {hi:+.1%} (95%)."]
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = tyro.cli(Args, args=argv)
    report = measure(args, argv)
    lines = report_lines(report)
    print("\n".join(lines))
    write_report(args.results_dir, "learner_throughput", lines, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
