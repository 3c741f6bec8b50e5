"""The game as text for one seat: the prompt a language model reads and the parser of its reply (docs/llm.md).

Everything here reads only what the seat may see (R11): its observation row, its mask and redacted events."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .actions import CHOOSE_RED, NUM_ACTIONS, PLAY_DOUBLE_FIRST, SWAP_WITH_FIRST, action_name
from .cards import NUM_CARD_TYPES
from .checks import is_int
from .engine import describe_event, redact
from .rules import MAX_PLAYERS, MIN_PLAYERS, UnoRules
from .seat_view import seat_view

__all__ = [
    "BadReply",
    "MAX_REPLY_CHARS",
    "Move",
    "build_prompt",
    "engine_prompt",
    "legal_moves",
    "normalise_reply",
    "parse_reply",
    "phase_text",
    "refusal",
    "round_events",
    "round_window",
    "rules_text",
    "seat_intro",
    "split_reasoning",
    "final_answer",
]

REPLY_INSTRUCTION = "Reply with the number or the name of exactly one legal move."
NAMED_REPLY_INSTRUCTION = (
    'Reply with the name of exactly one legal move, as the game names moves: "play red 7", "play blue skip", '
    '"play green reverse", "play yellow draw two", "play wild", "play wild draw four", "draw", "pass", '
    '"choose red", "challenge", "accept", "call uno", "catch uno", "swap with +1" (the player 1 seat clockwise), '
    '"play double red 7".'
)
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


def phase_text(view: dict[str, Any]) -> str:
    """What the phase of a seat's view (``uno_env.seat_view``) asks of it, in words (``PHASE_TEXT``)."""
    return PHASE_TEXT[view["phase"] or "play"].format(
        drawn=view["drawn_card"]["name"] if view["drawn_card"] else "a card",
        pending=view["pending_draw"],
        prev=view["wd4_prev_color"] or "unknown",
    )


class BadReply(ValueError):
    """A reply that names no legal move, or more than one; the message says what is allowed."""


@dataclass(frozen=True)
class Move:
    """One legal move as the prompt numbers it: ``number`` (from 1), action id, name and the other words naming it."""

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
        elif CHOOSE_RED <= a < CHOOSE_RED + 4:
            aliases.append(name[len("choose ") :])  # "blue"
        elif SWAP_WITH_FIRST <= a < PLAY_DOUBLE_FIRST:
            aliases.append(f"swap with {seat_names[(seat + a - SWAP_WITH_FIRST + 1) % num_players]}")
        moves.append(Move(number, a, name, tuple(aliases)))
    return moves


def _moves_text(moves: Sequence[Move]) -> str:
    return ", ".join(f"{m.number}. {m.label}" for m in moves)


MAX_REPLY_CHARS = 200_000
"""the longest reply ``parse_reply`` reads, in characters (a reasoning model's think block included)"""
MAX_MOVE_DIGITS = 6
"""the longest move number read as a number: a longer run of digits names no move"""
# Dashes and minus signs that NFKC leaves as they are; each reads as '-' (U+FE63 and U+FF0D fold to it).
_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe58", "-"))


_OTHER_DIGIT = re.compile(r"(?![0-9])\d")


def _shown(text: str, limit: int = 80) -> str:
    """``text`` quoted, cut to its first ``limit`` characters."""
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def normalise_reply(reply: str) -> str:
    """``reply`` as every front end reads it: NFKC (full-width digits and letters as ASCII), decimal
    digits of every script as ASCII ones, and every dash or minus sign as '-'; ``BadReply`` when it is longer than ``MAX_REPLY_CHARS`` before or after."""
    if len(reply) > MAX_REPLY_CHARS:
        raise BadReply(
            f"the reply is {len(reply):,} characters, more than the {MAX_REPLY_CHARS:,} read: give the move "
            f"alone, or a shorter reasoning before it (it began {_shown(reply)})"
        )
    text = unicodedata.normalize("NFKC", reply).translate(_DASHES)
    if not text.isascii():  # decimal digits of any script read as Python's int() reads them
        text = _OTHER_DIGIT.sub(lambda d: str(unicodedata.decimal(d.group())), text)
    if len(text) > MAX_REPLY_CHARS:  # a few characters spread into many under NFKC
        raise BadReply(
            f"the reply is {len(text):,} characters once normalised (NFKC), more than the {MAX_REPLY_CHARS:,} "
            f"read: give the move alone (it began {_shown(reply)})"
        )
    return text


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
    if len(rest[0]) > MAX_MOVE_DIGITS:
        return f"there is no move {_shown(rest[0], 20)}: the moves are numbered 1 to {len(moves)}"
    k = int(rest[0])
    if not 1 <= k <= len(moves):
        return f"there is no move {k}: the moves are numbered 1 to {len(moves)}"
    return moves[k - 1]


