"""Win rates of the rule-based agents (2 players, classic preset, seats rotated), as markdown.

    python -m lab.agents_table --games 10000

Each row is one arena.play; the win rate and its Wilson interval are the first agent's.
"""

from __future__ import annotations

import dataclasses

import tyro

from agents import GreedyAgent, HeuristicAgent, RandomAgent, RLCardRuleAgent
from arena import play
from uno_env import UnoRules


@dataclasses.dataclass
class Args:
    games: int = 10_000
    """games per match"""
    seed: int = 0
    """seed of the games"""
    quick: bool = False
    """1000 games per match (smoke run)"""


def main() -> None:
    """Play the matches and print the table."""
    args = tyro.cli(Args, description=__doc__)
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
        play([a, b], 4, rules, args.seed)
    print(f"2 players, preset classic, {games} games per match, seats rotated, seed {args.seed}\n")
    print("| agent | opponent | games | wins | win rate | 95% CI | truncated | time |")
    print("|---|---|---|---|---|---|---|---|")
    for a, b in matches:
        r = play([a, b], games, rules, args.seed)
        lo, hi = r.ci95[0]
        print(
            f"| {r.names[0]} | {r.names[1]} | {r.games} | {r.wins[0]} | {r.win_rate[0]:.1%} | "
            f"{lo:.1%} – {hi:.1%} | {r.truncated} | {r.seconds:.1f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
