"""Win rates of the rule-based agents (2 players, classic preset, seats rotated), as markdown.

    python benchmarks/agents_table.py [--games 10000] [--seed 0] [--quick]

Each row is one ``agents.play_match`` between two agents; the win rate and its 95% Wilson
interval are the first agent's. Nothing is hard-coded: every number is measured on each run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from a checkout
# Submodule imports work even where `agents` was installed before it had an __init__.py.
from agents.arena import play_match
from agents.base import RandomAgent
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.rlcard_rule import RLCardRuleAgent
from uno_env import UnoRules


def main() -> None:
    """Play the matches and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="games per match")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="1000 games per match (smoke run)")
    args = parser.parse_args()
    games = 1000 if args.quick else args.games
    rules = UnoRules.preset("classic")
    matches = [
        (RLCardRuleAgent(rules), RandomAgent()),
        (GreedyAgent(rules), RandomAgent()),
        (HeuristicAgent(rules), RLCardRuleAgent(rules)),
        (HeuristicAgent(rules), GreedyAgent(rules)),
        (HeuristicAgent(rules), RandomAgent()),
        (GreedyAgent(rules), RLCardRuleAgent(rules)),
    ]
    # Compile every kernel first so that the time column measures play, not numba.
    for a, b in matches:
        play_match([a, b], 4, num_players=2, rules=rules, seed=args.seed)
    print(f"2 players, preset classic, {games} games per match, seats rotated, seed {args.seed}\n")
    print("| agent | opponent | games | wins | win rate | 95% CI | truncated | time |")
    print("|---|---|---|---|---|---|---|---|")
    for a, b in matches:
        r = play_match([a, b], games, num_players=2, rules=rules, seed=args.seed)
        lo, hi = r.ci95[0]
        print(
            f"| {r.names[0]} | {r.names[1]} | {r.games} | {r.wins[0]} | {r.win_rate[0]:.1%} | "
            f"{lo:.1%} – {hi:.1%} | {r.no_winner} | {r.seconds:.1f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
