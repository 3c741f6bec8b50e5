"""Measuring the learner during and after training: its table against each evaluation opponent.

``eval_rows`` plays ``arena.play`` with the learner in one seat and copies of one
opponent (built by ``agents.registry.make_agent``) in the others, or a mixed table's seats
(``heuristic+rlcard_rule+greedy``, ``training.opponents.seat_agents``), seats rotated, for each
opponent in turn; ``eval_line`` is the one-line form printed as training goes and
``final_table`` the Markdown table printed at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.registry import parse_list
from arena import play
from training.opponents import seat_agents
from uno_env import Agent, UnoRules

__all__ = ["parse_specs", "eval_rows", "eval_line", "final_title", "final_table"]


def parse_specs(text: str, rules: UnoRules, num_players: int = 2) -> list[str]:
    """The comma-separated opponent specs of ``text`` (``agents.registry.parse_list``: a registry spec or a
    mixed table ``a+b+c``), each built once so that a bad one fails now."""
    specs = parse_list(text, tables=True)
    for spec in specs:
        seat_agents(spec, rules, num_players)
    return specs


def eval_rows(
    learner: Agent, specs: Sequence[str], rules: UnoRules, num_players: int, num_games: int, seed: int
) -> list[dict[str, Any]]:
    """The learner against each opponent spec: n-1 fresh copies of the opponent, or a mixed table's seats."""
    rows = []
    for spec in specs:
        table = [learner, *seat_agents(spec, rules, num_players)]
        r = play(table, num_games, rules, seed)
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
