"""Crash-safe checkpoints of ``train.py``: every file written atomically, the ``latest.json`` pointer last.

``<run>/checkpoints/`` holds, per checkpoint at step N:

| file | what it holds |
|---|---|
| ``step_N.zip`` | ``MaskablePPO.save``: weights, optimizer state, step count, PPO settings |
| ``step_N.state.pt`` | the rest of the run (``torch.save``): python/numpy/torch generator states, the snapshot pool and league (``training.league``) with their generators, the evaluation history |
| ``latest.json`` | ``{"step": N, "model": "step_N.zip", "state": "step_N.state.pt"}``, replaced after both files are in place |

**Why it survives SIGKILL.** A kill can land on any instruction. Each file is written to a
temporary file in the same directory (same filesystem, so the rename is atomic), flushed and
fsynced, then ``os.replace``'d onto its name, and the directory is fsynced so the rename
itself is on disk. A checkpoint's name therefore never holds a partial file, and the pointer
moves only once the whole checkpoint exists: a kill at any moment leaves ``latest.json``
naming the previous complete checkpoint (or none). Temporaries left by a kill are removed by
``remove_partial`` when a run starts.

**What a resume restores** (``find_checkpoint`` accepts a run directory, its ``checkpoints/``
directory, ``latest.json`` or a ``step_N.zip``): everything above. Not restored: the games in
progress at the checkpoint (the env deals new ones) and the opponents' generators, so a resumed
run is a faithful continuation but not bit-identical to an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from typing import IO, Any, NamedTuple

import numpy as np
import torch

from agents.model_card import write_card

__all__ = [
    "Checkpoint",
    "atomic_write",
    "save_checkpoint",
    "find_checkpoint",
    "load_state",
    "remove_partial",
    "capture_rng",
    "restore_rng",
    "LATEST",
]

LATEST = "latest.json"
_TMP = ".tmp-"  # prefix of the temporaries (hidden: never mistaken for a checkpoint)


class Checkpoint(NamedTuple):
    """A checkpoint on disk: the model ``.zip``, its run-state file (None for a bare ``.zip``), its step."""

    model: str
    state: str | None
    step: int | None


def _fsync_dir(directory: str) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str, write: Callable[[IO[bytes]], object]) -> None:
    """Write ``path`` with ``write(file)`` via a temporary in the same directory, fsync and ``os.replace``.

    If ``write`` raises (or the process dies), ``path`` keeps its previous content; the
    temporary is removed on an exception (after a kill, by ``remove_partial``)."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f"{_TMP}{os.getpid()}-{os.path.basename(path)}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_dir(directory)


def remove_partial(directory: str) -> list[str]:
    """Delete temporaries a killed run left in ``directory``; returns their names."""
    if not os.path.isdir(directory):
        return []
    gone = [n for n in os.listdir(directory) if n.startswith(_TMP)]
    for n in gone:
        os.remove(os.path.join(directory, n))
    return gone


def capture_rng() -> dict[str, Any]:
    """The python, numpy (global) and torch generator states."""
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def restore_rng(state: dict[str, Any]) -> None:
    """Put back the generator states of ``capture_rng``."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def save_checkpoint(
    directory: str, step: int, model: Any, state: dict[str, Any], card: dict[str, Any] | None = None
) -> Checkpoint:
    """Write ``step_<step>.zip`` (``model.save``), ``step_<step>.state.pt`` (``state``), the model's card
    ``step_<step>.json`` (``agents.model_card``, when given), then ``latest.json``."""
    os.makedirs(directory, exist_ok=True)
    model_file, state_file = (
        os.path.join(directory, f"step_{step}.zip"),
        os.path.join(directory, f"step_{step}.state.pt"),
    )
    atomic_write(model_file, model.save)
    atomic_write(state_file, lambda f: torch.save(state, f))
    if card is not None:
        write_card(model_file, card)
    pointer = {"step": int(step), "model": os.path.basename(model_file), "state": os.path.basename(state_file)}
    # Last: until this replace, latest.json names the previous complete checkpoint.
    atomic_write(os.path.join(directory, LATEST), lambda f: f.write(json.dumps(pointer).encode()))
    return Checkpoint(model_file, state_file, int(step))


def find_checkpoint(path: str) -> Checkpoint:
    """The checkpoint ``--resume path`` names: a run directory, its ``checkpoints/``, ``latest.json`` or a ``.zip``.

    ValueError saying what is accepted when there is none."""
    accepted = (
        "--resume takes a run directory (runs/<exp_name>), its checkpoints/ directory, a latest.json, "
        "or a checkpoint step_N.zip"
    )
    pointer = None
    if os.path.isdir(path):
        for candidate in (os.path.join(path, "checkpoints", LATEST), os.path.join(path, LATEST)):
            if os.path.isfile(candidate):
                pointer = candidate
                break
        else:
            raise ValueError(f"no checkpoint in {path!r} (no checkpoints/{LATEST} or {LATEST}): {accepted}")
    elif os.path.basename(path) == LATEST and os.path.isfile(path):
        pointer = path
    if pointer is not None:
        try:
            with open(pointer) as f:
                data = json.load(f)
            directory = os.path.dirname(os.path.abspath(pointer))
            ckpt = Checkpoint(
                os.path.join(directory, data["model"]), os.path.join(directory, data["state"]), int(data["step"])
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{pointer} is not a checkpoint pointer ({exc}): {accepted}") from exc
        for file in (ckpt.model, ckpt.state):
            if file is None or not os.path.isfile(file):
                raise ValueError(f"{pointer} names {file}, which does not exist")
        return ckpt
    if os.path.isfile(path) and path.endswith(".zip"):
        state = path[: -len(".zip")] + ".state.pt"
        return Checkpoint(path, state if os.path.isfile(state) else None, None)
    raise ValueError(f"nothing to resume at {path!r}: {accepted}")


def load_state(path: str) -> dict[str, Any]:
    """The run state saved beside a checkpoint (trusted: written by ``save_checkpoint``)."""
    # weights_only=False: the state holds numpy generator states and python tuples, our own files.
    return torch.load(path, map_location="cpu", weights_only=False)
