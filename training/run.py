"""Run bookkeeping both trainers share: seeds, the run folder, periodic events, the summary file."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shlex
import time
from typing import Any

import numpy as np
import torch

__all__ = ["Every", "Stopwatch", "command_line", "seed_everything", "start_run", "write_summary"]


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
    (``train.main(Args(...))``) records the command that repeats it too."""
    defaults = dataclasses.asdict(type(args)())
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
