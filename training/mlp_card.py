"""The card beside a shipped MLP (``agents.mlp``): what it is, the command that made it, how it did."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any


def command_line(command: str, args: Any) -> str:
    """``python -m COMMAND --save`` and the other fields of the dataclass ``args`` as flags (tuples
    spaced, empty ones and booleans left out): how the shipped weights were made."""
    flags = []
    for k, v in dataclasses.asdict(args).items():
        if k in ("save", "out") or isinstance(v, bool) or v is None or v == ():
            continue
        flags.append(f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, tuple) else v}")
    return " ".join(["python -m", command, "--save", *flags])


def write_mlp_card(path: Path, name: str, what: str, command: str, args: Any, report: dict) -> None:
    """Write ``path`` with suffix ``.json``: the network's file and size, ``what`` it predicts,
    the ``command`` and dataclass ``args`` that trained it, the commit, the time, the machine and
    its held-out ``report``."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    machine = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    card = {
        "name": name,
        "model_file": path.name,
        "model_bytes": path.stat().st_size,
        "what": what,
        "command": command,
        "train_args": dataclasses.asdict(args),
        "commit": commit,
        "finished": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{machine}, {os.cpu_count()} CPUs",
        "evaluation": report,
    }
    path.with_suffix(".json").write_text(json.dumps(card, indent=1, default=float) + "\n")
