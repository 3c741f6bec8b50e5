#!/usr/bin/env python
"""Soak run: random play over every preset and 2-10 players, checking the engine's invariants, with memory.

    python -m benchmarks.soak                    # 100 million steps (minutes)
    python -m benchmarks.soak --quick            # CI smoke: a few seconds
    python -m benchmarks.soak --steps 20000000 --json soak.json

Exits with status 1 if any invariant was violated.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import tyro

from benchmarks.engine_speed import machine_info
from uno_env import Engine, UnoRules, sample_legal
from uno_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS

# Option mixes on top of the presets, so that the options the presets leave off run too.
MIXES: dict[str, dict[str, Any]] = {
    "explicit_uno_doubles_penalty": dict(
        uno_call="explicit", uno_penalty=1, allow_doubles=True, illegal_action="penalty"
    ),
    "elimination_match_turn_limit": dict(scoring="elimination", episode="match", target_points=200, max_turns=400),
    "swap_discard_stacking": dict(
        deck="swap_hands",
        custom_wild_rule="opponents_discard_wilds",
        stack_draw_two=True,
        stack_draw_four=True,
        challenge=False,
    ),
    "shuffle_until_color_strict": dict(
        deck="shuffle_hands",
        custom_wild_rule="next_draws_until_color",
        allow_voluntary_draw=False,
        wd4_bluffing=False,
        forbid_last_action_card=True,
        end_on_empty_deck=True,
        wild_first_card="redraw",
    ),
    "fewest_cards_open_stuck": dict(
        max_turns=300,
        turn_limit_rule="fewest_cards_wins",
        open_hands=True,
        deck="shuffle_hands",
        custom_wild_rule="next_draws_three_if_stuck",
    ),
    "custom_play_again_redraw_special": dict(
        deck="swap_hands",
        custom_wild_rule="play_again",
        custom_wild_count=2,
        first_card_rule="redraw_special",
        wd4_wilds_count_as_match=True,
    ),
    "teams_match": dict(teams=True, episode="match", target_points=300, uno_call="explicit"),
}


@dataclasses.dataclass
class Args:
    steps: int | None = None
    """Game steps in total (batch size x Engine.step calls), shared evenly by the configurations
    (default 100,000,000; 300,000 with --quick)."""
    batch: int | None = None
    """Games per engine, one engine per configuration (default 1024; 64 with --quick)."""
    check_every: int = 64
    """Engine steps between two checks of the invariants on the whole batch."""
    mixes: bool = True
    """Also run the option mixes (MIXES) besides the four presets (--no-mixes: the presets only)."""
    seed: int = 0
    """Seed of the games and of the random players."""
    quick: bool = False
    """CI smoke: 300 thousand steps, batch 64 (a few seconds)."""
    json: str | None = None
    """Also write the results as JSON to this path."""


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` from the command line, with the defaults of ``--quick`` or of a full run filled in."""
    args = tyro.cli(Args, args=argv, description=__doc__)
    if args.steps is None:
        args.steps = 300_000 if args.quick else 100_000_000
    if args.batch is None:
        args.batch = 64 if args.quick else 1024
    if args.steps < 1 or args.batch < 1 or args.check_every < 1:
        raise SystemExit("--steps, --batch and --check-every must be positive")
    return args


def rss_mb() -> float:
    """Resident set size of this process, in MB."""
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        pass
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # no /proc: the peak is the best we have


