"""``uno-play``: play UNO in the terminal against any mix of agents (a ``uno_web.session.Session``)."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, TextIO

import tyro

from agents.registry import AGENT_SPECS, parse_list
from uno_env.actions import PLAY_DOUBLE_FIRST, card_of_double
from uno_env.cards import NUM_CARD_TYPES
from uno_env.compile_notice import announce_compiling
from uno_env.rules import PRESETS_HELP
from uno_env.table import ask_one

from .human import HumanAgent, HumanQuit, action_text, card_text
from .session import Session

# Refusals name the command-line flags.
FLAG_NAMES = {
    "num_players": "--num-players",
    "seat": "--seat",
    "seed": "--seed",
    "rules": "--rules",
    "opponents": "--opponents",
}
_OPPONENTS_HELP = f"comma-separated agents for the other seats, one for all of them or one per seat: {AGENT_SPECS}"


HELP = """Play UNO in the terminal against any mix of agents.

    uno-play --opponents heuristic,random --num-players 3
    uno-play --opponents search:200 --save rounds.json   # step through them with uno-replay"""


@dataclass
class Args:
    """Command-line options of ``uno-play``."""

    opponents: Annotated[str, tyro.conf.arg(help=_OPPONENTS_HELP)] = "heuristic"
    num_players: int = 2
    """number of players, you included (2-10)"""
    rules: Annotated[str, tyro.conf.arg(help=PRESETS_HELP)] = "classic"
    seat: int = 0
    """your seat, 0 .. num-players - 1 (seats run clockwise; the dealer is drawn at random, R3)"""
    games: int = 1
    """rounds to play one after another"""
    seed: int | None = None
    """seed of the deal and of the agents (random when omitted)"""
    color: bool = True
    """cards in ANSI colours; --no-color (or the NO_COLOR environment variable) for plain text"""
    save: str = ""
    """write the rounds played (the last one even if you quit) to this file as a JSON list of game records, for uno-replay"""
    allow_other_table: bool = False
    """let saved models play rules or a table size their card says they were not trained for"""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """``Args`` from the command line (tyro: each field's docstring is its help)."""
    return tyro.cli(Args, args=sys.argv[1:] if argv is None else list(argv), prog="uno-play", description=HELP)


