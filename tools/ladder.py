"""Build (or check) the stored reference results of a ladder: ``arena/ladder_<version>.json``.

python -m tools.ladder --version v2           # play the rungs' games, write the file
python -m tools.ladder --version v2 --check   # replay them and compare with the stored file
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import tyro

from agents.model_card import machine
from arena import PlayResult
from arena.ladder import LADDER, LADDERS, build_reference, load_reference, reference_path, write_reference


@dataclass
class Args:
    """``python -m tools.ladder``: build (or check) the stored reference results of a ladder."""

    version: str = LADDER.version
    """the ladder version to build or check"""
    check: bool = False
    """replay the reference games and compare them with the stored file (writes nothing)"""


def main(argv: Sequence[str] | None = None) -> int:
    """Build the stored reference results of a ladder version, or check them (``--check``)."""
    args = tyro.cli(Args, args=argv, prog="python -m tools.ladder", description=Args.__doc__)
    if args.version not in LADDERS:
        raise SystemExit(f"error: --version must be one of {sorted(LADDERS)}, got {args.version!r}")
    spec = LADDERS[args.version]
    path = reference_path(spec)

    def progress(r: PlayResult) -> None:
        print(f"  {' vs '.join(r.names)}: {r.games:,} games in {r.seconds:.1f} s", file=sys.stderr, flush=True)

    t0, cpu0, load0 = time.time(), time.process_time(), os.getloadavg()
    players = {}
    for p, _ in spec.games:
        print(f"ladder {spec.version}, {p} players:", file=sys.stderr, flush=True)
        players[str(p)] = build_reference(spec, p, progress=progress)
    if args.check:
        stored = load_reference(spec)["players"]
        same = all(stored[p]["tables"] == players[p]["tables"] for p in players)
        print(f"the reference games of ladder {spec.version} {'match' if same else 'DO NOT match'} {path}")
        return 0 if same else 1
    seconds = round(time.time() - t0, 1)
    build = {
        "seconds": seconds,
        "cpu_seconds": round(time.process_time() - cpu0, 1),
        "machine": machine(),
        "load_average_1_5_15_min": {
            "start": [round(x, 2) for x in load0],
            "end": [round(x, 2) for x in os.getloadavg()],
        },
    }
    write_reference(spec, players, path, build_seconds=seconds, build=build)
    print(f"wrote {path} in {seconds:.0f} s ({build['cpu_seconds']:.0f} CPU-s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
