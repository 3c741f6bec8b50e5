"""Four-player models on the same duplicate deals: each against three heuristics and the mixed table.

    python -m lab.four_players runs/a/model.zip runs/b/model.zip pretrained-4p --deals 2000
    python -m lab.four_players heuristic greedy --quick    # smoke
    python -m lab.four_players pretrained runs/c/model.zip --num-players 2 --name two_players
    python -m lab.four_players search --tables "three heuristics" --name search_4p

Every agent (an agent spec: a saved model's path, ``pretrained-4p``, ``search``...) takes seat 0 of
the same ``--deals`` deals, each played once per seat rotation (``arena.play(duplicate=True)``),
against ``heuristic`` in the three other seats and against the mixed table
``heuristic+rlcard_rule+greedy`` (``--num-players 2``: against ``heuristic``). The table gives each
agent's win rate with its 95% interval, paired over deals, and each agent minus the first on the
same deals. Writes ``NAME.md`` and ``.json`` to ``--results-dir`` (results:
lab/results/four_players.md, two_players.md).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np
import tyro

from benchmarks._timing import write_report

TABLES = {
    4: {"three heuristics": ["heuristic"] * 3, "mixed table": ["heuristic", "rlcard_rule", "greedy"]},
    2: {"heuristic": ["heuristic"]},
}


@dataclasses.dataclass
class Args:
    """Options of ``python -m lab.four_players``."""

    agents: tyro.conf.Positional[tuple[str, ...]]
    """agent specs to compare, the first the base of the differences"""
    deals: int = 2000
    """duplicate deals per agent and table (each played 4 times, once per seat rotation)"""
    seed: int = 20261206
    """seed of the deals (the held-out deals: no training run uses it)"""
    num_players: int = 4
    """4, or 2 (against heuristic)"""
    tables: tuple[str, ...] = ()
    """the tables to play, by name (empty: every table of the player count)"""
    quick: bool = False
    """smoke run: 40 deals"""
    results_dir: str = "lab/results"
    """where NAME.md and NAME.json are written"""
    name: str = "four_players"
    """the results' file name"""


def measure(args: Args) -> dict[str, Any]:
    """Each agent's per-deal wins on each table; the win rates, intervals and paired differences."""
    from agents.registry import make_agent
    from arena import play
    from arena.ratings import Z95
    from benchmarks.engine_speed import machine_info
    from uno_env import parse_rules

    rules = parse_rules("classic")
    deals = 40 if args.quick else args.deals
    n = args.num_players
    rows: list[dict[str, Any]] = []
    for table, seats in TABLES[n].items():
        if args.tables and table not in args.tables:
            continue
        per_deal = {}
        for spec in args.agents:
            others = [make_agent(s, rules) for s in seats]
            r = play(
                [make_agent(spec, rules, num_players=n), *others], n * deals, rules, seed=args.seed, duplicate=True
            )
            assert r.deal_wins is not None
            per_deal[spec] = r.deal_wins[:, 0] / r.rotations
            lo, hi = r.ci95[0]
            rows.append({"table": table, "agent": spec, "deals": deals, "win_rate": float(r.win_rate[0]),
                         "ci95": [lo, hi]})  # fmt: skip
        base = per_deal[args.agents[0]]
        for spec in args.agents[1:]:
            diff = per_deal[spec] - base
            half = Z95 * float(diff.std(ddof=1)) / np.sqrt(diff.size)
            row = next(r for r in rows if r["table"] == table and r["agent"] == spec)
            row["minus_first"] = [float(diff.mean()) - half, float(diff.mean()) + half]
    return {"machine": machine_info(), "args": dataclasses.asdict(args), "rows": rows}


def report_lines(report: dict[str, Any]) -> list[str]:
    """The Markdown table."""
    a = report["args"]
    lines = [
        f"{a['num_players']} players, classic, seat 0 of {report['rows'][0]['deals']:,} duplicate deals "
        f"(seed {a['seed']}), every seat rotation played; chance is {1 / a['num_players']:.0%}.",
        "",
        f"| table | agent | win rate | 95% CI | minus {a['agents'][0]} (95%, paired) |",
        "|---|---|---:|---|---|",
    ]
    for r in report["rows"]:
        lo, hi = r["ci95"]
        diff = f"{r['minus_first'][0]:+.1%} to {r['minus_first'][1]:+.1%}" if "minus_first" in r else ""
        lines.append(f"| {r['table']} | `{r['agent']}` | {r['win_rate']:.1%} | {lo:.1%} – {hi:.1%} | {diff} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(Args, args=argv)
    if not args.agents or args.deals < 2:
        raise SystemExit(f"give at least one agent spec and --deals >= 2, got {args.agents!r}, {args.deals}")
    if args.num_players not in TABLES or not set(args.tables) <= set(TABLES[args.num_players]):
        raise SystemExit(
            f"--num-players must be one of {sorted(TABLES)} and --tables among its tables "
            f"{ {n: list(t) for n, t in TABLES.items()} }, got {args.num_players}, {list(args.tables)}"
        )
    report = measure(args)
    lines = report_lines(report)
    print("\n".join(lines))
    write_report(args.results_dir, args.name, lines, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
