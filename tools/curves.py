"""Learning curves of ``train.py`` runs from their ``final_eval.json``: one panel per opponent.

python -m tools.curves runs/uno_ppo runs/other --out curves.png
python -m tools.curves base=runs/uno_ppo warm=runs/warm --opponents rlcard_rule,heuristic --out curves.png
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

import tyro

from agents.registry import parse_list

__all__ = ["load_curve", "plot_curves"]


def load_curve(run_dir: str) -> dict[str, Any]:
    """``{opponent: {"steps", "win_rate", "lo", "hi", "final"}}`` from ``run_dir/final_eval.json``."""
    path = os.path.join(run_dir, "final_eval.json")
    if not os.path.isfile(path):
        raise ValueError(f"{run_dir!r} holds no final_eval.json: give the directory of a finished train.py run")
    with open(path) as f:
        summary = json.load(f)
    curves: dict[str, Any] = {}
    for entry in summary.get("history", []):
        for row in entry["eval"]:
            c = curves.setdefault(row["opponent"], {"steps": [], "win_rate": [], "lo": [], "hi": [], "final": None})
            c["steps"].append(entry["step"])
            c["win_rate"].append(row["win_rate"])
            c["lo"].append(row["ci95"][0])
            c["hi"].append(row["ci95"][1])
    for row in summary.get("final_eval") or []:
        c = curves.setdefault(row["opponent"], {"steps": [], "win_rate": [], "lo": [], "hi": [], "final": None})
        c["final"] = (summary["steps"], row["win_rate"], row["ci95"][0], row["ci95"][1], row["games"])
    return curves


def plot_curves(runs: dict[str, str], out: str, opponents: list[str] | None = None, title: str = "") -> list[str]:
    """Draw the runs' curves (``{label: run_dir}``) into ``out`` (PNG); returns the opponents drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = {label: load_curve(d) for label, d in runs.items()}
    seen = [o for c in curves.values() for o in c]
    names = opponents or list(dict.fromkeys(seen))
    missing = [o for o in names if o not in seen]
    if missing or not names:
        raise ValueError(f"no run was evaluated against {missing or 'any opponent'}; the runs hold {sorted(set(seen))}")
    fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 4), squeeze=False)
    for ax, opponent in zip(axes[0], names, strict=True):
        for k, (label, c) in enumerate(curves.items()):
            if opponent not in c:
                continue
            color = f"C{k % 10}"
            s = c[opponent]
            steps = [x / 1e6 for x in s["steps"]]
            ax.plot(steps, s["win_rate"], "-o", ms=3, color=color, label=label)
            ax.fill_between(steps, s["lo"], s["hi"], color=color, alpha=0.12)
            if s["final"]:
                step, rate, lo, hi, games = s["final"]
                ax.errorbar([step / 1e6], [rate], yerr=[[rate - lo], [hi - rate]], fmt="s", color=color, capsize=3)
        ax.set_title(f"vs {opponent}")
        ax.set_xlabel("learner steps (millions)")
        ax.set_ylabel("win rate (95% interval)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return names


@dataclasses.dataclass
class Args:
    runs: tyro.conf.Positional[tuple[str, ...]]
    """run directories of train.py (each with final_eval.json), optionally label=path"""
    out: str = "curves.png"
    """the PNG to write"""
    opponents: str = ""
    """comma-separated opponents to draw, a panel each (empty: every opponent the runs were evaluated against)"""
    title: str = ""
    """the figure's title"""


def _named_run(run: str) -> tuple[str, str]:
    """``NAME=DIR``, or a bare ``DIR`` named after its last component."""
    name, sep, directory = run.partition("=")
    return (name, directory) if sep else (os.path.basename(os.path.normpath(run)), run)


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(Args, args=argv)
    runs = dict(_named_run(r) for r in args.runs)
    names = plot_curves(
        runs, args.out, parse_list(args.opponents, tables=True, empty=True, exists=False) or None, args.title
    )
    print(f"wrote {args.out}: {len(runs)} runs, panels {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
