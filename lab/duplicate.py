"""Games needed for a ±1 point 95% interval on a win rate: independent games vs duplicate deals.

    python -m lab.duplicate                       # the table of lab/results/duplicate.md
    python -m lab.duplicate --games 400 --pairs heuristic/rlcard_rule

Method: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time

import tyro

from agents.model_card import machine
from agents.registry import make_agent
from arena import play
from arena.ratings import Z95
from uno_env import parse_rules


@dataclasses.dataclass
class Args:
    pairs: tuple[str, ...] = ("heuristic/rlcard_rule", "pretrained/heuristic", "search/heuristic")
    """pairings A/B (agents.registry specs): A is rated against copies of B"""
    num_players: tuple[int, ...] = (2, 4)
    """table sizes"""
    games: int = 4000
    """games per pairing, table size and mode"""
    search_games: int = 400
    """games instead of --games when A or B is a search agent (each decision costs milliseconds)"""
    seed: int = 0
    """seed of both samples"""
    json: str = ""
    """also write the rows to this JSON file"""


def _for_table(spec: str, players: int) -> str:
    """``pretrained`` names the shipped model of the table size (``pretrained-4p`` at 4 players)."""
    return "pretrained-4p" if spec == "pretrained" and players == 4 else spec


def _row(a: str, b: str, players: int, games: int, seed: int) -> dict[str, float | int | str]:
    rules = parse_rules("classic")
    a, b = (_for_table(x, players) for x in (a, b))
    agents = [make_agent(a, rules)] + [make_agent(b, rules) for _ in range(players - 1)]
    games -= games % players
    t0 = time.process_time()
    ind = play(agents, games, rules, seed)
    t1 = time.process_time()
    dup = play(agents, games, rules, seed, duplicate=True)
    t2 = time.process_time()
    p = float(ind.win_rate[0])
    assert dup.deal_wins is not None
    deal_scores = dup.deal_wins[:, 0] / players
    var_game = p * (1 - p)
    var_deal = float(deal_scores.var(ddof=1))
    need_ind = (Z95 / 0.01) ** 2 * var_game
    need_dup = (Z95 / 0.01) ** 2 * var_deal * players
    return {
        "pair": f"{a} vs {b}",
        "players": players,
        "games": games,
        "win_rate_independent": p,
        "win_rate_duplicate": float(dup.win_rate[0]),
        "games_for_1pt_independent": math.ceil(need_ind),
        "games_for_1pt_duplicate": math.ceil(need_dup),
        "ratio": need_ind / need_dup if need_dup > 0 else math.inf,
        "cpu_seconds_independent": t1 - t0,
        "cpu_seconds_duplicate": t2 - t1,
    }


def main(args: Args) -> list[dict[str, float | int | str]]:
    """Measure every row and print the table."""
    rows = []
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {machine()}, load {os.getloadavg()[0]:.1f} at start")
    print()
    print(
        "| pairing | players | games per mode | win rate (independent / duplicate) | games for ±1 pt, "
        "independent | games for ±1 pt, duplicate | fewer games × | CPU s (ind / dup) |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---|")
    for pair in args.pairs:
        a, b = pair.split("/")
        search = any(x.split(":")[0] in ("search", "ismcts", "flatmc") for x in (a, b))
        for players in args.num_players:
            r = _row(a, b, players, args.search_games if search else args.games, args.seed)
            rows.append(r)
            print(
                f"| {r['pair']} | {players} | {r['games']:,} | {r['win_rate_independent']:.1%} / "
                f"{r['win_rate_duplicate']:.1%} | {r['games_for_1pt_independent']:,} | "
                f"{r['games_for_1pt_duplicate']:,} | {r['ratio']:.2f} | "
                f"{r['cpu_seconds_independent']:.0f} / {r['cpu_seconds_duplicate']:.0f} |",
                flush=True,
            )
    print(f"\nload {os.getloadavg()[0]:.1f} at the end")
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main(tyro.cli(Args, description=__doc__))
