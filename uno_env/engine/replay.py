"""``replay``: play a game record again in a fresh engine, checking every event.

It sits above ``record.py`` and the ``Engine``, so the recorder imports nothing of the engine."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rules import UnoRules
from .engine import Engine


def record_start(record: dict[str, Any]) -> Engine:
    """A fresh one-game recording engine at the record's start, before its first action."""
    engine = Engine(1, record["num_players"], UnoRules.from_dict(record["rules"]), seed=0, record=True)
    start = record["start"]
    if "position" in start:
        # A position recorded without a generator state replays with the fresh engine's own.
        rng_state = int(start["rng_state"]) if "rng_state" in start else None
        engine.set_game(0, **start["position"], rng_state=rng_state)
    elif "rng_state" in start:
        engine.reset(rng_state=int(start["rng_state"]))
    else:
        raise ValueError(f"record start must hold a position or an rng_state, got keys {sorted(start)}")
    return engine


def replay(record: dict[str, Any]) -> Engine:
    """Replay a record in a fresh one-game engine; raises ValueError if any event differs."""
    engine = record_start(record)
    for k, action in enumerate(record["actions"]):
        if engine.terminated[0] or engine.truncated[0]:
            raise ValueError(f"record has {len(record['actions'])} actions but the round ended after {k}")
        engine.step(np.array([action]))
    replayed = engine.record(0)["events"]
    if replayed != record["events"]:
        first = next(
            (k for k, (a, b) in enumerate(zip(replayed, record["events"], strict=False)) if a != b),
            min(len(replayed), len(record["events"])),
        )
        raise ValueError(f"replay differs from the record at event {first}")
    return engine
