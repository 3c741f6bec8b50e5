"""Search agents against HeuristicAgent: win rate with its 95% CI and decision times, one row per agent.

    python -m lab.search_agent --agents ismcts:2048 flatmc:2900 --games 2000
    python -m lab.search_agent --agents flatmc:1024 flatmc:1024@peek --games 1000 --duplicate
    python -m lab.search_agent --quick

Rows and method: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import time

import numpy as np
import tyro

from agents import make_agent
from agents.model_card import machine
from agents.registry import parse_table
from arena import derive_seed, play, wilson_interval
from arena.ratings import Z95, paired_interval
from uno_env import UnoRules
from uno_env.policy import history_form_of, history_length_of, uses_engine


class TimedSearch:
    """An agent whose every ``act_in`` call is timed (wall and CPU)."""

    def __init__(self, agent) -> None:
        self.agent = agent
        self.name = agent.name
        self.history_length = history_length_of(agent)  # the table keeps the history it reads
        self.history_form = history_form_of(agent)  # and gives it in the form it reads
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.searched: list[bool] = []
        if uses_engine(agent):
            self.act_in = self._act_in

    def _act_in(self, engine, i, rng):
        wall, cpu = time.perf_counter(), time.process_time()
        a = self.agent.act_in(engine, i, rng)
        self.cpu.append(time.process_time() - cpu)
        self.wall.append(time.perf_counter() - wall)
        self.searched.append(bool(getattr(self.agent, "last_searched", True)))
        return a

    def act(self, observation, action_mask, rng):
        return self.agent.act(observation, action_mask, rng)


def _ms(x, q):
    return float(np.percentile(np.asarray(x) * 1e3, q)) if len(x) else float("nan")


def figures_of(
    spec: str,
    num_players: int,
    games: int,
    wins: int,
    truncated: int,
    timed: TimedSearch,
    cpu: float,
    wall: float,
    loads: list[float],
    deal_scores: list[float] | None = None,
    opponents: list[TimedSearch] = (),
) -> dict:
    """The measured figures of one agent so far (every number comes from the games played);
    ``deal_scores`` (duplicate deals): the agent's share of wins in each deal."""
    searched = np.asarray(timed.searched, bool)
    wall_s = np.asarray(timed.wall)[searched] if searched.size else np.zeros(0)
    cpu_s = np.asarray(timed.cpu)[searched] if searched.size else np.zeros(0)
    lo, hi = wilson_interval(wins, games) if deal_scores is None else paired_interval(np.asarray(deal_scores))
    opp_cpu = [c for o in opponents for c, s in zip(o.cpu, o.searched, strict=True) if s]
    return {
        "agent": spec,
        "num_players": num_players,
        "games": games,
        "wins": wins,
        "win_rate": wins / max(games, 1),
        "baseline": 1.0 / num_players,
        "ci95": [lo, hi],
        "truncated": truncated,
        "decisions": len(timed.wall),
        "searched_decisions": int(wall_s.size),
        "searched_wall_ms_median": _ms(wall_s, 50),
        "searched_wall_ms_p90": _ms(wall_s, 90),
        "searched_cpu_ms_median": _ms(cpu_s, 50),
        "searched_cpu_ms_p90": _ms(cpu_s, 90),
        "all_wall_ms_median": _ms(timed.wall, 50),
        "seconds": wall,
        "process_cpu_seconds": cpu,
        "loadavg_1min_min": min(loads),
        "loadavg_1min_max": max(loads),
        "loadavg_1min_mean": float(np.mean(loads)),
        "duplicate": deal_scores is not None,
        "deal_scores": deal_scores,
        "opponent_searched_cpu_ms_median": _ms(opp_cpu, 50),
    }


