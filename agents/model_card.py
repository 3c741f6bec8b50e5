"""Model cards: what a saved model is and the table it was trained for, written beside it and checked by every loader.

```python
from agents.model_card import read_card, check_fits
from uno_env import UnoRules
card = read_card("runs/uno_ppo/model.zip")      # runs/uno_ppo/model.json, or None for an old model
check_fits(card, UnoRules(), num_players=2)    # ValueError saying what it was trained for
```

The card of ``X.zip`` (a policy) or ``X.npz`` (a belief network) is ``X.json`` beside it, and
``write_card`` is the one writer of every card: ``train.py`` writes ``runs/<exp>/model.json``
with ``model.zip`` (and ``step_N.json`` with each checkpoint); ``python -m
training.fit_belief_policy`` (``train.py`` with its settings) and ``python -m training.fit_belief_net`` write theirs; the shipped
models carry ``agents/pretrained/NAME.json`` (``agents.pretrained.card`` adds their evaluation
and ladder rating to the same fields). Every card starts with ``table_card``'s fields; the
provenance (``commit_at``, ``machine``) is read here for all of them. What a loader checks
(``PPOAgent``, ``BeliefPolicyAgent``, ``BeliefNet``):

| field | meaning |
|---|---|
| ``rules`` | every ``UnoRules`` option the model was trained with (``rules_name``: as it was given) |
| ``num_players`` | the table size it was trained for |
| ``observation`` | the options its observation depends on (``observation_options``): today ``open_hands``, and ``history``, the public events it reads besides (0: none; a table gives the model what it reads, so only ``open_hands`` must match) |
| ``observation_size`` | the length of the observation vector the model reads |
| ``policy`` | the network (``train.py --policy``): ``mlp``, or ``seq``, a transformer over the last ``observation.history`` events (informative: the ``.zip`` holds the network; absent on older cards: ``mlp``) |
| ``beliefs`` | ``train.py --beliefs net``: ``net`` when the policy also reads the belief network's reading of each other seat (``input_size``: its input's width; ``activation``); the registry then loads the ``.zip`` as ``BeliefPolicyAgent`` (absent: ``none``) |
| ``command`` | the command that trained it (and ``train_args``, every argument) |

**Why.** A policy reads a vector of the same size under every rule set and at every table size,
so a model asked to play a table it never saw would run, and play badly, without a word.
``PPOAgent``, ``agents.registry.make_agent`` (and through it ``evaluate.py``, the ladder,
``uno-play`` and ``uno-web``) refuse such a table with a ``ValueError`` saying what the model
was trained for; ``allow_other_table=True`` (``--allow-other-table`` on the commands) plays it
anyway, for a deliberate transfer experiment.

**A model without a card** (saved by a ``train.py`` older than cards, or by ``model.save``)
loads with a ``UserWarning`` that its table cannot be checked: refusing it would break every
model trained before cards, and the warning names the file and how to give it a card
(``write_card`` with ``table_card``).
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
    """The fields every card holds (module table), then ``extra`` (``train_args``, ``steps``...);
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