def peak_rss_mb() -> float:
    """Peak resident set size in MB (VmHWM where /proc has it; getrusage updates lazily)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def configurations(mixes: bool) -> list[tuple[str, UnoRules, int]]:
    every = range(MIN_PLAYERS, MAX_PLAYERS + 1)
    out = [(name, UnoRules.preset(name), n) for name in PRESETS for n in every]
    if mixes:
        for name, options in MIXES.items():
            players = range(4, MAX_PLAYERS + 1, 2) if options.get("teams") else every
            out += [(name, UnoRules.preset("classic", **options), n) for n in players]
    return out


def soak_one(rules: UnoRules, num_players: int, engine_steps: int, args: Args, seed: int) -> dict[str, Any]:
    """Random play in one engine; counts and the first few violations found."""
    engine = Engine(args.batch, num_players, rules, seed=seed, autoreset=True)
    rng = np.random.default_rng(seed)
    terminated = truncated = checks = 0
    violations: list[str] = []
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(1, engine_steps + 1):
        res = engine.step(sample_legal(engine.legal_mask, rng))
        if res.terminated.any():
            rew = res.rewards[res.terminated]
            terminated += len(rew)
            ok = np.isin(rew, (1.0, -1.0)).all(axis=1) & (rew == 1.0).any(axis=1)
            for row in np.flatnonzero(~ok):
                violations.append(f"rewards {rew[row].tolist()} at an episode end")
        if res.truncated.any():
            truncated += int(res.truncated.sum())
            if res.rewards[res.truncated].any():
                violations.append("non-zero rewards on a truncated episode")
        if k % args.check_every == 0 or k == engine_steps:
            checks += 1
            violations += [f"game {b}: {msg}" for b, msg in engine.check_invariants()]
            if not res.legal_mask.any(axis=1).all():
                violations.append("a game with no legal action after autoreset")
    return {
        "steps": engine_steps * args.batch,
        "terminated": terminated,
        "truncated": truncated,
        "checks": checks,
        "violations": len(violations),
        "first_violations": violations[:5],
        "wall_s": time.perf_counter() - t0,
        "cpu_s": time.process_time() - c0,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configs = configurations(args.mixes)
    engine_steps = max(1, round(args.steps / (args.batch * len(configs))))
    info = machine_info()
    load_start = os.getloadavg()
    rss_start = rss_mb()
    print(
        f"# Soak: {len(configs)} configurations x {engine_steps} engine steps x batch {args.batch} "
        f"= {engine_steps * args.batch * len(configs):,} game steps (commit {info['git_commit']})\n"
    )
    print(
        "| configuration | players | game steps | terminated | truncated | invariant checks | violations | wall s | CPU s | RSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows, rss_first = [], None
    t0, c0 = time.perf_counter(), time.process_time()
    for k, (name, rules, n) in enumerate(configs):
        row = {"configuration": name, "players": n, **soak_one(rules, n, engine_steps, args, args.seed + k)}
        row["rss_mb"] = rss_mb()
        rss_first = row["rss_mb"] if rss_first is None else rss_first
        rows.append(row)
        print(
            f"| {name} | {n} | {row['steps']:,} | {row['terminated']:,} | {row['truncated']:,} | {row['checks']:,} | "
            f"{row['violations']} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['rss_mb']:.0f} |",
            flush=True,
        )
        for v in row["first_violations"]:
            print(f"  violation: {v}", file=sys.stderr)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    total = {
        "steps": sum(r["steps"] for r in rows),
        "games": sum(r["terminated"] + r["truncated"] for r in rows),
        "terminated": sum(r["terminated"] for r in rows),
        "truncated": sum(r["truncated"] for r in rows),
        "invariant_checks": sum(r["checks"] for r in rows),
        "games_checked": sum(r["checks"] for r in rows) * args.batch,
        "violations": sum(r["violations"] for r in rows),
        "wall_s": wall,
        "cpu_s": cpu,
        "steps_per_cpu_s": sum(r["steps"] for r in rows) / cpu,
        "rss_mb_after_imports": rss_start,
        "rss_mb_after_first_configuration": rss_first,
        "rss_mb_end": rss_mb(),
        "peak_rss_mb": peak_rss_mb(),
        "load_average_start": load_start,
        "load_average_end": os.getloadavg(),
    }
    print("\n| total | |\n|---|---|")
    print(f"| game steps | {total['steps']:,} |")
    print(
        f"| games finished | {total['games']:,} ({total['terminated']:,} terminated, {total['truncated']:,} truncated) |"
    )
    print(f"| invariant checks | {total['invariant_checks']:,} batch checks ({total['games_checked']:,} game states) |")
    print(f"| violations | {total['violations']} |")
    print(
        f"| time | {wall:.0f} s wall, {cpu:.0f} s CPU ({total['steps_per_cpu_s'] / 1e6:.2f} M steps per CPU second) |"
    )
    print(
        f"| memory (RSS) | {rss_start:.0f} MB after imports, {rss_first:.0f} MB after the first configuration, "
        f"{total['rss_mb_end']:.0f} MB at the end; peak {total['peak_rss_mb']:.0f} MB |"
    )
    print(
        f"| load average | {' / '.join(f'{x:.1f}' for x in load_start)} at the start, "
        f"{' / '.join(f'{x:.1f}' for x in total['load_average_end'])} at the end ({info['cpu_count']} CPUs) |"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"args": dataclasses.asdict(args), "machine": info, "total": total, "rows": rows}, indent=1)
        )
    return 1 if total["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