def _by_name(text: str, moves: Sequence[Move]) -> list[Move]:
    """The moves whose name or alias occurs in ``text`` as whole words, a name inside a longer
    matched name not counted ("draw" inside "play wild draw four")."""
    spans: list[tuple[int, int, int]] = []  # (start, -end, move number)
    for m in moves:
        for word in (m.name, *m.aliases):
            for hit in re.finditer(rf"(?<![a-z0-9+]){re.escape(_normalise(word))}(?![a-z0-9+])", text):
                spans.append((hit.start(), -hit.end(), m.number))
    if not spans:
        return []
    # By start, the longest first: a span is inside a longer one of another move when a span before
    # it in this order (and not the same span) reaches at least as far. For each move named, the
    # running furthest end of the other moves' spans answers that for all its spans at once.
    table = np.array(sorted(spans), np.int64)
    ends, numbers = -table[:, 1], table[:, 2]
    new_span = np.r_[True, (table[1:, :2] != table[:-1, :2]).any(1)]
    first = np.flatnonzero(new_span)[np.cumsum(new_span) - 1]  # the first row of each row's span
    kept = []
    for number in np.unique(numbers).tolist():
        furthest = np.maximum.accumulate(np.where(numbers != number, ends, -1))
        before = np.where(first > 0, furthest[np.maximum(first - 1, 0)], -1)
        mine = numbers == number
        if (before[mine] < ends[mine]).any():
            kept.append(number)
    by_number = {m.number: m for m in moves}
    return [by_number[n] for n in kept]


_THINK_TAGS = r"think|thinking|reasoning"
_THINK_TAG = re.compile(rf"<(/?)({_THINK_TAGS})>", re.I)
_THINK_OPEN = re.compile(rf"<(?:{_THINK_TAGS})>", re.I)
_THINK_CLOSE = re.compile(rf"</(?:{_THINK_TAGS})>", re.I)
# Marks of a final answer, each capturing the answer; the last one in the reply wins.
_ANSWER_WORDS = r"\b(?:final answer|answer|final move|my move|move|action|choice)\s*+(?:is)?\s*+[:=]"
# Possessive runs of whitespace (``\s*+``), so that no run is scanned more than once per mark.
_FINAL_MARKS = (
    re.compile(r"\\boxed\{([^{}\n]*)\}"),
    # A lookahead, so that a later mark on the same line is found too ("Move: 1, no: Answer: 2"); the
    # answer is read after the last mark only (``_MARKED``), not once for each mark of a long line.
    re.compile(rf"(?={_ANSWER_WORDS})", re.I),
    re.compile(r"\b(?:the )?best (?:move|choice|option) (?:is|would be)\s*+:?\s*+([^\n.,;!]+)", re.I),
)
_MARKED = re.compile(rf"{_ANSWER_WORDS}\s*([^\n]+)", re.I)
_NEGATIVE = re.compile(r"(?<![A-Za-z0-9])-\d")


def split_reasoning(reply: str) -> tuple[str, str]:
    """``(reasoning, answer)`` of a reply: the text of its ``<think>``-like blocks, and the rest, stripped."""
    reasoning: list[str] = []
    tags = list(_THINK_TAG.finditer(reply))
    # Each opening tag's block ends at the first closing tag of its name after it: the closing
    # tags' starts by name, searched by bisection, so no opening tag rescans the rest of the reply.
    closes_of: dict[str, list[int]] = {}
    for k, tag in enumerate(tags):
        if tag.group(1):
            closes_of.setdefault(tag.group(2).lower(), []).append(k)
    starts = {name: [tags[k].start() for k in ks] for name, ks in closes_of.items()}
    pieces: list[str] = []
    pos = 0
    for tag in tags:
        if tag.group(1) or tag.start() < pos:
            continue
        name = tag.group(2).lower()
        found = bisect.bisect_left(starts.get(name, []), tag.end())
        if found == len(starts.get(name, [])):
            continue  # unclosed: no later opening tag of this name is closed either
        close = tags[closes_of[name][found]]
        reasoning.append(reply[tag.end() : close.start()].strip())
        pieces += [reply[pos : tag.start()], "\n"]
        pos = close.end()
    rest = "".join([*pieces, reply[pos:]])
    closes = list(_THINK_CLOSE.finditer(rest))
    if closes:  # servers that put the opening tag in the template send only the closing one
        reasoning.insert(0, rest[: closes[-1].start()].strip())
        rest = rest[closes[-1].end() :]
    opened = _THINK_OPEN.search(rest)
    if opened:
        reasoning.append(rest[opened.end() :].strip())
        rest = rest[: opened.start()]
    return "\n\n".join(r for r in reasoning if r), rest.strip()


