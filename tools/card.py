"""Ship a training run as a pretrained agent: copy its model into agents/pretrained and write its card from the run's files.

    python -m tools.card --run-dir runs/pretrained_2p --name pretrained
    python evaluate.py --ladder pretrained --output-dir runs/ladder_pretrained
    python -m tools.card --run-dir runs/pretrained_2p --name pretrained \\
        --ladder runs/ladder_pretrained/ladder.json          # the card again, with the rating
    python -m tools.card --run-dir runs/long --name pretrained-4p --eval-games 4000
                                     # a run made with --final-eval-games 0: evaluated here
    python -m tools.card --name pretrained --ladder runs/ladder_pretrained/ladder.json
                                     # the shipped card's ladder rating only (a new ladder version)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import dataclass
from typing import Any

import tyro

from agents.model_card import card_path_of, commit_at, machine, table_card, utc, write_card
from agents.pretrained import PRETRAINED, load_card
from uno_env.rules import parse_rules

PRETRAINED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "agents", "pretrained")
MAX_MODEL_BYTES = 5_000_000  # shipped in the package: each model stays under 5 MB
PLAYED_BY_TRAIN, PLAYED_BY_CARD = "train.py --final-eval-games", "tools.card --eval-games"
"""Who played a card's evaluation: the run itself, or this tool after it (``--eval-games``)."""


@dataclass
class Args:
    name: str
    """the registry name to ship it as: pretrained or pretrained-4p"""
    run_dir: str = ""
    """the training run: a directory with model.zip, args.json and final_eval.json written by train.py
    (empty: only the shipped card's ladder rating is replaced, from --ladder)"""
    ladder: str = ""
    """the ladder.json of 'python evaluate.py --ladder NAME' (empty: the card's ladder is null)"""
    eval_games: int = 0
    """games per evaluation opponent, played here with train.py's seed, for a run whose final_eval.json
    has no final evaluation (--final-eval-games 0); 0: the run's own final evaluation"""
    note: str = ""
    """free text for what the run does not record (e.g. the machine's load while it trained)"""
    out_dir: str = PRETRAINED_DIR
    """where NAME.zip and NAME.json are written (default: the checkout's agents/pretrained)"""


def _utc(path: str) -> str:
    return utc(os.path.getmtime(path))


def training_command(run_dir: str) -> str:
    """The command that repeats the run: ``<run>/command.txt``, written by ``train.py`` when the run starts."""
    path = os.path.join(run_dir, "command.txt")
    if not os.path.isfile(path):
        raise ValueError(
            f"{run_dir} lacks command.txt (train.py writes it when a run starts): give the directory "
            f"of a run of this version of train.py"
        )
    with open(path) as f:
        return f.read().strip()


def _ladder(path: str, name: str, num_players: int) -> dict[str, Any]:
    with open(path) as f:
        data = json.load(f)
    if data.get("spec") != name or data.get("num_players") != num_players:
        raise ValueError(
            f"{path} rates {data.get('spec')!r} with {data.get('num_players')} players, not {name!r} "
            f"with {num_players}: run python evaluate.py --ladder {name} --num-players {num_players}"
        )
    keep = ("num_players", "rating", "rating_se", "ci95", "per_rung", "rungs")
    return {"version": data["ladder"]["version"], "rated": _utc(path), **{k: data[k] for k in keep}}


def _model_facts(path: str) -> dict[str, Any]:
    from agents.ppo import PPOAgent  # torch: only here

    size = os.path.getsize(path)
    if size >= MAX_MODEL_BYTES:
        raise ValueError(f"{path} is {size:,} bytes; a shipped model must be under {MAX_MODEL_BYTES:,}")
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {
        "observation_size": PPOAgent(path, allow_other_table=True).obs_size,
        "model_bytes": size,
        "model_sha256": digest,
    }


def final_evaluation(model: str, train_args: dict[str, Any], games: int) -> list[dict[str, Any]]:
    """What train.py's final evaluation would have measured: ``model`` against each of the run's
    ``--eval-opponents``, ``games`` games each, seats rotated, with the seed train.py uses."""
    from agents.ppo import PPOAgent  # torch: only here
    from training.opponents import eval_rows, final_eval_seed, opponent_tables

    rules = parse_rules(train_args["rules"])
    learner = PPOAgent(model, deterministic=train_args["deterministic_eval"], name="ppo")
    opponents = opponent_tables(train_args["eval_opponents"], rules, int(train_args["num_players"]))
    return eval_rows(learner, opponents, rules, games, seed=final_eval_seed(int(train_args["seed"])))


def _check_name(name: str) -> None:
    if name not in PRETRAINED:
        raise ValueError(f"--name must be one of {', '.join(PRETRAINED)} (agents.pretrained.PRETRAINED), got {name!r}")


