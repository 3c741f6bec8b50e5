"""The game as text for one seat: the prompt a language model reads and the parser of its reply.

| piece | what it does |
|---|---|
| ``legal_moves(mask, ...)`` | the legal actions of a mask row as ``Move`` records: number, action id, name (``uno_env.action_name``), the words that also name it |
| ``build_prompt(observation, mask, ...)`` | the one builder of the prompt: the seat's view (``uno_env.seat_view``: hand, top card, colour, phase, every seat's counts and scores), the round so far in words (record events as the seat saw them, ``describe_event``), the rules that differ from classic, the legal moves as numbered lines |
| ``engine_prompt(engine, i)`` | ``build_prompt`` for the player to act in game ``i`` of an engine, with the round so far from ``history_events`` (``Engine(history=K)``) or the record (``record=True``) |
| ``parse_reply(reply, moves)`` | the action a reply names: a move's number or its name; case, spacing, punctuation and a little chatter ("I play 3", "Move: draw") are tolerated; anything else raises ``BadReply`` whose message lists what is allowed |
| ``seat_intro(rules, seat, num_players, ...)`` | the few lines a seat reads once, before its first prompt (who it is, the rules, how to reply): the game prompt of frameworks that send one (TextArena) |
| ``refusal(error)`` | the line that sends a refused reply's ``BadReply`` message back to the player |

Everything here reads what the seat may see (R11): its observation row, its legal mask and
events passed through ``uno_env.redact``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .actions import CHOOSE_COLOR_FIRST, NUM_ACTIONS, PLAY_DOUBLE_FIRST, SWAP_WITH_FIRST, action_name
from .cards import NUM_CARD_TYPES
from .checks import is_int
from .engine import describe_event, redact
from .rules import MAX_PLAYERS, MIN_PLAYERS, UnoRules, parse_rules
from .seat_view import seat_view

__all__ = [
    "BadReply",
    "Move",
    "build_prompt",
    "engine_prompt",
    "legal_moves",
    "parse_reply",
    "refusal",
    "round_events",
    "seat_intro",
]

REPLY_INSTRUCTION = "Reply with the number or the name of exactly one legal move."
TURN_TEXT = "Each of your turns shows your hand, the table, the round so far and your legal moves, numbered."

# What each phase asks of the seat to act, in words.
PHASE_TEXT = {
    "play": "your turn: play a card that matches the colour or the symbol (or a wild), or draw",
    "post_draw": "you drew {drawn}: play it now or pass",
    "choose_color": "choose the colour for the wild you played",
    "choose_swap_target": "choose the player whose hand you take in exchange for yours",
    "respond_draw_two": "a draw two is pending against you ({pending} cards): stack one or take the cards",
    "respond_draw_four": (
        "a wild draw four is pending against you ({pending} cards; the colour before it was {prev}): "
        "challenge it or accept it"
    ),
    "round_over": "the round is over",
}


class BadReply(ValueError):
    """A reply that names no legal move, or more than one; the message says what is allowed."""


@dataclass(frozen=True)
class Move:
    """One legal move as the prompt numbers it: ``number`` (from 1), the action id, its name and
    the other words that name it alone (the card of a play, the colour of a choice, the player of
    a swap)."""

    number: int
    action: int
    name: str
    aliases: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The move's line in the prompt (its name and, for a swap, whom it names)."""
        extra = [a for a in self.aliases if a.startswith("swap with ") and a != self.name]
        return f"{self.name} ({extra[0][len('swap with ') :]})" if extra else self.name


def _seat_names(num_players: int, names: Sequence[str] | None) -> list[str]:
    if names is None:
        return [f"player {p}" for p in range(num_players)]
    if len(names) != num_players:
        raise ValueError(f"names must give one name per seat ({num_players}), got {len(names)}: {list(names)!r}")
    return [str(n) for n in names]


def _check_mask(action_mask: Any) -> np.ndarray:
    mask = np.asarray(action_mask)
    if mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"action_mask must be one row of {NUM_ACTIONS} legal flags, got shape {mask.shape}")
    return mask.astype(bool, copy=False)