def final_answer(answer: str) -> str | None:
    """The text after the reply's last final-answer mark (``Move: N``, ``Final answer: N``,
    ``\\boxed{N}``, "the best move is N"), or None when it has none."""
    best: tuple[int, str] | None = None
    for kind in (0, 2):
        hits = list(_FINAL_MARKS[kind].finditer(answer))
        if hits and (best is None or hits[-1].start() > best[0]):
            best = (hits[-1].start(), hits[-1].group(1).strip())
    marks = [hit.start() for hit in _FINAL_MARKS[1].finditer(answer)]
    # Read from the last mark back: only a mark followed by nothing but line ends reads nothing.
    for start in reversed(marks):
        if best is not None and start < best[0]:
            break
        text = _MARKED.match(answer, start)
        if text is not None:
            return text.group(1).strip()
    return best[1] if best is not None else None


def parse_reply(reply: Any, moves: Sequence[Move], *, numbered: bool = True) -> int:
    """The action id ``reply`` names among ``moves``, else ``BadReply`` saying what was wrong (docs/llm.md).

    ``numbered=False`` (the prompt listed no moves) takes names only, and the refusal lists no moves."""
    if numbered:
        allowed = f"{REPLY_INSTRUCTION} The legal moves: {_moves_text(moves)}"
    else:
        allowed = NAMED_REPLY_INSTRUCTION
    if not moves:
        raise BadReply("there is no legal move to make: it is not your turn")
    if not isinstance(reply, str):
        raise BadReply(f"a reply is text, got {type(reply).__name__} {_shown(repr(reply))}. {allowed}")
    try:
        reply = normalise_reply(reply)
    except BadReply as exc:
        raise BadReply(f"{exc}. {allowed}") from None
    reasoning, answer = split_reasoning(reply)
    if reasoning and not answer:
        raise BadReply(f"the reply holds reasoning (a <think> block) but no answer after it. {allowed}")
    marked = final_answer(answer)
    if marked is not None:
        return _parse_answer(marked, moves, allowed, numbered)
    try:
        return _parse_answer(answer, moves, allowed, numbered)
    except BadReply:
        lines = [line for line in answer.splitlines() if line.strip()]
        last = _normalise(lines[-1]) if len(lines) > 1 else ""
        if not (last.isdigit() and not _NEGATIVE.search(lines[-1])):
            raise
    return _parse_answer(last, moves, allowed, numbered)


def _parse_answer(reply: str, moves: Sequence[Move], allowed: str, numbered: bool) -> int:
    """``parse_reply`` on the answer alone (no reasoning, no final-answer mark)."""
    text = _normalise(reply)
    shown = _shown(reply.strip())
    if not text:
        raise BadReply(f"the reply {shown} is empty. {allowed}")
    if _NEGATIVE.search(reply):
        raise BadReply(f"the reply {shown} holds a negative number: moves are numbered from 1. {allowed}")
    words = text.split()
    numbered_move = _by_number(words, moves)
    if numbered_move is not None and not numbered:
        raise BadReply(f"the reply {shown} gives a number: at this table moves are named, not numbered. {allowed}")
    if isinstance(numbered_move, str):
        raise BadReply(f"{numbered_move}. {allowed}")
    if numbered_move is not None:
        return numbered_move.action
    named = _by_name(text, moves)
    lead = re.match(rf"(\d{{1,{MAX_MOVE_DIGITS}}}) (.+)$", text)  # "3. play red 7": a number and a name must agree
    if numbered and lead and named and 1 <= int(lead.group(1)) <= len(moves):
        by_number = moves[int(lead.group(1)) - 1]
        if named == [by_number]:
            return by_number.action
        raise BadReply(
            f"the reply {shown} gives move {by_number.number} ({by_number.label}) but names "
            f"{' and '.join(m.label for m in named)}. {allowed}"
        )
    if len(named) == 1:
        return named[0].action
    if len(named) > 1:
        raise BadReply(
            f"the reply {shown} names more than one move ({', '.join(m.label for m in named)}); "
            f"give exactly one. {allowed}"
        )
    raise BadReply(f"the reply {shown} names no legal move. {allowed}")