class ConsoleGame:
    """One person and ``agents`` around one ``Session``, narrated on ``output``."""

    def __init__(self, args: Args, input: TextIO, output: TextIO) -> None:
        if args.games < 1:
            raise ValueError(f"--games must be at least 1, got {args.games}")
        if args.save and not os.path.isdir(os.path.dirname(os.path.abspath(args.save))):
            # Checked now, not after a whole game that could then not be saved.
            raise ValueError(f"--save: the folder of {args.save!r} does not exist")
        # A local command: any spec (a saved model, your own class), as the person at the keyboard chose.
        # Recorded: a challenge's verdict (R6) is read from the record's events, and --save writes it.
        self.session = Session.open(
            args.rules,
            args.seat,
            parse_list(args.opponents),
            args.num_players,
            seed=args.seed,
            remote=False,
            allow_other_table=args.allow_other_table,
            names=FLAG_NAMES,
        )
        self.rules = self.session.rules
        self.args = args
        self.output = output
        self.color = args.color and "NO_COLOR" not in os.environ
        self.engine = self.session.engine
        self.names = self.session.names
        n, me = self.session.num_players, self.session.seat
        relative = [self.names[(me + k) % n] for k in range(n)]
        self.human = HumanAgent(input, output, color=self.color, names=relative)
        self.records: list[dict] = []

    def say(self, text: str = "") -> None:
        """One line of narration."""
        self.output.write(text + "\n")
        self.output.flush()

    def play(self) -> None:
        """Every round of ``--games``; raises ``HumanQuit`` when the person quits."""
        for game in range(self.args.games):
            if game:
                if self.args.save:
                    self.records.append(self.engine.record(0))
                self.session.reset()
            self.say(
                f"=== Round {game + 1} of {self.args.games}: {self.args.num_players} players, rules "
                f"{self.args.rules!r}; you are seat {self.args.seat} ==="
            )
            self.play_round()

    def play_round(self) -> None:
        """One round to its end, narrating every action."""
        session, e = self.session, self.engine
        state = e.game_state(0)
        self.say(f"First card: {card_text(state['top_card'], color=self.color)}")
        while not session.over:
            seat = int(e.current_player[0])
            before = e.game_state(0)
            first = session.event_count
            if seat == session.seat:
                events = session.play(ask_one(self.human, e, 0, session.rng, engine_access=False))
            else:
                session.advance()
                events = e.record_events(0, first)
            self._narrate(seat, session.last_action, before, e.game_state(0))
            for event in events:
                if event["type"] == "challenge":
                    self._verdict(event)
        state = e.game_state(0)
        winner = state["winner"]
        winners = [] if winner is None else winner if isinstance(winner, list) else [winner]
        if winners:
            who = ", ".join(self.names[p] for p in winners)
            self.say(f"*** Round over: {who} won{' - well played!' if session.seat in winners else '.'} ***")
        else:
            self.say("*** Round over: no winner (turn limit). ***")
        for p in range(state["num_players"]):
            left = self._cards(state["hands"][p])
            self.say(f"  {self.names[p]}: score {state['scores'][p]}; cards left: {left}")

    def _narrate(self, seat: int, action: int, before: dict, after: dict) -> None:
        self.say(f"{self.names[seat]}: {action_text(action, color=self.color)}")
        played: Counter[int] = Counter()
        if action < NUM_CARD_TYPES:
            played[action] = 1
        elif action >= PLAY_DOUBLE_FIRST:
            played[int(card_of_double(action))] = 2
        for p in range(after["num_players"]):
            old, new = Counter(before["hands"][p]), Counter(after["hands"][p])
            if p == seat:
                old = old - played
            if old == new:
                continue
            if p == self.args.seat:
                gained = new - old
                if not old - new:
                    self.say("  you take: " + self._cards(gained.elements()))
                else:  # Shuffle or Swap Hands (R5)
                    self.say("  your hand is now: " + self._cards(new.elements()))
            else:
                size = sum(new.values())
                change = size - sum(old.values())
                what = f"takes {change} card{'s' if change != 1 else ''}" if change > 0 else "has a new hand"
                self.say(f"  {self.names[p]} {what} ({size} held)")

    def _verdict(self, event: dict) -> None:
        """Whether the challenged Wild Draw Four was played illegally (R6), said after the cards taken."""
        played_by = self.names[event["challenged"]]
        if event["verdict"] == "guilty":
            self.say(
                f"  Challenge: GUILTY - {played_by} played the Wild Draw Four while holding a matching card (R6) "
                f"and takes the penalty"
            )
        else:
            self.say(
                f"  Challenge: innocent - {played_by} played the Wild Draw Four legally; the challenger takes "
                f"the penalty"
            )

    def save(self) -> str | None:
        """Write every round played, the current one included, for ``uno-replay``; the path, or None."""
        if not self.args.save:
            return None
        with open(self.args.save, "w") as f:
            json.dump(self.records + [self.engine.record(0)], f)
        return self.args.save

    def _cards(self, cards) -> str:
        return ", ".join(card_text(c, color=self.color) for c in sorted(cards)) or "(none)"


def main(argv: Sequence[str] | None = None, input: TextIO | None = None, output: TextIO | None = None) -> int:
    """Entry point of ``uno-play``: 0 after the last round or a quit, 2 on bad options."""
    args = parse_args(argv)
    announce_compiling("uno-play")
    output = output if output is not None else sys.stdout
    try:
        game = ConsoleGame(args, input if input is not None else sys.stdin, output)
    except ValueError as err:
        sys.stderr.write(f"uno-play: error: {err}\n")
        return 2
    try:
        game.play()
    except (HumanQuit, KeyboardInterrupt):
        output.write("Bye.\n")
    saved = game.save()
    if saved:
        output.write(f"Saved the game to {saved} (uno-replay {saved}).\n")
    output.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
