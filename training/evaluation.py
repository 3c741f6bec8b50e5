"""Measuring the learner during and after training: its table against each evaluation opponent.

``opponent_tables`` parses the opponents once and builds each one's seats once: copies of one
agent (``agents.registry.make_agent``) or a mixed table's seats (``heuristic+rlcard_rule+greedy``,
``training.opponents.seat_agents``). ``eval_rows`` plays ``arena.play`` with the learner in one
seat and those seats in the others, seats rotated, for each opponent in turn; ``eval_line`` is
the one-line form printed as training goes and ``final_table`` the Markdown table printed at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.registry import parse_list
from arena import play
from training.opponents import seat_agents
from uno_env import Agent, UnoRules

__all__ = ["opponent_tables", "parse_specs", "eval_rows", "eval_line", "final_title", "final_table"]


def opponent_tables(text: str, rules: UnoRules, num_players: int = 2) -> dict[str, list[Agent]]:
    """The comma-separated opponents of ``text`` (``agents.registry.parse_list``: a registry spec or a mixed
    table ``a+b+c``), each with the seats it plays (``seat_agents``), built now so that a bad one fails now."""
    return {spec: seat_agents(spec, rules, num_players) for spec in parse_list(text, tables=True)}


def parse_specs(text: str, rules: UnoRules, num_players: int = 2) -> list[str]:
    """The opponent specs of ``text``, each built once (``opponent_tables``) so that a bad one fails now."""
    return list(opponent_tables(text, rules, num_players))


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