_CLASSIC = UnoRules().to_dict()

GOAL_TEXT = {
    "round": "Goal: be the first to get rid of every card in your hand; that wins the round, which is the whole game.",
    "match": "Goal: win the match, a series of rounds; a round is won by the first to get rid of every card.",
}
CLASSIC_TEXT = (
    "Rules: on your turn play one card that matches the colour in play or the number or symbol of the top card, "
    "or a wild. A Skip skips the next player, a Reverse turns the direction of play (with two players it acts as "
    "a Skip), a Draw Two makes the next player draw 2 and lose the turn. A Wild lets you name the colour; a Wild "
    "Draw Four names the colour and makes the next player draw 4 and lose the turn, and it is allowed only "
    "without a card of the colour in play: the next player may challenge it, and then whoever was wrong draws "
    "(the bluffer 4, a wrong challenger 6). Instead of playing you may draw one card; if it can be played you "
    "may play it at once or pass. UNO is called for you when you are down to one card."
)

# What each rule option means when it differs from classic (docs/rules.md, the section in the
# field's comment of UnoRules), in words a player reads: value -> sentence ({v}: the value).
RULE_WORDS: dict[str, Any] = {
    "deck": {
        "shuffle_hands": "The deck has 112 cards: also a Wild Shuffle Hands (after its colour, every hand is "
        "gathered, shuffled and dealt out again, starting with the next player) and 3 Wild Customizable.",
        "swap_hands": "The deck has 112 cards: also a Wild Swap Hands (after its colour, you choose a player and "
        "swap whole hands) and 3 Wild Customizable.",
    },
    "custom_wild_count": "The deck holds {v} Wild Customizable.",
    "custom_wild_rule": {
        "play_again": "A Wild Customizable lets its player take another turn.",
        "others_draw_two": "A Wild Customizable makes every other player draw 2.",
        "opponents_discard_wilds": "A Wild Customizable makes every other player put all their wilds under the "
        "top card of the discard pile.",
        "next_draws_until_color": "A Wild Customizable makes the next player draw until a card of the named "
        "colour comes.",
        "next_draws_three_if_stuck": "A Wild Customizable makes the next player, if they could play no card, draw "
        "3 and lose the turn.",
    },
    "card_counts": "The deck's card counts are set by the table, not the usual ones.",
    "hand_size": "Each player is dealt {v} cards.",
    "first_dealer": {"last_seat": "The last seat deals the first round."},
    "allow_voluntary_draw": {False: "You may draw only when you cannot play."},
    "draw_until_playable": {True: "A draw goes on until a playable card comes (or nothing is left to draw)."},
    "allow_doubles": {True: "Two identical number cards (same colour and number) may be played together."},
    "end_on_empty_deck": {
        True: "When a draw finds both piles empty the round ends, and the fewest points in hand win."
    },
    "wd4_wilds_count_as_match": {True: "Holding any other wild also forbids a Wild Draw Four."},
    "wd4_bluffing": {False: "A Wild Draw Four is offered only when it is allowed (no bluffing)."},
    "wd4_only_when_stuck": {True: "A Wild Draw Four may be played only when no other card can be."},
    "drawn_card": {
        "play_color_or_wild": "A drawn card of the colour in play or a wild is played at once by itself (a drawn "
        "wild gets a random colour and no effect); any other drawn card is kept; the turn then ends."
    },
    "reshuffle": {
        "every_played_card": "When the draw pile runs short, the whole discard pile, top card included, is "
        "shuffled into it."
    },
    "two_player_reverse_skips": {False: "With two players a Reverse does not skip the other player."},
    "stack_draw_two": {
        True: "A player hit by a Draw Two may answer with a Draw Two of their own (stacking): the next player then "
        "faces the sum."
    },
    "stack_draw_four": {
        True: "A player hit by a Wild Draw Four may answer with a Wild Draw Four of their own (stacking): the next "
        "player then faces the sum."
    },
    "always_respond": {True: "A pending draw always asks its target to answer (stack or take the cards)."},
    "challenge": {False: "A Wild Draw Four cannot be challenged."},
    "challenge_guilty_draw": "A bluffer caught by a challenge draws {v}.",
    "challenge_innocent_draw": "A wrong challenger draws {v}.",
    "uno_call": {
        "explicit": "You must call UNO yourself when you are down to one card; caught without calling it, you "
        "draw a penalty."
    },
    "uno_penalty": "The penalty for not calling UNO is {v} cards.",
    "forbid_last_action_card": {True: "A Wild Draw Four, a Reverse or a plain Wild may not be your last card."},
    "card_points": "The cards' points are set by the table, not the usual ones.",
    "scoring": {
        "elimination": "Scoring: every player adds the points left in their own hand; lower is better, and in a "
        "match a player who reaches the target is out."
    },
    "target_points": "A match is played to {v} points.",
    "episode": {
        "match": "Unless the scoring below says otherwise, the winner of a round scores the points left in the "
        "other hands (numbers at face value, Skip, Reverse and Draw Two 20, wilds 50), and the match ends when a "
        "score reaches the target (500 points unless changed below)."
    },
    "teams": {True: "Partners sit opposite each other and win together when either goes out."},
    "max_turns": "A round is cut after {v} actions.",
    "turn_limit_rule": {
        "fewest_cards_wins": "A round that reaches the turn limit is won by the players holding the fewest cards."
    },
    "first_card_rule": {"redraw_special": "A first card that is not a number card is put back and another drawn."},
    "wild_first_card": {
        "redraw": "A wild turned as the first card is put back and another drawn.",
        "random_color": "A wild turned as the first card gets a random colour.",
    },
    "first_draw_two_skips": {False: "A Draw Two turned as the first card does not skip the first player."},
    "illegal_action": {"penalty": "An illegal move is punished with a penalty draw instead of being refused."},
    "open_hands": {True: "Every hand is shown to every player."},
}


