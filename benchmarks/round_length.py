#!/usr/bin/env python
"""How long a round lasts, in actions (every seat's, what ``rules.max_turns`` counts): a Markdown table.

The decision it informs: the envs' default ``max_turns`` (5000) against naive agents. Rounds are
played to their end with no limit (``max_turns=None``) in one ``Engine`` batch, every seat the
same agent: ``random`` (uniform over legal actions, what an untrained masked policy does) or the
``heuristic`` (``agents.HeuristicAgent``). Columns: median, 90th and 99th percentiles and the
longest round, and the share of rounds a limit of 500 / 1000 / 2000 / 5000 actions would have
truncated.

Usage: ``python -m benchmarks.round_length [--rounds 2000] [--num-players 2 4]``.
"""

from __future__ import annotations

import argparse

import numpy as np

from agents import HeuristicAgent
from uno_env import Engine, UnoRules, sample_legal

LIMITS = (500, 1000, 2000, 5000)
CAP = 200_000  # a round still going after this many actions is reported as such


class Random:
    def act(self, observation, action_mask, rng):
        return sample_legal(action_mask, rng)


def lengths(agent, rules: UnoRules, players: int, rounds: int, seed: int) -> np.ndarray:
    """Actions of each of ``rounds`` rounds played to the end (one batch, no engine autoreset)."""
    e = Engine(rounds, players, rules.replace(max_turns=None))
    e.reset(seed)
    rng = np.random.default_rng(seed)
    count = np.zeros(rounds, np.int64)
    for _ in range(CAP):
        live = ~(e.terminated | e.truncated)
        if not live.any():
            break
        actions = np.full(rounds, -1, np.int64)
        idx = np.flatnonzero(live)
        actions[idx] = agent.act(e.observation[idx], e.legal_mask[idx], rng)
        e.step(actions)
        count[idx] += 1
    return count


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--num-players", type=int, nargs="+", default=[2, 4])
    p.add_argument("--rules", default="classic")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rules = UnoRules.preset(args.rules)
    head = "| agents | players | median | p90 | p99 | longest | " + " | ".join(f"> {n}" for n in LIMITS) + " |"
    print(f"rules `{args.rules}`, {args.rounds} rounds per row, seed {args.seed}\n")
    print(head)
    print("|---|---:|---:|---:|---:|---:|" + "---:|" * len(LIMITS))
    for name, agent in (("random", Random()), ("heuristic", HeuristicAgent())):
        for players in args.num_players:
            n = lengths(agent, rules, players, args.rounds, args.seed)
            q = np.percentile(n, [50, 90, 99])
            over = " | ".join(f"{(n > lim).mean():.1%}" for lim in LIMITS)
            print(f"| {name} | {players} | {q[0]:.0f} | {q[1]:.0f} | {q[2]:.0f} | {n.max()} | {over} |")


if __name__ == "__main__":
    main()