def paired_difference(a: list[float], b: list[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean of the per-deal differences ``a - b`` (the same deals) and its 95% interval."""
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    half = z * float(d.std(ddof=1)) / np.sqrt(d.size) if d.size > 1 else 1.0
    return float(d.mean()), float(d.mean()) - half, float(d.mean()) + half


@dataclasses.dataclass
class Args:
    agents: tuple[str, ...] = ("ismcts:2048", "flatmc:2900")
    """agents.registry specs to compare, one table row each (give them equal time: see the module docs)"""
    opponent: str = "heuristic"
    """the agents.registry spec of the other seats (num_players - 1 copies), or a mixed table, one spec per other
    seat (heuristic+rlcard_rule+greedy)"""
    num_players: int = 2
    """players per game: the agent and num_players - 1 opponents"""
    games: int = 2000
    """games per agent (seats rotated)"""
    chunk_games: int = 500
    """games per chunk: chunk c is seeded from (seed, c); figures are printed (and the JSON rewritten) after every
    chunk, so an interrupted run keeps what it measured"""
    seed: int = 0
    """seed of the games (the same games for every agent)"""
    batch_size: int = 256
    """games played side by side"""
    duplicate: bool = False
    """duplicate deals: every deal once per seat rotation, intervals paired over deals (games and chunk_games must
    be multiples of num_players)"""
    quick: bool = False
    """40 games of flatmc:64 and ismcts:64 (smoke run)"""
    json: str | None = None
    """also write the figures (a list, one entry per agent) to this JSON file"""


class AgentRun:
    """One agent's games so far: its timed agent and opponents, its counts and its figures."""

    def __init__(self, spec: str, args: Args, rules: UnoRules) -> None:
        self.spec, self.args, self.rules = spec, args, rules
        self.timed = TimedSearch(make_agent(spec, rules))
        self.opponents = [TimedSearch(make_agent(o, rules)) for o in opponent_specs(args)]
        self.loads = [os.getloadavg()[0]]
        self.deal_scores: list[float] | None = [] if args.duplicate else None
        self.wins = self.truncated = self.played = 0
        self.cpu = self.wall = 0.0
        self.figures: dict = {}

    def play_chunk(self, c: int, n: int) -> dict:
        """Play chunk ``c`` (``n`` games, seeded from (seed, c)) and print the figures so far."""
        args = self.args
        cpu0 = time.process_time()
        r = play(
            [self.timed, *self.opponents],
            n,
            self.rules,
            args.seed if c == 0 else derive_seed(args.seed, c),
            batch_size=args.batch_size,
            engine_access=True,
            duplicate=args.duplicate,
        )
        self.cpu += time.process_time() - cpu0
        if self.deal_scores is not None and r.deal_wins is not None:
            self.deal_scores += (r.deal_wins[:, 0] / args.num_players).tolist()
        self.wall += r.seconds
        self.loads.append(os.getloadavg()[0])
        self.wins, self.truncated = self.wins + int(r.wins[0]), self.truncated + r.truncated
        self.played += n
        f = self.figures = figures_of(
            self.spec,
            args.num_players,
            self.played,
            self.wins,
            self.truncated,
            self.timed,
            self.cpu,
            self.wall,
            self.loads,
            self.deal_scores,
            self.opponents,
        )
        print(
            f"{self.spec}: after {self.played} games {self.wins} wins = {f['win_rate']:.1%} (95% CI {f['ci95'][0]:.1%} – "
            f"{f['ci95'][1]:.1%}); searched decision median {f['searched_wall_ms_median']:.1f} ms wall / "
            f"{f['searched_cpu_ms_median']:.1f} ms CPU; load {self.loads[-1]:.1f}",
            flush=True,
        )
        return f


def run_agents(specs: tuple[str, ...], args: Args, rules: UnoRules, games: int) -> list[dict]:
    """Play every agent's games chunk by chunk, every agent's chunk c before any chunk c + 1 (so
    that an interrupted run still has paired figures), printing the figures so far and the
    paired differences from the first agent, and writing every row to --json after each chunk."""
    runs = [AgentRun(spec, args, rules) for spec in specs]
    for c, start in enumerate(range(0, games, args.chunk_games)):
        n = min(args.chunk_games, games - start)
        for run in runs:
            run.play_chunk(c, n)
        if args.duplicate and len(runs) > 1:
            for run in runs[1:]:
                d, lo, hi = paired_difference(run.deal_scores, runs[0].deal_scores)
                print(f"  {run.spec} minus {runs[0].spec}, paired so far: {d:+.1%} ({lo:+.1%} – {hi:+.1%})", flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump([run.figures for run in runs], fh, indent=1)
    return [run.figures for run in runs]


def opponent_specs(args: Args) -> list[str]:
    """The spec of every other seat: ``--opponent`` once per seat, or its mixed table (checked)."""
    seats = parse_table(args.opponent)
    if len(seats) == 1:
        return seats * (args.num_players - 1)
    if len(seats) != args.num_players - 1:
        raise ValueError(
            f"--opponent {args.opponent!r} names {len(seats)} seats; a mixed table names one per other seat "
            f"({args.num_players - 1} at --num-players {args.num_players})"
        )
    return seats


def main() -> None:
    """Play every agent's match and print the comparison table (and JSON with --json)."""
    args = tyro.cli(Args, description=__doc__)
    if args.num_players < 2:
        raise SystemExit(f"--num-players must be 2 or more, got {args.num_players}")
    if args.duplicate and (args.games % args.num_players or args.chunk_games % args.num_players):
        raise SystemExit(
            f"--duplicate plays every deal once per seat rotation: --games and --chunk-games must be multiples of "
            f"--num-players ({args.num_players}), got {args.games} and {args.chunk_games}"
        )
    rules = UnoRules.preset("classic")
    games = 40 if args.quick else args.games
    specs = ("flatmc:64", "ismcts:64") if args.quick else args.agents
    try:  # a bad spec fails here, before any game, with the registry's message
        for spec in (*specs, *opponent_specs(args)):
            make_agent(spec, rules)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    # Warm the numba caches outside the measurement.
    for spec in ("flatmc:8", "ismcts:8"):
        play([make_agent(spec, rules), make_agent("heuristic", rules)], 2, rules, args.seed + 1, engine_access=True)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"{when}; {args.num_players} players, preset classic, {games} games per agent in chunks of "
        f"{args.chunk_games}, seats rotated{', duplicate deals' if args.duplicate else ''}, seed {args.seed}, against "
        f"{args.opponent}; {machine()}\n",
        flush=True,
    )
    rows = run_agents(specs, args, rules, games)
    loads = [x for f in rows for x in (f["loadavg_1min_min"], f["loadavg_1min_max"])]
    print(
        f"\nmachine: {os.cpu_count()} CPUs, 1-minute load average {min(loads):.1f}–{max(loads):.1f} during the runs\n"
    )
    ci = "paired 95% CI" if args.duplicate else "95% CI"
    extra = f" | minus {rows[0]['agent']}, paired" if args.duplicate and len(rows) > 1 else ""
    opp = not np.isnan(rows[0]["opponent_searched_cpu_ms_median"])
    print(
        f"| agent | games | wins | win rate (baseline {1 / args.num_players:.0%}) | {ci}{extra} | searched decisions | "
        f"median / p90 CPU ms |{' opponent median CPU ms |' if opp else ''} median / p90 wall ms | load |"
    )
    print("|---" * (9 + bool(extra) + opp) + "|")
    for f in rows:
        lo, hi = f["ci95"]
        diff, opp_ms = "", f" {f['opponent_searched_cpu_ms_median']:.1f} |" if opp else ""
        if extra:
            d, dlo, dhi = paired_difference(f["deal_scores"], rows[0]["deal_scores"])
            diff = f" | {d:+.1%} ({dlo:+.1%} – {dhi:+.1%})" if f is not rows[0] else " | —"
        print(
            f"| {f['agent']} | {f['games']} | {f['wins']} | {f['win_rate']:.1%} | {lo:.1%} – {hi:.1%}{diff} | "
            f"{f['searched_decisions']} of {f['decisions']} | {f['searched_cpu_ms_median']:.1f} / "
            f"{f['searched_cpu_ms_p90']:.1f} |{opp_ms} "
            f"{f['searched_wall_ms_median']:.1f} / {f['searched_wall_ms_p90']:.1f} | "
            f"{f['loadavg_1min_min']:.1f}–{f['loadavg_1min_max']:.1f} |"
        )


if __name__ == "__main__":
    main()