def _option_words(name: str, value: Any) -> str:
    """The sentence of ``RULE_WORDS`` for option ``name`` at ``value`` (its name and value when none)."""
    words = RULE_WORDS.get(name)
    if isinstance(words, dict):
        words = words.get(value)
    if words is None:
        return f"{name}={value}."
    return words.format(v=value)


def rules_text(rules: UnoRules) -> str:
    """The rules in words for a player: the goal, the classic rules, then every option that differs
    from classic, each as ``option=value: sentence`` (``rules`` a ``UnoRules``)."""
    lines = [GOAL_TEXT[rules.episode], CLASSIC_TEXT]
    changed = [
        f"- {name}={value}: {_option_words(name, value)}"
        for name, value in rules.to_dict().items()
        if name not in ("card_points", "card_counts") and value != _CLASSIC[name]
    ]
    changed += [
        f"- {name} set: {_option_words(name, None)}"
        for name in ("card_counts", "card_points")
        if getattr(rules, name) is not None
    ]
    if changed:
        lines.append("Changed from those rules at this table:")
        lines += changed
    return "\n".join(lines)


def _intro_line(rules: UnoRules, seat: int, seat_names: Sequence[str]) -> str:
    n = len(seat_names)
    variant = "classic UNO" if rules.to_dict() == _CLASSIC else "UNO with the changes below"
    return f"You are {seat_names[seat]} (seat {seat}) at a table of {n} players playing {variant}."


