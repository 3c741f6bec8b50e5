"""SearchAgent against HeuristicAgent: win rate with its 95% CI, and decision times.

    python benchmarks/search_agent.py [--games 2000] [--chunk-games 500] [--rollouts N] [--seed 0] [--quick]

2 players, preset classic, seats rotated, played by ``arena.play_match(engine_access=True)``
(the search agent gets the engine and the game index, ``SearchAgent.act_in``). Decision times
are measured around every ``act_in`` call, wall clock and process CPU time, for the searched
decisions (two or more legal moves) and for all of them; the machine's load average is printed
with them, because other processes on a shared machine stretch the wall times. The games are
played in seeded chunks and the figures so far are printed after each one. Nothing is
hard-coded: every number is measured on each run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import tyro

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from a checkout
from agents import HeuristicAgent, SearchAgent  # noqa: E402
from arena import derive_seed, play_match, wilson_interval  # noqa: E402
from uno_env import UnoRules  # noqa: E402


class TimedSearch:
    """A SearchAgent whose every ``act_in`` call is timed (wall and CPU)."""

    def __init__(self, agent: SearchAgent) -> None:
        self.agent = agent
        self.name = agent.name
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.searched: list[bool] = []

    def act_in(self, engine, i, rng):
        wall, cpu = time.perf_counter(), time.process_time()
        a = self.agent.act_in(engine, i, rng)
        self.cpu.append(time.process_time() - cpu)
        self.wall.append(time.perf_counter() - wall)
        self.searched.append(self.agent.last_searched)
        return a

    def act(self, observation, action_mask, rng):
        return self.agent.act(observation, action_mask, rng)


def _ms(x, q):
    return float(np.percentile(np.asarray(x) * 1e3, q)) if len(x) else float("nan")


def figures_of(games: int, wins: int, truncated: int, timed: TimedSearch, rollouts: int, cpu: float,
               wall: float, loads: list[float]) -> dict:
    """The measured figures so far (every number comes from the games played)."""
    searched = np.asarray(timed.searched, bool)
    wall_s = np.asarray(timed.wall)[searched]
    cpu_s = np.asarray(timed.cpu)[searched]
    lo, hi = wilson_interval(wins, games)
    return {
        "games": games,
        "rollouts": rollouts,
        "wins": wins,
        "win_rate": wins / max(games, 1),
        "ci95": [lo, hi],
        "truncated": truncated,
        "decisions": len(timed.wall),
        "searched_decisions": int(wall_s.size),
        "searched_wall_ms_median": _ms(wall_s, 50),
        "searched_wall_ms_p90": _ms(wall_s, 90),
        "searched_wall_ms_p95": _ms(wall_s, 95),
        "searched_cpu_ms_median": _ms(cpu_s, 50),
        "searched_cpu_ms_p90": _ms(cpu_s, 90),
        "searched_cpu_ms_p95": _ms(cpu_s, 95),
        "all_wall_ms_median": _ms(timed.wall, 50),
        "all_wall_ms_p95": _ms(timed.wall, 95),
        "all_cpu_ms_median": _ms(timed.cpu, 50),
        "seconds": wall,
        "process_cpu_seconds": cpu,
        "loadavg_1min_min": min(loads),
        "loadavg_1min_max": max(loads),
        "loadavg_1min_mean": float(np.mean(loads)),
        "cpus": os.cpu_count(),
    }


@dataclasses.dataclass
class Args:
    games: int = 2000
    """games (seats rotated)"""
    chunk_games: int = 500
    """games per chunk: chunk c is seeded from (seed, c); figures are printed (and the JSON rewritten) after every
    chunk, so an interrupted run keeps what it measured"""
    rollouts: int | None = None
    """SearchAgent budget (default: its own)"""
    seed: int = 0
    """seed of the games"""
    batch_size: int = 256
    """games played side by side"""
    quick: bool = False
    """40 games with a small budget (smoke run)"""
    json: str | None = None
    """also write the figures to this JSON file"""


def main() -> None:
    """Play the match chunk by chunk and print the table row (and JSON with --json)."""
    args = tyro.cli(Args, description=__doc__.splitlines()[0])
    rules = UnoRules.preset("classic")
    games = 40 if args.quick else args.games
    kwargs = {"rollouts": 64} if args.quick else ({} if args.rollouts is None else {"rollouts": args.rollouts})
    search = SearchAgent(rules, **kwargs)
    # Warm the numba caches outside the measurement.
    play_match([SearchAgent(rules, rollouts=8), HeuristicAgent(rules)], 2, 2, rules, seed=args.seed + 1, engine_access=True)
    timed = TimedSearch(search)
    print(f"2 players, preset classic, {games} games in chunks of {args.chunk_games}, seats rotated, seed {args.seed}, "
          f"SearchAgent(rollouts={search.rollouts}) vs HeuristicAgent; {os.cpu_count()} CPUs\n", flush=True)
    loads = [os.getloadavg()[0]]
    wins = truncated = played = 0
    cpu = wall = 0.0
    for c, start in enumerate(range(0, games, args.chunk_games)):
        n = min(args.chunk_games, games - start)
        cpu0 = time.process_time()
        r = play_match([timed, HeuristicAgent(rules)], n, 2, rules, seed=args.seed if c == 0 else derive_seed(args.seed, c),
                       batch_size=args.batch_size, engine_access=True)
        cpu += time.process_time() - cpu0
        wall += r.seconds
        loads.append(os.getloadavg()[0])
        wins, truncated, played = wins + int(r.wins[0]), truncated + r.no_winner, played + n
        f = figures_of(played, wins, truncated, timed, search.rollouts, cpu, wall, loads)
        print(f"after {played} games: {wins} wins = {f['win_rate']:.1%} (95% CI {f['ci95'][0]:.1%} – {f['ci95'][1]:.1%}); "
              f"searched decision median {f['searched_wall_ms_median']:.1f} ms wall / {f['searched_cpu_ms_median']:.1f} ms "
              f"CPU; load {loads[-1]:.1f}", flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(f, fh, indent=1)
    lo, hi = f["ci95"]
    print(f"\nmachine: {os.cpu_count()} CPUs, 1-minute load average {min(loads):.1f}–{max(loads):.1f} "
          f"(mean {np.mean(loads):.1f}); {wall:.0f} s wall, {cpu:.0f} s CPU\n")
    print("| games | search wins | win rate | 95% CI | searched decisions | median / p90 wall ms | "
          "median / p90 CPU ms | median wall ms, all decisions |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {games} | {f['wins']} | {f['win_rate']:.1%} | {lo:.1%} – {hi:.1%} | {f['searched_decisions']} of "
          f"{f['decisions']} | {f['searched_wall_ms_median']:.1f} / {f['searched_wall_ms_p90']:.1f} | "
          f"{f['searched_cpu_ms_median']:.1f} / {f['searched_cpu_ms_p90']:.1f} | {f['all_wall_ms_median']:.1f} |")


if __name__ == "__main__":
    main()
