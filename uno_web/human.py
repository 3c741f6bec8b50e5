"""``HumanAgent``: a person at a terminal, asked for each decision through text streams."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from uno_env import palette
from uno_env.actions import (
    ACCEPT,
    CALL_UNO,
    CATCH_UNO,
    CHALLENGE,
    CHOOSE_BLUE,
    CHOOSE_RED,
    DRAW,
    NUM_ACTIONS,
    PASS,
    PLAY_DOUBLE_FIRST,
    SWAP_WITH_FIRST,
    SWAP_WITH_LAST,
    action_name,
    card_of_double,
)
from uno_env.cards import (
    CARD_RANK,
    COLOR_NAMES,
    DRAW_TWO,
    NUM_CARD_TYPES,
    REVERSE,
    SKIP,
    WILD,
    WILD_CUSTOMIZABLE,
    WILD_DRAW_FOUR,
    WILD_SHUFFLE_HANDS,
    WILD_SWAP_HANDS,
)
from uno_env.palette import paint
from uno_env.policy import as_batch
from uno_env.render import table_text
from uno_env.seat_view import card_color, observation_fields, seat_view
from uno_env.text import phase_text


class HumanQuit(Exception):
    """The person asked to stop (``q``, ``quit`` or the end of the input)."""


def card_text(card: int, *, color: bool = True) -> str:
    """A card's name, coloured for a terminal (``uno_env.palette``)."""
    return palette.card_text(card, ansi=color)


def action_text(action: int, *, color: bool = True) -> str:
    """An action's name (R2), with the card or colour it names painted."""
    name = action_name(action)
    if action < NUM_CARD_TYPES:
        return "play " + card_text(action, color=color)
    if CHOOSE_RED <= action <= CHOOSE_BLUE:
        c = COLOR_NAMES[action - CHOOSE_RED]
        return "choose " + paint(c, c, ansi=color)
    if action >= PLAY_DOUBLE_FIRST:
        card = int(card_of_double(action))
        c = card_color(card)
        return "play double " + paint(f"{c} {CARD_RANK[card]}", c, ansi=color)
    return name


def describe_observation(o: np.ndarray, names: Sequence[str] | None = None, *, color: bool = True) -> str:
    """What a player sees (R11) as text (``uno_env.render.table_text``). ``names`` label relative
    seats (slot 0 is the observer, slot k the seat k places clockwise)."""
    n = int(observation_fields(o)["seat_present"].sum() + 0.5)
    names = list(names) if names is not None else ["you"] + [f"seat +{k}" for k in range(1, n)]
    return table_text(seat_view(o, 0, n, names), viewer=0, ansi_colors=color)


_CARD_EFFECT = {
    SKIP: "the next player loses their turn",
    REVERSE: "play changes direction (with two players it skips the other player)",
    DRAW_TWO: "the next player draws 2 and loses their turn",
}
_WILD_EFFECT = {
    WILD: "you then name the next colour",
    WILD_DRAW_FOUR: "you name the next colour and the next player draws 4 and loses their turn, "
    "unless they challenge it (legal only without a card of the current colour)",
    WILD_SHUFFLE_HANDS: "every hand is gathered, shuffled and dealt out again, then you name the colour",
    WILD_SWAP_HANDS: "you trade hands with a player of your choice, then name the colour",
    WILD_CUSTOMIZABLE: "its effect is the table's house rule (custom_wild_rule), then you name the colour",
}


def _why_playable(view: dict[str, Any], card: int) -> str:
    """Why a card may go on the pile now, from the observation only."""
    if card >= WILD:
        return "a wild card, playable on anything"
    top, c = view["top_card"], view["current_color"]
    reasons = []
    if c is not None and card_color(card) == c:
        reasons.append(f"matches the colour {c}")
    if top["id"] < WILD and CARD_RANK[card] == CARD_RANK[top["id"]]:
        reasons.append(f"matches the {top['name'].split(' ', 1)[1]}")
    return " and ".join(reasons) or "allowed by the table's rules"


def explain_action(o: np.ndarray, action: int, names: Sequence[str] | None = None) -> str:
    """One legal action in words: what it does now, and why it is allowed (observation only)."""
    view = seat_view(o)
    phase = view["phase"]
    pending = view["pending_draw"]
    if action < NUM_CARD_TYPES:
        if phase == "respond_draw_two" or phase == "respond_draw_four":
            return (
                f"stack it: the penalty grows to {pending + (2 if action < WILD else 4)} and passes to the next player"
            )
        effect = _WILD_EFFECT[action] if action >= WILD else _CARD_EFFECT.get(int(CARD_RANK[action]), "")
        why = "the card you just drew; " if phase == "post_draw" else ""
        return why + _why_playable(view, action) + (f"; {effect}" if effect else "")
    if action >= PLAY_DOUBLE_FIRST:
        return "play both copies of this number card at once (allow_doubles)"
    if action == DRAW:
        if pending:
            return f"take the {pending} penalty cards and lose your turn"
        return "take one card from the pile; if it fits you may play it straight away"
    if action == PASS:
        if view["drawn_card"] is not None:
            return "keep the card you drew and end your turn"
        return "end your turn (nothing can be played or drawn)"
    if CHOOSE_RED <= action <= CHOOSE_BLUE:
        c = COLOR_NAMES[action - CHOOSE_RED]
        mine = sum(1 for t in view["hand"] if t["color"] == c)
        return f"the next player must match {c} (you hold {mine} {c} card{'s' if mine != 1 else ''})"
    if action == CHALLENGE:
        prev = view["wd4_prev_color"]
        before = f" ({prev})" if prev is not None else ""
        return (
            f"accuse the player of holding a card of the colour in play before it{before}: if right, they "
            f"draw the penalty instead of you; if wrong, you draw it plus the rules' extra cards"
        )
    if action == ACCEPT:
        return f"draw the {pending} cards and lose your turn"
    if action == CALL_UNO:
        return "announce UNO (one card left after this turn); without it you may be caught and draw a penalty"
    if action == CATCH_UNO:
        return "the previous player is down to one card and did not call UNO: they draw the penalty"
    if SWAP_WITH_FIRST <= action <= SWAP_WITH_LAST:
        k = action - SWAP_WITH_FIRST + 1
        who = (
            names[k]
            if names is not None and k < len(names)
            else f"the player {k} seat{'s' if k != 1 else ''} clockwise"
        )
        return f"take the hand of {who} ({view['seats'][k]['hand_size']} cards); they get yours"
    return action_name(action)


def explain_decision(
    o: np.ndarray, legal: Sequence[int], names: Sequence[str] | None = None, *, color: bool = True
) -> str:
    """The help behind ``?``: the current phase and every legal action, in words."""
    view = seat_view(o)
    phase = view["phase"]
    text = phase_text(view)
    lines = [f"Phase {phase}: {text[0].upper()}{text[1:]}.", "Your legal moves:"]
    for k, a in enumerate(legal, 1):
        lines.append(f"  {k:>2}) {action_text(int(a), color=color)}: {explain_action(o, int(a), names)}")
    lines.append("Type a move's number or its name (e.g. 'draw', 'play red 7'); Enter shows the table again; q quits.")
    return "\n".join(lines)


class HumanAgent:
    """A person choosing each action at a terminal, from the observation only (R11); ``q`` raises ``HumanQuit``."""

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
            if text == "":
                self._show(o, legal)
                continue
            if text in ("?", "h", "help"):
                self._say(explain_decision(o, legal, self.names, color=self.color))
                continue
            if text.isascii() and text.isdigit():  # ASCII digits only, as every front end reads a number
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
