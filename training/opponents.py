"""Who the learner plays and is measured against: the ``--opponent-mix`` split into groups of games,
and the evaluation opponents' tables.

A group keeps one opponent kind for every round it plays, and the mix is the share of games: the
agent protocol does not say which game a row belongs to, so an agent that picked an opponent per
row could not keep one opponent for a whole round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents import registry
from agents.registry import TABLE, build_agent, parse_list, parse_table
from arena import play
from uno_env import Agent, UnoRules

__all__ = [
    "SELF",
    "LEAGUE",
    "OpponentGroup",
    "PendingSnapshot",
    "parse_mix",
    "split_games",
    "opponent_groups",
    "seat_agents",
    "opponent_tables",
    "final_eval_seed",
    "eval_rows",
    "eval_line",
    "final_title",
    "final_table",
]

SELF = "self"
"""the mix entry of self-play: frozen snapshots of the learner"""
LEAGUE = "league"
"""the mix entry of the league: baselines and snapshots drawn by how often they beat the learner (``training.league``)"""


def parse_mix(text: str) -> dict[str, float]:
    """``"0.5*a,0.5*b"`` -> ``{"a": 0.5, "b": 0.5}``: ``agents.registry.parse_mix`` with the
    entries ``self`` and ``league`` beside the specs and mixed tables."""
    return registry.parse_mix(text, extra=(SELF, LEAGUE))


def split_games(n: int, weights: Sequence[float]) -> list[int]:
    """Games per kind: proportional to ``weights`` (largest remainders), at least one per positive
    weight while ``n`` allows; sums to ``n``."""
    w = np.asarray(weights, np.float64)
    if n < 1 or w.size == 0 or (w < 0).any() or w.sum() <= 0:
        raise ValueError(
            f"split_games needs n >= 1 and non-negative weights with a positive sum, got {n}, {list(weights)}"
        )
    share = w / w.sum() * n
    counts = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - counts), kind="stable")
    counts[order[: n - counts.sum()]] += 1
    # A kind asked for but rounded to 0 games takes one from the largest group.
    for k in np.flatnonzero((w > 0) & (counts == 0)):
        big = int(np.argmax(counts))
        if counts[big] > 1:
            counts[big] -= 1
            counts[k] += 1
    return [int(c) for c in counts]


class PendingSnapshot:
    """A self-play (or league) seat before the learner exists: the env is built before the model,
    so its opponent comes later (``League.start``); acting before that raises
    ``ValueError``."""

    def __init__(self, name: str = SELF) -> None:
        self.name = name
        # The history the opponents installed later read: the env's engine keeps it from the start.
        self.history_length = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Refuses: there is no snapshot yet."""
        raise ValueError(f"this {self.name} group has no snapshot yet: League.start(policy) installs one")


@dataclass
class OpponentGroup:
    """``games`` consecutive games of the batch played against ``agent`` (of mix entry ``kind``)."""

    kind: str
    agent: Agent | list[Agent]  # a list: one agent per other seat (a mixed table)
    games: int


def seat_agents(spec: str, rules: UnoRules, num_players: int) -> list[Agent]:
    """The other seats' agents for ``spec``: a mixed table ``a+b+c`` (one spec per seat, clockwise from
    the learner; ValueError unless it names ``num_players - 1``), else that many fresh copies of one agent."""
    specs = parse_table(spec)
    if len(specs) == 1:
        return [build_agent(specs[0], rules) for _ in range(num_players - 1)]
    if len(specs) != num_players - 1:
        raise ValueError(
            f"the mixed table {spec!r} names {len(specs)} seats; a table of {num_players} players needs "
            f"{num_players - 1}, one per seat after the learner's"
        )
    return [build_agent(s, rules) for s in specs]


def opponent_groups(
    mix: dict[str, float],
    num_envs: int,
    rules: UnoRules,
    self_play_groups: int = 1,
    league_groups: int = 1,
    *,
    num_players: int,
) -> list[OpponentGroup]:
    """The batch split by ``mix`` into groups in game order for tables of
    ``num_players``; agents from ``build_agent``, a mixed table's from ``seat_agents`` (ValueError
    unless it names ``num_players - 1`` seats)."""
    counts = split_games(int(num_envs), list(mix.values()))
    split = {SELF: int(self_play_groups), LEAGUE: int(league_groups)}
    groups = []
    for kind, n in zip(mix, counts, strict=True):
        parts = max(1, min(split.get(kind, 1), n))
        for n_part in split_games(n, [1.0] * parts) if n else []:
            agent: Any
            if kind in split:
                agent = PendingSnapshot(kind)
            elif TABLE in kind:
                agent = seat_agents(kind, rules, num_players)
            else:
                agent = build_agent(kind, rules)
            groups.append(OpponentGroup(kind, agent, n_part))
    return groups


def opponent_tables(text: str, rules: UnoRules, num_players: int = 2) -> dict[str, list[Agent]]:
    """The comma-separated opponents of ``text`` (``agents.registry.parse_list``: a registry spec or a mixed
    table ``a+b+c``), each with the seats it plays (``seat_agents``), built now so that a bad one fails now."""
    return {spec: seat_agents(spec, rules, num_players) for spec in parse_list(text, tables=True)}


def final_eval_seed(seed: int) -> int:
    """The seed of a run's final evaluation: apart from every periodic evaluation's (``seed + step``)."""
    return seed + 10**9


def eval_rows(
    learner: Agent, opponents: Mapping[str, Sequence[Agent]], rules: UnoRules, num_games: int, seed: int
) -> list[dict[str, Any]]:
    """The learner against each opponent of ``opponent_tables``: the learner's seat and the opponent's seats."""
    rows = []
    for spec, seats in opponents.items():
        r = play([learner, *seats], num_games, rules, seed)
        lo, hi = r.ci95[0]
        rows.append(
            {
                "opponent": spec,
                "games": r.games,
                "wins": int(r.wins[0]),
                "win_rate": float(r.win_rate[0]),
                "ci95": [lo, hi],
                "mean_points": float(r.mean_points[0]),
                "opponent_mean_points": float(r.mean_points[1:].mean()),
                "truncated": r.truncated,
            }
        )
    return rows


def eval_line(step: int, minutes: float, rows: list[dict[str, Any]]) -> str:
    """One line of a periodic evaluation."""
    return f"step {step:>11,} ({minutes:4.1f} min): " + ", ".join(
        f"{r['opponent']} {r['win_rate']:.1%} [{r['ci95'][0]:.1%}, {r['ci95'][1]:.1%}]" for r in rows
    )


def final_title(args: Any, model_path: str) -> str:
    """The title line of the final evaluation table of a ``train.Args`` run."""
    return (
        f"{model_path} vs each opponent: {args.num_players} players, rules {args.rules}, "
        f"{args.final_eval_games:,} games each, seats rotated, "
        f"{'deterministic' if args.deterministic_eval else 'sampled'} actions"
    )


def final_table(title: str, rows: list[dict[str, Any]]) -> str:
    """The final evaluation as a titled Markdown table."""
    lines = [
        "",
        title,
        "",
        "| opponent | games | wins | win rate | 95% CI | mean points | opponent's mean points |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['opponent']} | {r['games']:,} | {r['wins']:,} | {r['win_rate']:.1%} | "
            f"{r['ci95'][0]:.1%} – {r['ci95'][1]:.1%} | {r['mean_points']:.1f} | "
            f"{r['opponent_mean_points']:.1f} |"
        )
    return "\n".join(lines)