def legal_moves(
    action_mask: Any, seat: int = 0, num_players: int = 2, names: Sequence[str] | None = None
) -> list[Move]:
    """The legal actions of one mask row (bool [116]) as numbered ``Move`` records, in id order.
    ``seat``, ``num_players`` and ``names`` name the player a swap targets."""
    mask = _check_mask(action_mask)
    seat_names = _seat_names(num_players, names)
    moves = []
    for number, a in enumerate(np.flatnonzero(mask).tolist(), start=1):
        name = action_name(a)
        aliases: list[str] = []
        if a < NUM_CARD_TYPES or a >= PLAY_DOUBLE_FIRST:
            aliases.append(name[len("play ") :])  # "red 7", "double red 7"
        elif CHOOSE_COLOR_FIRST <= a < CHOOSE_COLOR_FIRST + 4:
            aliases.append(name[len("choose ") :])  # "blue"
        elif SWAP_WITH_FIRST <= a < PLAY_DOUBLE_FIRST:
            aliases.append(f"swap with {seat_names[(seat + a - SWAP_WITH_FIRST + 1) % num_players]}")
        moves.append(Move(number, a, name, tuple(aliases)))
    return moves


def _moves_text(moves: Sequence[Move]) -> str:
    return ", ".join(f"{m.number}. {m.label}" for m in moves)


def _normalise(text: str) -> str:
    text = text.lower().replace("_", " ")
    text = re.sub(r"[^a-z0-9+]+", " ", text)
    return " ".join(text.split())


# Words around a bare move number that still leave it the only thing said ("I play 3", "Move: 3").
_FILLER = frozenset(
    "i ll will my move moves is it play plays choose chose pick select take option number answer reply action "
    "the a final go with".split()
)


def _by_number(words: list[str], moves: Sequence[Move]) -> Move | None | str:
    """The move of a reply that is a number among filler words; None when it is not such a reply,
    a message when the number is out of range."""
    rest = [w for w in words if w not in _FILLER]
    if len(rest) != 1 or not rest[0].isdigit():
        return None
    k = int(rest[0])
    if not 1 <= k <= len(moves):
        return f"there is no move {k}: the moves are numbered 1 to {len(moves)}"
    return moves[k - 1]


def _by_name(text: str, moves: Sequence[Move]) -> list[Move]:
    """The moves whose name or alias occurs in ``text`` as whole words, a name inside a longer
    matched name not counted ("draw" inside "play wild draw four")."""
    spans: list[tuple[int, int, Move]] = []
    for m in moves:
        for word in (m.name, *m.aliases):
            for hit in re.finditer(rf"(?<![a-z0-9+]){re.escape(_normalise(word))}(?![a-z0-9+])", text):
                spans.append((hit.start(), hit.end(), m))
    kept = {
        m.number: m
        for s, e, m in spans
        if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) and m2 is not m for s2, e2, m2 in spans)
    }
    return [kept[k] for k in sorted(kept)]


def parse_reply(reply: Any, moves: Sequence[Move]) -> int:
    """The action id ``reply`` names among ``moves`` (``legal_moves``): a move's number ("3",
    "3.", "I play 3", "Move: 3") or its name or alias ("play red 7", "Red 7", "choose blue",
    "blue"), in any case and spacing, with a little chatter around it; "3. play red 7" when both
    agree. Anything else raises ``BadReply``: what was wrong and the numbered legal moves."""
    allowed = f"{REPLY_INSTRUCTION} The legal moves: {_moves_text(moves)}"
    if not moves:
        raise BadReply("there is no legal move to make: it is not your turn")
    if not isinstance(reply, str):
        raise BadReply(f"a reply is text, got {type(reply).__name__} {reply!r}. {allowed}")
    text = _normalise(reply)
    shown = reply.strip()[:200]
    if not text:
        raise BadReply(f"the reply {shown!r} is empty. {allowed}")
    words = text.split()
    numbered = _by_number(words, moves)
    if isinstance(numbered, str):
        raise BadReply(f"{numbered}. {allowed}")
    if numbered is not None:
        return numbered.action
    named = _by_name(text, moves)
    lead = re.match(r"(\d+) (.+)$", text)  # "3. play red 7": a number and a name must agree
    if lead and named and 1 <= int(lead.group(1)) <= len(moves):
        by_number = moves[int(lead.group(1)) - 1]
        if named == [by_number]:
            return by_number.action
        raise BadReply(
            f"the reply {shown!r} gives move {by_number.number} ({by_number.label}) but names "
            f"{' and '.join(m.label for m in named)}. {allowed}"
        )
    if len(named) == 1:
        return named[0].action
    if len(named) > 1:
        raise BadReply(
            f"the reply {shown!r} names more than one move ({', '.join(m.label for m in named)}); "
            f"give exactly one. {allowed}"
        )
    raise BadReply(f"the reply {shown!r} names no legal move. {allowed}")


