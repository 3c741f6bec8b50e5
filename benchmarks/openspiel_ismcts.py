"""OpenSpiel's ISMCTS bot on ``python_uno`` against our agents, at equal time per decision.

    python -m benchmarks.openspiel_ismcts [--games 100] [--time-ms 20] [--opponents search heuristic]
    python -m benchmarks.openspiel_ismcts --quick

2 players, classic rules, seats rotated (the bot sits at seat ``k % 2`` in game k), the same
deals for every opponent (the game's ``seed``). The bot is ``open_spiel.python.algorithms.ismcts``
with a random-rollout evaluator, given ``--time-ms`` of CPU per decision: it runs simulations
until the time is spent (at least two: the first only expands the root). ``search`` gets the same budget (``search:<T>ms``);
``heuristic`` spends what it needs. Reports the bot's win rate with its 95% Wilson interval,
and per side the median CPU milliseconds per decision (decisions with two or more legal moves)
and the bot's median simulations per decision. Writes ``OUT.md`` and ``OUT.json``.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import tyro
from open_spiel.python.algorithms import ismcts, mcts

import uno_env.openspiel_game  # noqa: F401  (registers python_uno)
from agents import make_agent
from arena import wilson_interval
from uno_env.table import ask_one


@dataclasses.dataclass
class Args:
    games: int = 100
    """Games per opponent (seats rotated)."""
    time_ms: float = 20.0
    """CPU milliseconds per decision for the bot and for ``search``."""
    opponents: tuple[str, ...] = ("search", "heuristic")
    seed: int = 0
    uct_c: float = 2.0
    out: str = "benchmarks/results/openspiel_ismcts"
    quick: bool = False
    """2 games per opponent with a 2 ms budget (a smoke test)."""


class TimedISMCTSBot(ismcts.ISMCTSBot):
    """OpenSpiel's ISMCTS bot, its simulation loop bounded by CPU time instead of a count."""

    def __init__(self, game: Any, time_ms: float, uct_c: float, seed: int) -> None:
        rng = np.random.RandomState(seed)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
        super().__init__(game, evaluator, uct_c, max_simulations=1, random_state=rng)
        self.time_s = time_ms / 1000
        self.simulations: list[int] = []

    def run_search(self, state: Any) -> list[tuple[int, float]]:
        # ISMCTSBot.run_search with `for _ in range(max_simulations)` replaced by a time budget.
        self.reset()
        legal_actions = state.legal_actions()
        if len(legal_actions) == 1:
            return [(legal_actions[0], 1.0)]
        self._root_node = self.create_new_node(state)
        start, n = time.process_time(), 0
        while n < 2 or time.process_time() - start < self.time_s:  # the first only expands the root
            self.run_simulation(self.sample_root_state(state))
            n += 1
        self.simulations.append(n)
        return self.get_final_policy(state, self._root_node)


def our_action(agent: Any, state: Any, rng: np.random.Generator) -> int:
    """Our agent's move in the state's engine (``ask_one``: with the engine for a search, else from
    the seat's observation), checked."""
    return ask_one(agent, state.position_engine(), 0, rng)


def play(args: Args, opponent: str) -> dict[str, Any]:
    game = pyspiel.load_game("python_uno", {"seed": args.seed})
    spec = f"search:{args.time_ms:g}ms" if opponent == "search" else opponent
    agent = make_agent(spec, game.rules)
    bot = TimedISMCTSBot(game, args.time_ms, args.uct_c, args.seed)
    rng = np.random.default_rng(args.seed)
    wins = draws = 0
    cpu: dict[str, list[float]] = {"ismcts": [], opponent: []}
    for k in range(args.games):
        state = game.new_initial_state()
        bot_seat = k % 2
        while not state.is_terminal():
            searched = len(state.legal_actions()) > 1
            t = time.process_time()
            if state.current_player() == bot_seat:
                action, side = int(bot.step(state)), "ismcts"
            else:
                action, side = our_action(agent, state, rng), opponent
            if searched:
                cpu[side].append(time.process_time() - t)
            state.apply_action(action)
        r = state.returns()[bot_seat]
        wins += r > 0
        draws += r == 0
        print(
            f"{opponent}: game {k + 1}/{args.games} bot {'won' if r > 0 else 'lost' if r < 0 else 'drew'}", flush=True
        )
    lo, hi = wilson_interval(wins, args.games)
    return {
        "opponent": spec,
        "games": args.games,
        "bot_wins": wins,
        "truncated": draws,
        "bot_win_rate": wins / args.games,
        "ci95": [lo, hi],
        "bot_ms_per_decision": 1000 * float(np.median(cpu["ismcts"])) if cpu["ismcts"] else None,
        "opponent_ms_per_decision": 1000 * float(np.median(cpu[opponent])) if cpu[opponent] else None,
        "bot_simulations_per_decision": float(np.median(bot.simulations)) if bot.simulations else None,
    }


def main(args: Args) -> dict[str, Any]:
    if args.quick:
        args = dataclasses.replace(args, games=2, time_ms=2.0)
    report: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "load_1min_start": os.getloadavg()[0],
        "time_ms": args.time_ms,
        "rows": [play(args, o) for o in args.opponents],
    }
    report["load_1min_end"] = os.getloadavg()[0]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    return report


def markdown(r: dict[str, Any]) -> str:
    lines = [
        f"# OpenSpiel's ISMCTS on python_uno ({r['date']})",
        "",
        f"Machine: {r['machine']}, 1-minute load {r['load_1min_start']:.1f} at the start and "
        f"{r['load_1min_end']:.1f} at the end. 2 players, classic, seats rotated, {r['time_ms']:g} ms of CPU "
        "per decision for the bot and for `search`. Command: `python -m benchmarks.openspiel_ismcts` "
        "(this file is its output).",
        "",
        "| bot vs | games | bot wins | bot win rate (95% CI) | bot ms/decision | bot simulations/decision | opponent ms/decision |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in r["rows"]:
        lo, hi = row["ci95"]
        lines.append(
            f"| {row['opponent']} | {row['games']} | {row['bot_wins']} | {row['bot_win_rate']:.1%} "
            f"({lo:.1%}–{hi:.1%}) | {row['bot_ms_per_decision']:.1f} | {row['bot_simulations_per_decision']:g} | "
            f"{row['opponent_ms_per_decision']:.2f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main(tyro.cli(Args))
