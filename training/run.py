"""A training run's files: seeds, the run folder, its command line, crash-safe checkpoints, the summary."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shlex
import time
from collections.abc import Callable
from typing import IO, Any, NamedTuple

import numpy as np
import torch

from agents.model_card import write_card

__all__ = [
    "LATEST",
    "Checkpoint",
    "Every",
    "Stopwatch",
    "atomic_write",
    "capture_rng",
    "command_line",
    "find_checkpoint",
    "load_state",
    "remove_partial",
    "restore_rng",
    "save_checkpoint",
    "seed_everything",
    "start_run",
    "usable_cores",
    "write_summary",
]


class Every:
    """Due once each time the step count reaches the next multiple of ``period`` after ``start`` (never with 0)."""

    def __init__(self, period: int, start: int = 0) -> None:
        self.period = int(period)
        self.next = (start // self.period + 1) * self.period if self.period else None

    def due(self, step: int) -> bool:
        """Whether the event is due at ``step`` (then the next one is scheduled)."""
        if self.next is None or step < self.next:
            return False
        self.next += self.period
        return True


class Stopwatch:
    """Wall and process-CPU time since creation; ``expired()`` once ``max_minutes`` (0: never) have passed."""

    def __init__(self, max_minutes: float = 0.0) -> None:
        self.max_minutes = max_minutes
        self.wall, self.cpu = time.time(), time.process_time()

    def seconds(self) -> float:
        """Wall-clock seconds so far."""
        return time.time() - self.wall

    def cpu_seconds(self) -> float:
        """CPU seconds of this process so far."""
        return time.process_time() - self.cpu

    def expired(self) -> bool:
        """Whether the time limit has passed."""
        return bool(self.max_minutes) and self.seconds() > 60 * self.max_minutes


def usable_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def seed_everything(seed: int, torch_threads: int = 0) -> None:
    """Seed python, numpy and torch (the games and opponents are seeded where they are built); set
    torch's CPU threads (0: torch's default)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch_threads:
        torch.set_num_threads(torch_threads)


def command_line(args: Any, script: str = "train.py") -> str:
    """``python SCRIPT`` (``SCRIPT`` alone for a command such as ``uno-train``) with the flags of the
    ``Args`` dataclass ``args`` that differ from its defaults.

    Rebuilt from the arguments rather than read from ``sys.argv``, so a run started from Python
    (``train.main(Args(...))``) records the command that repeats it too. The defaults compared with are
    those of the run's ``backend`` where it has one, since each backend has its own shape."""
    defaults = dataclasses.asdict(type(args)())
    if hasattr(args, "backend"):
        defaults |= {k: v for k, v in dataclasses.asdict(type(args)(backend=args.backend)).items() if k != "backend"}
    words = ["python", script] if script.endswith(".py") else [script]
    for key, value in dataclasses.asdict(args).items():
        default = defaults.get(key)
        if _same(value, default):
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            words.append(flag if value else "--no-" + key.replace("_", "-"))
        elif isinstance(value, (list, tuple)):
            words += [flag, *(str(v) for v in value)]
        else:
            words += [flag, str(value)]
    return shlex.join(words)


def _same(a: Any, b: Any) -> bool:
    return list(a) == list(b) if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) else a == b


def start_run(args: Any, script: str = "train.py") -> str:
    """Create ``<output_dir>/<exp_name>/`` with ``checkpoints/``, ``args.json`` and ``command.txt`` (the
    command that repeats the run, ``command_line``); returns the folder.
    The first thing a run writes: call it once every argument has been checked."""
    run_dir = os.path.join(args.output_dir, args.exp_name)
    os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
    with open(os.path.join(run_dir, "args.json"), "w") as f:
        json.dump(dataclasses.asdict(args), f, indent=2)
    with open(os.path.join(run_dir, "command.txt"), "w") as f:
        f.write(command_line(args, script) + "\n")
    return run_dir


def write_summary(run_dir: str, summary: dict[str, Any]) -> None:
    """``final_eval.json``: the run's arguments, figures, evaluations."""
    with open(os.path.join(run_dir, "final_eval.json"), "w") as f:
        json.dump(summary, f, indent=2)


# Checkpoints. Each file goes to a temporary in its directory, is fsynced and renamed onto its
# name, and latest.json moves last, so a kill at any instant leaves latest.json naming the
# previous complete checkpoint.

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
