"""Model cards: what a saved model is and the table it was trained for, written beside it and checked by every loader.

The card of ``X.zip`` or ``X.npz`` is ``X.json`` (fields: docs/agents.md, "Model cards"); ``write_card``
is the one writer of every card.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from typing import Any

from uno_env.observation import observation_size
from uno_env.rules import UnoRules

__all__ = [
    "OVERRIDE",
    "card_path_of",
    "check_fits",
    "commit_at",
    "cpu_model",
    "machine",
    "observation_options",
    "read_card",
    "table_card",
    "utc",
    "write_card",
]

OVERRIDE = "allow_other_table=True (--allow-other-table on the commands) plays it anyway, for a transfer experiment"
"""How to play a model at a table it was not trained for, as error messages say it."""


def observation_options(rules: UnoRules) -> dict[str, Any]:
    """What the observation of ``rules`` depends on, beyond the table size: the card's ``observation``."""
    return {"open_hands": bool(rules.open_hands)}


def table_card(
    name: str,
    rules: UnoRules,
    num_players: int,
    command: str,
    rules_name: str | None = None,
    history: int = 0,
    policy: str = "mlp",
    **extra: Any,
) -> dict[str, Any]:
    """The fields every card holds, then ``extra`` (``train_args``, ``steps``...);
    ``rules_name``: the rules as the command gave them (None: ``custom``); ``policy``: the network's kind."""
    return {
        "name": name,
        "command": command,
        "rules_name": rules_name if rules_name is not None else "custom",
        "rules": rules.to_dict(),
        "num_players": int(num_players),
        "observation": {**observation_options(rules), "history": int(history)},
        "observation_size": observation_size(rules.open_hands),
        "policy": policy,
        **extra,
    }


def card_path_of(model_path: str | os.PathLike) -> str:
    """``X.json`` for ``X.zip`` or ``X.npz`` (or for ``X``, the name ``MaskablePPO.load`` completes with ``.zip``)."""
    p = os.fspath(model_path)
    return (p[:-4] if p.endswith((".zip", ".npz")) else p) + ".json"


def write_card(model_path: str | os.PathLike, card: dict[str, Any]) -> str:
    """Write ``card`` beside the model (replacing the file in one step); returns its path."""
    path = card_path_of(model_path)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(card, f, indent=1, default=float)
        f.write("\n")
    os.replace(tmp, path)
    return path


def utc(when: float | None = None) -> str:
    """The time ``when`` (a timestamp; None: now) as a card writes it, in UTC."""
    t = (
        datetime.datetime.now(datetime.timezone.utc)
        if when is None
        else datetime.datetime.fromtimestamp(when, datetime.timezone.utc)
    )
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def commit_at(when: float) -> str:
    """The newest commit of ``HEAD`` at the time ``when`` (uncommitted changes are not seen)."""
    try:
        out = subprocess.run(
            ["git", "rev-list", "-1", f"--before={int(when)}", "HEAD"],
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def cpu_model() -> str:
    """The processor's model name (Linux's ``/proc/cpuinfo``), else what ``platform`` knows."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        return cpu


def machine() -> str:
    """This machine in words: its CPU, CPU count, system and Python."""
    return f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def read_card(model_path: str | os.PathLike) -> dict[str, Any] | None:
    """The card beside a model, or None when it has none; ValueError for a card that cannot be read."""
    path = card_path_of(model_path)
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            card = json.load(f)
        missing = [k for k in ("rules", "num_players", "observation_size") if k not in card]
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: the model's card is not readable JSON ({exc})") from exc
    if missing:
        raise ValueError(f"{path}: the model's card lacks {', '.join(missing)} (a card of agents.model_card)")
    return card


def trained_for(card: dict[str, Any]) -> str:
    """``NAME was trained for N players, rules R``: how messages name a card's table."""
    return f"{card.get('name', 'the model')} was trained for {card['num_players']} players, rules {card['rules_name']}"


def _rules_difference(trained: UnoRules, asked: UnoRules) -> str:
    a, b = trained.to_dict(), asked.to_dict()
    return ", ".join(f"{k}: trained {a[k]!r}, asked {b[k]!r}" for k in a if a[k] != b[k])


def check_fits(
    card: dict[str, Any], rules: UnoRules | None = None, num_players: int | None = None, hint: str = ""
) -> UnoRules:
    """The rules of ``card``, after checking ``rules`` and ``num_players`` (None: not checked) and the
    observation against what is asked; ``ValueError`` saying what differs, what the model was trained
    for and how to override. ``hint``: another way out, added to the player-count message."""
    trained = UnoRules.from_dict(card["rules"])
    what = trained_for(card)
    if rules is not None:
        asked = rules
        if asked != trained:
            raise ValueError(
                f"{what}; the rules asked for differ in {_rules_difference(trained, asked)}. Use it with the "
                f"rules it was trained for, train a model for these rules (train.py --rules), or {OVERRIDE}"
            )
        # Cards written before the ``observation`` field: its options are among the rules.
        options = {k: v for k, v in card.get("observation", observation_options(trained)).items() if k != "history"}
        if options != observation_options(asked) or card["observation_size"] != observation_size(asked.open_hands):
            raise ValueError(
                f"{what}, observation options {options} and an observation of {card['observation_size']} values; "
                f"these rules give {observation_size(asked.open_hands)} with {observation_options(asked)}"
            )
    if num_players is not None and num_players != card["num_players"]:
        raise ValueError(
            f"{what}; asked for {num_players} players. {hint}train.py --num-players {num_players} trains a "
            f"model for that table, or {OVERRIDE}"
        )
    return trained