def seat_intro(rules: UnoRules, seat: int, num_players: int, names: Sequence[str] | None = None) -> str:
    """What ``seat`` reads once before its first prompt: who it is at the table, the rules, what
    each turn shows and how to reply (``rules`` a ``UnoRules``)."""
    if not is_int(num_players) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise ValueError(f"num_players must be an integer in {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players!r}")
    seat_names = _seat_names(num_players, names)
    if not is_int(seat) or not 0 <= seat < num_players:
        raise ValueError(f"seat must be in 0..{num_players - 1} for a table of {num_players}, got {seat!r}")
    return "\n".join((_intro_line(rules, int(seat), seat_names), rules_text(rules), TURN_TEXT, REPLY_INSTRUCTION))


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
    rules: UnoRules | None = None,
    seat: int = 0,
    num_players: int | None = None,
    names: Sequence[str] | None = None,
    events: Sequence[dict[str, Any]] | None = None,
    events_cut: int | None = 0,
    list_moves: bool = True,
    describe_rules: bool = True,
) -> str:
    """The prompt for one seat from its observation row (float32 [D]) and mask (bool [116]; all False off turn).

    ``seat`` is its absolute seat; ``events`` the round as it saw it (redacted; None: not shown);
    ``events_cut`` how many earlier events are left out (None: unknown)."""
    rules = UnoRules() if rules is None else rules
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
    if events_cut is not None and (not is_int(events_cut) or events_cut < 0):
        raise ValueError(f"events_cut must be an integer >= 0 (events left out) or None (some), got {events_cut!r}")
    lines = [_intro_line(rules, seat, seat_names)]
    if describe_rules:
        lines.append(rules_text(rules))
    lines += [
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
    elif events_cut != 0:
        left_out = (
            "earlier events of this round are not shown"
            if events_cut is None
            else f"{events_cut} earlier event{'s' * (events_cut != 1)} of this round "
            f"{'are' if events_cut != 1 else 'is'} not shown"
        )
        lines.append(f"The round so far, oldest first ({left_out}):")
        lines += [f"- {describe_event(redact(ev, seat, rules.open_hands), seat, seat_names)}" for ev in events]
    else:
        lines.append("The round so far, oldest first:")
        lines += [f"- {describe_event(redact(ev, seat, rules.open_hands), seat, seat_names)}" for ev in events]
    lines.append("")
    phase = view["phase"] or "play"
    if not moves:
        state = "the round is over" if phase == "round_over" else "it is not your turn"
        lines.append(f"Now: {state}; you have no move to make.")
        return "\n".join(lines)
    lines.append(f"Now: {phase_text(view)}.")
    if not list_moves:
        lines.append(NAMED_REPLY_INSTRUCTION)
        return "\n".join(lines)
    lines.append("Legal moves:")
    lines += [f"{m.number}. {m.label}" for m in moves]
    lines.append("")
    lines.append(REPLY_INSTRUCTION)
    return "\n".join(lines)


def round_window(
    engine: Any, i: int, seat: int, limit: int | None = None
) -> tuple[list[dict[str, Any]] | None, int | None]:
    """``(events, cut)``: game ``i``'s last ``limit`` events as ``seat`` saw them, and how many earlier are left out.

    ``cut`` is None when the history window dropped some; ``(None, 0)`` when the engine keeps neither
    a history nor a record."""
    if engine.history_length:
        events = engine.history_events(i, seat)
        dropped = engine.history_count(i) > engine.history_length
    else:
        try:
            events = [redact(ev, seat, engine.rules.open_hands) for ev in engine.record_events(i)]
        except ValueError:  # the engine does not record
            return None, 0
        dropped = False
    shown = events[-limit:] if limit else events
    return shown, None if dropped else len(events) - len(shown)


def round_events(engine: Any, i: int, seat: int, limit: int | None = None) -> list[dict[str, Any]] | None:
    """Game ``i``'s round so far as ``seat`` saw it, its last ``limit`` events (``round_window``
    without the count of events left out); None when the engine keeps no history nor record."""
    return round_window(engine, i, seat, limit)[0]


def engine_prompt(
    engine: Any,
    i: int = 0,
    seat: int | None = None,
    names: Sequence[str] | None = None,
    limit: int | None = None,
    *,
    list_moves: bool = True,
    describe_rules: bool = True,
) -> str:
    """``build_prompt`` for ``seat`` (None: the player to act) in game ``i`` of ``engine``, with the round so far."""
    seat = int(engine.current_player[i]) if seat is None else int(seat)
    to_act = int(engine.current_player[i]) == seat and not (engine.terminated[i] or engine.truncated[i])
    mask = engine.legal_mask[i] if to_act else np.zeros(NUM_ACTIONS, bool)
    events, cut = round_window(engine, i, seat, limit)
    return build_prompt(
        engine.observe(seat, games=[i])[i],
        mask,
        rules=engine.rules,
        seat=seat,
        num_players=engine.num_players,
        names=names,
        events=events,
        events_cut=cut,
        list_moves=list_moves,
        describe_rules=describe_rules,
    )