_CLASSIC = UnoRules().to_dict()


def _rules_text(rules: UnoRules) -> str:
    classic = _CLASSIC
    changed = [
        f"{name}={value}"
        for name, value in rules.to_dict().items()
        if name not in ("card_points", "card_counts") and value != classic[name]
    ]
    for name in ("card_counts", "card_points"):
        if getattr(rules, name) is not None:
            changed.append(f"{name} set by the table (not the deck's defaults)")
    if not changed:
        return "classic UNO rules (uno_env's classic preset)"
    return "UNO with these options changed from uno_env's classic preset: " + "; ".join(changed)


def _intro_line(rules: UnoRules, seat: int, seat_names: Sequence[str]) -> str:
    n = len(seat_names)
    return f"You are {seat_names[seat]} (seat {seat}) at a table of {n} players playing {_rules_text(rules)}."


def seat_intro(rules: Any, seat: int, num_players: int, names: Sequence[str] | None = None) -> str:
    """What ``seat`` reads once before its first prompt: who it is at the table, the rules, what
    each turn shows and how to reply (``rules`` anything ``parse_rules`` takes)."""
    rules = parse_rules(rules)
    if not is_int(num_players) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise ValueError(f"num_players must be an integer in {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players!r}")
    seat_names = _seat_names(num_players, names)
    if not is_int(seat) or not 0 <= seat < num_players:
        raise ValueError(f"seat must be in 0..{num_players - 1} for a table of {num_players}, got {seat!r}")
    return "\n".join((_intro_line(rules, int(seat), seat_names), TURN_TEXT, REPLY_INSTRUCTION))


def refusal(error: BadReply) -> str:
    """The line that sends a refused reply back to its player: the parser's message, which says
    what was wrong and lists the legal moves."""
    return f"That reply was refused: {error}"


def _seat_line(s: dict[str, Any], seat: int, n: int, direction: int) -> str:
    who = "you" if s["seat"] == seat else s["name"]
    offset = (s["seat"] - seat) % n
    if offset:
        where = "next to play after you" if offset == (1 if direction > 0 else n - 1) else f"+{offset} clockwise"
        who = f"{who} ({where})"
    held = f"{s['hand_size']} card{'s' * (s['hand_size'] != 1)}"
    notes = [held, f"{s['score']} points"]
    for key, note in (
        ("uno", "has called UNO"),
        ("catchable", "can be caught not calling UNO"),
        ("partner", "your partner"),
        ("eliminated", "eliminated"),
    ):
        if s[key]:
            notes.append(note)
    return f"- {who}: {', '.join(notes)}"


