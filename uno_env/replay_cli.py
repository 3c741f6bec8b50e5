"""``uno-replay FILE``: step through a recorded game in the terminal.

    uno-replay game.json                 # the omniscient view: every hand
    uno-replay game.json --view 1        # what seat 1 could see (docs/rules.md R11)
    uno-replay games.jsonl --game 3 --no-pause

Keys while paused: Enter or ``n`` next, ``p`` previous, a number jumps, ``v N`` / ``v all`` views, ``q`` quits.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TextIO

import numpy as np
import tyro

from .actions import action_name
from .compile_notice import announce_compiling
from .engine import describe_event, record_start, redact, replay
from .render import table_text
from .seat_view import state_view

__all__ = ["Args", "load_records", "ReplaySteps", "main"]


@dataclass
class Args:
    """Command-line options of ``uno-replay``."""

    file: Annotated[tyro.conf.Positional[str], tyro.conf.arg(metavar="FILE")]
    """a record as JSON (Engine(record=True).record(i), uno-play --save), a JSON list of them, or JSON Lines"""
    game: int = 0
    """which record of FILE (0 = the first)"""
    view: str = "all"
    """'all' (the omniscient view: every hand) or a seat number (what that seat could see, R11)"""
    pause: bool = True
    """wait for a key between steps; --no-pause prints every step at once"""


def load_records(path: str) -> list[dict[str, Any]]:
    """The records of a JSON, JSON-list or JSON Lines file; ValueError saying what is wrong."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as err:
        raise ValueError(f"cannot read {path!r}: {err.strerror}") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:  # JSON Lines: one record a line
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as err:
            raise ValueError(f"{path!r} is neither JSON nor JSON Lines ({err.msg} at line {err.lineno})") from err
    records = data if isinstance(data, list) else [data]
    need = {"num_players", "rules", "start", "actions", "events"}
    for k, r in enumerate(records):
        if not isinstance(r, dict) or not need <= set(r):
            got = sorted(r) if isinstance(r, dict) else type(r).__name__
            raise ValueError(
                f"record {k} of {path!r} is not a game record: it needs the keys {sorted(need)}, got {got}"
            )
    if not records:
        raise ValueError(f"{path!r} holds no record")
    return records


class ReplaySteps:
    """Every step of one record: the acting seat, the action, its events and the state after it."""

    def __init__(self, record: dict[str, Any]) -> None:
        replay(record)  # checks the record first: a ValueError names the first event that differs
        self.num_players = int(record["num_players"])
        engine = record_start(record)
        self.open_hands = engine.rules.open_hands  # every hand is public (R11): each view shows them all
        events = record["events"]
        seen = len(engine.record(0)["events"])
        self.steps: list[tuple[int | None, int | None, list[dict], dict]] = [
            (None, None, events[:seen], engine.game_state(0))
        ]
        for action in record["actions"]:
            seat = int(engine.current_player[0])
            engine.step(np.array([action]))
            now = len(engine.record(0)["events"])
            self.steps.append((seat, int(action), events[seen:now], engine.game_state(0)))
            seen = now

    def __len__(self) -> int:
        return len(self.steps)

    def show(self, k: int, view: int | None) -> str:
        """Step k as text, from seat ``view``'s side (``None``: omniscient)."""
        seat, action, events, state = self.steps[k]
        last = len(self.steps) - 1
        head = "the deal" if action is None else f"player {seat}: {action_name(action)}"
        lines = [f"--- step {k}/{last}: {head} ---"]
        lines += ["  " + _event_text(e, view, self.open_hands) for e in events]
        lines.append(_table(state, view, self.open_hands))
        return "\n".join(lines)


def _event_text(event: dict[str, Any], view: int | None, open_hands: bool) -> str:
    """An event as seat ``view`` saw it (``None``: omniscient)."""
    return describe_event(redact(event, view, open_hands))


def _table(state: dict[str, Any], view: int | None, open_hands: bool) -> str:
    """The table after a step (``uno_env.render.table_text``) with the hands ``view`` may see."""
    acting = None if state["phase"] == "round_over" else state["current_player"]
    table = state_view(state, view, open_hands=open_hands)
    return table_text(table, acting=acting, viewer=view)


def _parse_view(text: str, num_players: int) -> int | None:
    """``'all'`` -> None, a seat number -> that seat; ValueError naming what is allowed."""
    if text.strip().lower() in ("all", "omniscient"):
        return None
    if text.strip().isdigit() and int(text) < num_players:
        return int(text)
    raise ValueError(f"view must be 'all' or a seat 0..{num_players - 1}, got {text!r}")


def _browse(steps: ReplaySteps, view: int | None, input: TextIO, output: TextIO) -> None:
    """The paused loop: one step at a time, moved by the keys (docs/engine.md, Records and replay)."""
    k, last = 0, len(steps) - 1
    output.write(steps.show(k, view) + "\n")
    while True:
        output.write(
            f"[step {k}/{last}] Enter/n next, p previous, a number jumps, v N or v all changes the view, q quits: "
        )
        output.flush()
        line = input.readline()
        if line == "":
            output.write("\n")
            return
        cmd = line.strip().lower()
        if cmd == "q":
            return
        if cmd in ("", "n"):
            if k == last:
                output.write("That was the last step (q quits, p goes back).\n")
                continue
            k += 1
        elif cmd == "p":
            k = max(0, k - 1)
        elif cmd.isdigit():
            if int(cmd) > last:
                output.write(f"There is no step {cmd}: steps are 0..{last}.\n")
                continue
            k = int(cmd)
        elif cmd.startswith("v"):
            try:
                view = _parse_view(cmd[1:], steps.num_players)
            except ValueError as err:
                output.write(f"{err}.\n")
                continue
        else:
            output.write(
                f"'{line.strip()}' is not a key here: Enter or n, p, a step number 0..{last}, v N, v all or q.\n"
            )
            continue
        output.write(steps.show(k, view) + "\n")


def main(argv: Sequence[str] | None = None, input: TextIO | None = None, output: TextIO | None = None) -> int:
    """Entry point of ``uno-replay``: 0 when done or quit, 2 on a bad file or option."""
    args = tyro.cli(Args, args=argv, prog="uno-replay", description=__doc__.splitlines()[0].replace("``", ""))
    announce_compiling("uno-replay")
    input = input if input is not None else sys.stdin
    output = output if output is not None else sys.stdout
    try:
        records = load_records(args.file)
        if not 0 <= args.game < len(records):
            raise ValueError(
                f"--game must be 0..{len(records) - 1} ({len(records)} records in {args.file!r}), got {args.game}"
            )
        record = records[args.game]
        view = _parse_view(args.view, int(record["num_players"]))
        steps = ReplaySteps(record)
    except (ValueError, KeyError, TypeError) as err:
        sys.stderr.write(f"uno-replay: error: {err}\n")
        return 2
    if not args.pause:
        output.write("\n".join(steps.show(k, view) for k in range(len(steps))) + "\n")
        return 0
    try:
        _browse(steps, view, input, output)
    except KeyboardInterrupt:
        output.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
