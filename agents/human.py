"""``HumanAgent``: a person at a terminal, asked for each decision through text streams."""

from __future__ import annotations

import sys
from typing import Sequence, TextIO

import numpy as np

from uno_env.actions import CHOOSE_BLUE, CHOOSE_RED, DOUBLE_FIRST, NUM_ACTIONS, action_name, card_of_double
from uno_env.cards import CARD_COLOR, CARD_RANK, COLOR_NAMES, NUM_CARD_TYPES, WILD, card_name
from uno_env.observation import (
    OBS_DIRECTION,
    OBS_DRAW_PILE,
    OBS_PENDING,
    OBS_SCORES,
    OBS_UNO,
    PHASE_NAMES,
    SCORE_SCALE,
    color_of,
    drawn_of,
    hand_size_at,
    held,
    num_seats,
    phase_of,
    top_of,
)
from uno_env.policy import as_batch

# ANSI SGR colours per card colour (R1 order) and for wilds.
_ANSI = ("\x1b[1;31m", "\x1b[1;33m", "\x1b[1;32m", "\x1b[1;34m")
_ANSI_WILD = "\x1b[1;35m"
_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"


class HumanQuit(Exception):
    """The person asked to stop (``q``, ``quit`` or the end of the input)."""


def paint(text: str, card_or_color: int, *, color: bool, is_color: bool = False) -> str:
    """``text`` in the terminal colour of a card type (or of a colour 0–3 with ``is_color``)."""
    if not color:
        return text
    if is_color:
        code = _ANSI[card_or_color]
    else:
        code = _ANSI[CARD_COLOR[card_or_color]] if card_or_color < WILD else _ANSI_WILD
    return f"{code}{text}{_RESET}"


def card_text(card: int, *, color: bool = True) -> str:
    """A card's name, coloured for a terminal."""
    return paint(card_name(card), card, color=color)


def action_text(action: int, *, color: bool = True) -> str:
    """An action's name (R2), with the card or colour it names painted."""
    name = action_name(action)
    if action < NUM_CARD_TYPES:
        return "play " + card_text(action, color=color)
    if CHOOSE_RED <= action <= CHOOSE_BLUE:
        c = action - CHOOSE_RED
        return "choose " + paint(COLOR_NAMES[c], c, color=color, is_color=True)
    if action >= DOUBLE_FIRST:
        card = card_of_double(action)
        c = int(CARD_COLOR[card])
        return "play double " + paint(f"{COLOR_NAMES[c]} {CARD_RANK[card]}", c, color=color, is_color=True)
    return name


def _hand(o: np.ndarray) -> list[int]:
    return [t for t in range(NUM_CARD_TYPES) for _ in range(held(o, t))]


def describe_observation(o: np.ndarray, names: Sequence[str] | None = None, *, color: bool = True) -> str:
    """What a player sees (R11), as text: table, own hand. ``names`` label relative seats
    (slot 0 is the observer, slot k the seat k places clockwise)."""
    n = num_seats(o)
    names = list(names) if names is not None else ["you"] + [f"seat +{k}" for k in range(1, n)]
    phase = PHASE_NAMES[phase_of(o)]
    top = top_of(o)
    c = color_of(o)
    bold = (lambda s: f"{_BOLD}{s}{_RESET}") if color else (lambda s: s)
    direction = "clockwise" if o[OBS_DIRECTION] > 0 else "counter-clockwise"
    colour = paint(COLOR_NAMES[c], c, color=color, is_color=True) if c >= 0 else "none yet"
    lines = [
        bold(f"Top card: {card_text(top, color=color)}") + f" | colour: {colour} | play goes {direction}"
        f" | draw pile: {int(round(o[OBS_DRAW_PILE]))}",
    ]
    pending = int(round(o[OBS_PENDING]))
    if pending:
        lines.append(f"Pending draw: {pending} cards")
    width = max(len(x) for x in names[:n])
    for k in range(n):
        size = hand_size_at(o, k)
        uno = "  UNO!" if o[OBS_UNO + k] > 0.5 else ""
        score = int(round(SCORE_SCALE * o[OBS_SCORES + k]))
        lines.append(f"  {names[k]:<{width}}  {size:>3} card{'s' if size != 1 else ' '}  score {score}{uno}")
    lines.append("Your hand: " + (", ".join(card_text(t, color=color) for t in _hand(o)) or "(empty)"))
    drawn = drawn_of(o)
    if drawn >= 0:
        lines.append(f"You drew: {card_text(drawn, color=color)}")
    lines.append(f"Phase: {phase}")
    return "\n".join(lines)


class HumanAgent:
    """A person choosing each action at a terminal; an ``Agent`` like the others.

    For each row of the batch it prints what the player sees (the observation only, R11),
    numbers the legal actions and reads a choice from ``input``:

    | input | meaning |
    |---|---|
    | a number 1..k | the legal action with that number |
    | an action's name (``draw``, ``pass``, ``play red 7``, ``choose blue``, ...) | that action, if legal |
    | empty line, ``?``, ``help`` | show the table and the moves again |
    | ``q``, ``quit``, ``exit``, end of input | raise ``HumanQuit`` |

    Anything else is answered with a message saying what is allowed, and a new prompt.
    """

    name = "human"

    def __init__(
        self,
        input: TextIO | None = None,
        output: TextIO | None = None,
        *,
        color: bool = True,
        names: Sequence[str] | None = None,
    ) -> None:
        """``input``/``output`` default to stdin/stdout; ``names`` label relative seats."""
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.color = color
        self.names = names

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Ask for one action per row (rng unused: the person decides)."""
        obs, mask = as_batch(observation, action_mask)
        return np.array([self.ask(obs[b], mask[b]) for b in range(obs.shape[0])], np.int64)

    def _say(self, text: str) -> None:
        self.output.write(text + "\n")
        self.output.flush()

    def ask(self, o: np.ndarray, m: np.ndarray) -> int:
        """One decision: show the table and the numbered legal actions, read until valid."""
        legal = [int(a) for a in np.flatnonzero(m)]
        if not legal:
            raise ValueError("no legal action in this mask: the round is over")
        self._show(o, legal)
        by_name = {action_name(a): a for a in legal}
        while True:
            choices = "1" if len(legal) == 1 else f"1-{len(legal)}"
            self.output.write(f"Your move [{choices}, ? for help, q to quit]: ")
            self.output.flush()
            line = self.input.readline()
            if line == "":
                self._say("")
                raise HumanQuit("end of input")
            text = " ".join(line.strip().lower().split())
            if text in ("q", "quit", "exit"):
                raise HumanQuit(text)
            if text in ("", "?", "h", "help"):
                self._show(o, legal)
                continue
            if text.isdigit():
                k = int(text)
                if 1 <= k <= len(legal):
                    return legal[k - 1]
                self._say(f"There is no move {k}: type a number from 1 to {len(legal)}, a move's name, or q to quit.")
                continue
            if text in by_name:
                return by_name[text]
            known = text in {action_name(a) for a in range(NUM_ACTIONS)}
            reason = "is not legal now" if known else "is not a move"
            self._say(f"'{line.strip()}' {reason}: type a number from 1 to {len(legal)}, a move's name, or q to quit.")

    def _show(self, o: np.ndarray, legal: list[int]) -> None:
        self._say(describe_observation(o, self.names, color=self.color))
        for k, a in enumerate(legal, 1):
            self._say(f"  {k:>2}) {action_text(a, color=self.color)}")