def build_prompt(
    observation: Any,
    action_mask: Any,
    *,
    rules: Any = None,
    seat: int = 0,
    num_players: int | None = None,
    names: Sequence[str] | None = None,
    events: Sequence[dict[str, Any]] | None = None,
) -> str:
    """The prompt for one seat (module table): ``observation`` its row (float32 [D]),
    ``action_mask`` its legal flags (bool [116]; all False when it is not to act), ``rules``
    anything ``parse_rules`` takes, ``seat`` its absolute seat (slot 0 of the row), ``names``
    one per seat (default "player p"), ``events`` the round so far as this seat saw it (record
    events, ``uno_env.redact``ed; None: not shown)."""
    rules = parse_rules(rules)
    view = seat_view(np.asarray(observation), seat, num_players)
    n = len(view["seats"])
    seat_names = _seat_names(n, names)
    for s in view["seats"]:
        s["name"] = seat_names[s["seat"]]
    if not 0 <= seat < n:
        raise ValueError(f"seat must be in 0..{n - 1} for a table of {n}, got {seat!r}")
    moves = legal_moves(action_mask, seat, n, seat_names)
    hand = view["hand"]
    top = view["top_card"]
    lines = [
        _intro_line(rules, seat, seat_names),
        "",
        f"Your hand ({len(hand)} card{'s' * (len(hand) != 1)}): {', '.join(c['name'] for c in hand) or 'empty'}",
        f"Top card of the discard pile: {top['name'] if top else 'none'}",
        f"Colour in play: {view['current_color'] or 'none yet (a wild awaits its colour)'}",
        f"Direction of play: {'clockwise' if view['direction'] > 0 else 'counter-clockwise'}",
        f"Draw pile: {view['draw_pile_size']} cards",
    ]
    if rules.episode == "match":
        lines.append(f"Round {view['round'] + 1} of a match to {rules.target_points} points")
    lines.append("Players, clockwise from you:")
    clockwise = sorted(view["seats"], key=lambda s: (s["seat"] - seat) % n)
    lines += [_seat_line(s, seat, n, view["direction"]) for s in clockwise]
    lines.append("")
    if events is None:
        lines.append("The round so far: not shown at this table (your view above holds the public counts).")
    elif not events:
        lines.append("The round so far: nothing has happened yet.")
    else:
        lines.append("The round so far, oldest first:")
        lines += [f"- {describe_event(redact(ev, seat, rules.open_hands), seat, seat_names)}" for ev in events]
    lines.append("")
    phase = view["phase"] or "play"
    if not moves:
        state = "the round is over" if phase == "round_over" else "it is not your turn"
        lines.append(f"Now: {state}; you have no move to make.")
        return "\n".join(lines)
    lines.append(
        "Now: "
        + PHASE_TEXT[phase].format(
            drawn=view["drawn_card"]["name"] if view["drawn_card"] else "a card",
            pending=view["pending_draw"],
            prev=view["wd4_prev_color"] or "unknown",
        )
        + "."
    )
    lines.append("Legal moves:")
    lines += [f"{m.number}. {m.label}" for m in moves]
    lines.append("")
    lines.append(REPLY_INSTRUCTION)
    return "\n".join(lines)


def round_events(engine: Any, i: int, seat: int, limit: int | None = None) -> list[dict[str, Any]] | None:
    """Game ``i``'s round so far as ``seat`` saw it: the engine's history (``history=K``) or its
    record (``record=True``), redacted for ``seat``; the last ``limit`` events; None when the
    engine keeps neither."""
    if engine.history_length:
        events = engine.history_events(i, seat)
    else:
        try:
            events = [redact(ev, seat, engine.rules.open_hands) for ev in engine.record_events(i)]
        except ValueError:  # the engine does not record
            return None
    return events[-limit:] if limit else events


def engine_prompt(
    engine: Any, i: int = 0, seat: int | None = None, names: Sequence[str] | None = None, limit: int | None = None
) -> str:
    """``build_prompt`` for ``seat`` (None: the player to act) in game ``i`` of ``engine``, with
    the round so far (``round_events``, the last ``limit`` events) when the engine keeps it."""
    seat = int(engine.current_player[i]) if seat is None else int(seat)
    to_act = int(engine.current_player[i]) == seat and not (engine.terminated[i] or engine.truncated[i])
    mask = engine.legal_mask[i] if to_act else np.zeros(NUM_ACTIONS, bool)
    return build_prompt(
        engine.observe(seat, games=[i])[i],
        mask,
        rules=engine.rules,
        seat=seat,
        num_players=engine.num_players,
        names=names,
        events=round_events(engine, i, seat, limit),
    )