def make_card(args: Args) -> dict[str, Any]:
    """The card of ``args.run_dir`` shipped as ``args.name``."""
    _check_name(args.name)
    files = {f: os.path.join(args.run_dir, f) for f in ("model.zip", "args.json", "final_eval.json")}
    missing = [f for f, p in files.items() if not os.path.isfile(p)]
    if missing:
        raise ValueError(f"{args.run_dir} lacks {', '.join(missing)}: give the directory of a finished train.py run")
    with open(files["args.json"]) as f:
        train_args = json.load(f)
    with open(files["final_eval.json"]) as f:
        final = json.load(f)
    rules = parse_rules(train_args["rules"])
    n = int(train_args["num_players"])
    if args.eval_games < 0:
        raise ValueError(f"--eval-games must be >= 0, got {args.eval_games}")
    if args.eval_games:
        games, rows = args.eval_games, final_evaluation(files["model.zip"], train_args, args.eval_games)
    elif final.get("final_eval"):
        games, rows = train_args["final_eval_games"], final["final_eval"]
    else:
        raise ValueError(
            f"{files['final_eval.json']} has no final evaluation (the run had --final-eval-games 0): "
            "give --eval-games N to evaluate the model here"
        )
    return {
        # The fields every model's card holds (agents.model_card), then what a shipped model adds.
        **table_card(
            args.name,
            rules,
            n,
            training_command(args.run_dir),
            rules_name=train_args["rules"],
            model_file=f"{args.name}.zip",
            train_args=train_args,
        ),
        "commit": commit_at(os.path.getmtime(files["args.json"])),
        "started": _utc(files["args.json"]),
        "finished": _utc(files["final_eval.json"]),
        "machine": machine(),
        "steps": final["steps"],
        "train_minutes": round(final["train_seconds"] / 60, 1),
        "train_cpu_minutes": round(final["train_cpu_seconds"] / 60, 1),
        "stopped_early": final["stopped_early"],
        **_model_facts(files["model.zip"]),
        "evaluation": {
            "games_per_opponent": games,
            "played_by": PLAYED_BY_CARD if args.eval_games else PLAYED_BY_TRAIN,
            "seats": "rotated",
            "actions": "deterministic" if train_args["deterministic_eval"] else "sampled",
            "rows": rows,
        },
        "ladder": _ladder(args.ladder, args.name, n) if args.ladder else None,
        "note": args.note,
    }


def card_markdown(card: dict[str, Any]) -> str:
    """A card as Markdown: how the model was trained, its evaluation table and its ladder rating."""
    ev, lad = card["evaluation"], card["ladder"]
    lines = [
        f"### `{card['name']}`: {card['num_players']} players, rules `{card['rules_name']}`",
        "",
        f"Trained {card['started']} to {card['finished']} at commit `{card['commit'][:10]}` on {card['machine']}: "
        f"{card['steps']:,} steps in {card['train_minutes']:g} min wall, {card['train_cpu_minutes']:g} CPU-minutes"
        + (" (stopped by --max-minutes, so not reproducible step for step)" if card["stopped_early"] else "")
        + f"; {card['model_bytes'] / 1e6:.1f} MB"
        + (f". {card['note']}" if card["note"] else "")
        + ".",
        "",
        "```bash",
        card["command"],
        "```",
        "",
        f"Evaluation: {ev['games_per_opponent']:,} games per opponent, seats rotated, {ev['actions']} actions, "
        "95% Wilson intervals"
        + (f" (played after the run by `{PLAYED_BY_CARD}`)" if ev.get("played_by") == PLAYED_BY_CARD else "")
        + (
            f" (the model against {card['num_players'] - 1} copies of the opponent; "
            f"an equal share is {1 / card['num_players']:.0%})"
            if card["num_players"] > 2
            else ""
        )
        + ":",
        "",
        "| opponent | games | win rate | 95% CI | mean points (ours / theirs) |",
        "|---|---:|---:|---|---|",
    ]
    for r in ev["rows"]:
        lines.append(
            f"| {r['opponent']} | {r['games']:,} | {r['win_rate']:.1%} | {r['ci95'][0]:.1%} – {r['ci95'][1]:.1%} "
            f"| {r['mean_points']:.1f} / {r['opponent_mean_points']:.1f} |"
        )
    if lad is None:
        return "\n".join(lines + ["", "Not rated on the ladder yet."])
    lines += [
        "",
        f"Ladder {lad['version']} ({lad['num_players']} players, rated {lad['rated']}): **{lad['rating']:.0f}** "
        f"(95% CI {lad['ci95'][0]:.0f} – {lad['ci95'][1]:.0f}); win rate "
        + ("against" if lad["num_players"] == 2 else "at the tables with")
        + " each rung: "
        + ", ".join(f"`{d['rung']}` {d['win_rate']:.1%}" for d in lad["per_rung"])
        + ".",
    ]
    return "\n".join(lines)


def cards_markdown() -> str:
    """Every shipped model's card as Markdown (the docs hook's ``<!-- uno:pretrained -->``)."""
    return "\n\n".join(card_markdown(load_card(name)) for name in PRETRAINED)


def rerate(args: Args) -> str:
    """Replace the ladder rating on the card ``<out_dir>/NAME.json`` with ``args.ladder``'s; returns its path."""
    if not args.ladder:
        raise ValueError("give --run-dir to ship a run, or --ladder to replace a shipped card's rating")
    if args.eval_games or args.note:
        raise ValueError("--eval-games and --note describe a run: give its --run-dir")
    _check_name(args.name)
    model = os.path.join(args.out_dir, f"{args.name}.zip")
    with open(card_path_of(model)) as f:
        card = json.load(f)
    card["ladder"] = _ladder(args.ladder, args.name, int(card["num_players"]))
    return write_card(model, card)


def main(args: Args) -> str:
    """Copy the run's model to ``<out_dir>/NAME.zip`` and write ``NAME.json`` (no ``run_dir``: only the
    card's ladder rating, ``rerate``); returns the card's path."""
    if not args.run_dir:
        return rerate(args)
    card = make_card(args)
    os.makedirs(args.out_dir, exist_ok=True)
    shutil.copyfile(os.path.join(args.run_dir, "model.zip"), os.path.join(args.out_dir, card["model_file"]))
    return write_card(os.path.join(args.out_dir, card["model_file"]), card)


if __name__ == "__main__":
    try:
        print(f"wrote {main(tyro.cli(Args, description=__doc__))}")
    except ValueError as exc:
        sys.exit(f"error: {exc}")
