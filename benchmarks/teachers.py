"""What a warm-start teacher is worth: a fresh policy cloned on each teacher's positions, then played.

    python -m benchmarks.teachers --teachers heuristic,search:256,search:256@uniform --positions 100000
    python -m benchmarks.teachers --quick      # smoke: tiny sizes, numbers not meaningful

For each teacher (an ``agents.registry`` spec): ``training.expert.label_positions`` labels
``--positions`` positions in games against ``--opponents`` (the same seed for every teacher),
``training.expert.clone`` fits a new policy of ``train.py``'s default network to them with
``train.py``'s cloning settings, and the clone (``agents.ppo.PPOAgent``, deterministic) plays each
of ``--eval-opponents`` on duplicate deals (``arena.play(duplicate=True)``: the same deals
for every clone, intervals paired over deals). No PPO: the table isolates what the teacher gives
the warm start of ``train.py --bc-teacher``. A table of labelling CPU time, held-out agreement
with the teacher and the clone's win rates, with date, machine and load.
"""

from __future__ import annotations

import dataclasses
import time
from types import SimpleNamespace

import tyro

from benchmarks._timing import loadavg
from benchmarks.engine import machine_info
from benchmarks.time_to_skill import train_defaults


@dataclasses.dataclass
class Args:
    teachers: str = "heuristic,search:256,search:256@uniform"
    """comma-separated agents.registry specs of the teachers to compare"""
    positions: int = 100_000
    """positions each teacher labels"""
    opponents: str = "rlcard_rule,heuristic"
    """opponents of the labelling games (comma-separated specs)"""
    eval_opponents: str = "heuristic,rlcard_rule"
    """what each clone plays (comma-separated specs)"""
    eval_games: int = 4000
    """games per evaluation opponent on duplicate deals (a multiple of 2)"""
    seed: int = 1
    """seed of the labelling games, the cloning and the evaluation deals"""
    quick: bool = False
    """smoke run: 256 positions, one cloning pass, 20 games"""


def main(argv: list[str] | None = None) -> list[dict]:
    args = tyro.cli(Args, args=argv, description=__doc__.splitlines()[0])
    import torch

    from agents.ppo import PPOAgent
    from agents.registry import parse_list
    from arena import play
    from training.evaluation import parse_specs
    from training.expert import clone, label_positions
    from training.opponents import seat_agents
    from training.sb3 import LinearSchedule, make_model
    from uno_env import parse_rules
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    d = SimpleNamespace(**train_defaults())
    positions, games, epochs = (256, 20, 1) if args.quick else (args.positions, args.eval_games, d.bc_epochs)
    if games % 2:
        raise SystemExit(f"--eval-games must be a multiple of 2 (duplicate deals), got {games}")
    rules = parse_rules(d.rules)
    teachers = parse_list(args.teachers)
    opponents = parse_specs(args.opponents, rules)
    eval_specs = parse_specs(args.eval_opponents, rules)
    torch.set_num_threads(1)
    load0 = loadavg()
    rows = []
    for teacher in teachers:
        c = time.process_time()
        data = label_positions(teacher, opponents, rules, 2, positions, args.seed)
        label_cpu = time.process_time() - c
        torch.manual_seed(args.seed)
        venv = UnoSB3VecEnv(1, 2, rules, seed=args.seed)
        model = make_model(d, venv, LinearSchedule(d.learning_rate, d.total_timesteps, d.anneal_lr))
        fit = clone(model.policy, data, epochs, d.bc_batch_size, d.learning_rate, d.vf_coef, seed=args.seed)
        agent = PPOAgent(model.policy, deterministic=True, name=f"clone of {teacher}")
        row = {"teacher": teacher, "label_cpu_s": label_cpu, "agreement": fit["agreement_after"], "vs": {}}
        for spec in eval_specs:
            r = play([agent, *seat_agents(spec, rules, 2)], games, rules, args.seed, duplicate=True)
            row["vs"][spec] = (float(r.win_rate[0]), *map(float, r.ci95[0]))
        rows.append(row)
        print(f"{teacher}: {row}", flush=True)
    m = machine_info()
    print(
        f"\n{m['date']}, git {m['git_commit']}; {m['cpu_model']}, {m['usable_cores']} cores; load average {load0} at the start, {loadavg()} at the end"
    )
    print(
        f"{positions:,} positions per teacher against {args.opponents}; clones on {games:,} games (duplicate deals)\n"
    )
    print(
        "| teacher | labelling CPU s | held-out agreement | "
        + " | ".join(f"clone vs {s} [95% CI]" for s in eval_specs)
        + " |"
    )
    print("|---|---:|---:|" + "---|" * len(eval_specs))
    for row in rows:
        cells = " | ".join(f"{w:.1%} [{lo:.1%}, {hi:.1%}]" for w, lo, hi in row["vs"].values())
        print(f"| {row['teacher']} | {row['label_cpu_s']:.0f} | {row['agreement']:.1%} | {cells} |")
    return rows


if __name__ == "__main__":
    main()
