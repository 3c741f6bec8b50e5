"""``UnoRules``: every option of the rule book as one frozen dataclass, the presets, and
``parse_rules``, the one reader of rules given as a preset name, JSON text or a dict."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cards import MAX_DECK_SIZE, NUM_CARD_TYPES, deck_counts, default_card_points
from .checks import check_int, is_int

MIN_PLAYERS = 2  # R3: 2 to 10 players
MAX_PLAYERS = 10


def check_num_players(value: Any, name: str = "num_players") -> int:
    """``value`` as a player count in MIN_PLAYERS..MAX_PLAYERS (R3), else a ValueError naming ``name``."""
    return check_int(name, value, MIN_PLAYERS, MAX_PLAYERS)


_CHOICES: dict[str, tuple[str, ...]] = {
    "deck": ("classic", "shuffle_hands", "swap_hands"),
    "custom_wild_rule": (
        "blank",
        "play_again",
        "others_draw_two",
        "opponents_discard_wilds",
        "next_draws_until_color",
        "next_draws_three_if_stuck",
    ),
    "uno_call": ("auto", "explicit"),
    "scoring": ("winner_takes", "elimination"),
    "episode": ("round", "match"),
    "turn_limit_rule": ("truncate", "fewest_cards_wins"),
    "first_card_rule": ("classic", "redraw_special"),
    "wild_first_card": ("choose_color", "redraw", "random_color"),
    "first_dealer": ("random", "last_seat"),
    "drawn_card": ("choose", "play_color_or_wild"),
    "reshuffle": ("below_top", "every_played_card"),
    "illegal_action": ("raise", "penalty"),
}

# Integer options: (smallest, largest or None).
_INT_RANGES: dict[str, tuple[int, int | None]] = {
    "hand_size": (1, 50),
    "custom_wild_count": (0, 3),
    "challenge_guilty_draw": (0, 20),
    "challenge_innocent_draw": (0, 20),
    "uno_penalty": (0, 20),
    "target_points": (1, None),
    "max_turns": (1, None),
}


@dataclass(frozen=True)
class UnoRules:
    """Every rule option of docs/rules.md (section in brackets); defaults are the `classic` preset."""

    deck: str = "classic"  # R1
    custom_wild_count: int = 3  # R1
    card_counts: tuple[int, ...] | None = None  # R1 (None: the deck's table)
    hand_size: int = 7  # R3
    first_dealer: str = "random"  # R3
    allow_voluntary_draw: bool = True  # R4
    draw_until_playable: bool = False  # R4
    allow_doubles: bool = False  # R4
    end_on_empty_deck: bool = False  # R4
    wd4_wilds_count_as_match: bool = False  # R4
    wd4_bluffing: bool = True  # R4 (only with `challenge`)
    wd4_only_when_stuck: bool = False  # R4 (a Wild Draw Four only when no other card may be played)
    drawn_card: str = "choose"  # R4
    reshuffle: str = "below_top"  # R4, R12.2
    two_player_reverse_skips: bool = True  # R5, R12.3
    stack_draw_two: bool = False  # R5
    stack_draw_four: bool = False  # R5
    always_respond: bool = False  # R5, R12.7 (a stacked draw always opens the respond phase)
    custom_wild_rule: str = "blank"  # R5
    challenge: bool = True  # R6
    challenge_guilty_draw: int = 4  # R6
    challenge_innocent_draw: int = 6  # R6
    uno_call: str = "auto"  # R7
    uno_penalty: int = 2  # R7
    forbid_last_action_card: bool = False  # R8
    card_points: tuple[int, ...] | None = None  # R8, R12.21 (None: the deck's table)
    scoring: str = "winner_takes"  # R8
    target_points: int = 500  # R8
    episode: str = "round"  # R8
    teams: bool = False  # R8
    max_turns: int | None = 5000  # R8 (actions per round; None: no limit)
    turn_limit_rule: str = "truncate"  # R8
    first_card_rule: str = "classic"  # R9
    wild_first_card: str = "choose_color"  # R9
    first_draw_two_skips: bool = True  # R9
    illegal_action: str = "raise"  # R10
    open_hands: bool = False  # R11

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_value(f.name, getattr(self, f.name), f.default)
        for name in ("card_points", "card_counts"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, tuple(int(p) for p in getattr(self, name)))
        _check_contradictions(self)

    @classmethod
    def preset(cls, name: str = "classic", **overrides: Any) -> UnoRules:
        """Rules of a named preset (docs/rules.md, Presets) with any option overridden."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; presets are {tuple(PRESETS)}")
        _check_names(overrides)
        return cls(**{**PRESETS[name], **overrides})

    def replace(self, **overrides: Any) -> UnoRules:
        """A copy with some options changed."""
        _check_names(overrides)
        return dataclasses.replace(self, **overrides)

    @property
    def points(self) -> tuple[int, ...]:
        """Points of each of the 57 card types (R8)."""
        return self.card_points if self.card_points is not None else default_card_points(self.deck)

    @property
    def counts(self) -> np.ndarray:
        """Copies of each of the 57 card types in the deck (R1): ``card_counts`` or the deck's table."""
        if self.card_counts is not None:
            return np.array(self.card_counts, np.int8)
        return deck_counts(self.deck, self.custom_wild_count)

    @property
    def bluffing(self) -> bool:
        """Whether an illegal Wild Draw Four is offered (R4: needs `challenge`)."""
        return self.wd4_bluffing and self.challenge

    def to_dict(self) -> dict[str, Any]:
        """The options as a plain JSON-serialisable dict."""
        d = {name: getattr(self, name) for name in OPTION_NAMES}
        for name in ("card_points", "card_counts"):
            if d[name] is not None:
                d[name] = list(d[name])
        return d

    @classmethod
    def from_dict(cls, options: dict[str, Any]) -> UnoRules:
        """Inverse of ``to_dict``."""
        _check_names(options)
        return cls(**options)


OPTION_NAMES = tuple(f.name for f in dataclasses.fields(UnoRules))

PRESETS: dict[str, dict[str, Any]] = {
    "classic": {},
    "official": {
        "deck": "shuffle_hands",
        "first_card_rule": "redraw_special",
        "wd4_wilds_count_as_match": True,
    },
    "swap_hands": {"deck": "swap_hands"},
    "house": {"stack_draw_two": True, "stack_draw_four": True, "draw_until_playable": True},
    # RLCard 1.2's UNO (rlcard/games/uno), option by option (docs/rules.md, Presets).
    "rlcard": {
        "first_dealer": "last_seat",
        "allow_voluntary_draw": False,
        "wd4_only_when_stuck": True,
        "drawn_card": "play_color_or_wild",
        "reshuffle": "every_played_card",
        "two_player_reverse_skips": False,
        "challenge": False,
        "max_turns": None,
        "wild_first_card": "random_color",
        "first_draw_two_skips": False,
    },
}

PRESETS_HELP = f"a preset ({', '.join(PRESETS)}) or a JSON dict of options over classic (docs/rules.md)"
"""How help texts name the rules a command takes, written from ``PRESETS`` so that no preset is left out."""

CUSTOM_WILD_RULES = _CHOICES["custom_wild_rule"]


def parse_rules(rules: Any = None) -> UnoRules:
    """A ``UnoRules`` from ``None`` (classic), a ``UnoRules``, a preset name, or JSON text or a dict of options.

    A bad value raises ``ValueError`` saying what is allowed."""
    if rules is None:
        return UnoRules()
    if isinstance(rules, UnoRules):
        return rules
    if isinstance(rules, dict):
        return UnoRules.from_dict(rules)
    if isinstance(rules, str):
        text = rules.strip()
        if text.startswith("{"):
            try:
                options = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"rules: not a preset name nor valid JSON options ({exc}): {text!r}") from None
            return UnoRules.from_dict(options)
        return UnoRules.preset(text)
    raise ValueError(
        f"rules must be None, a UnoRules, a preset name in {tuple(PRESETS)}, JSON text or a dict of "
        f"options; got {type(rules).__name__} {rules!r}"
    )


def _check_names(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}; options are {list(OPTION_NAMES)}")


def _check_value(name: str, value: Any, default: Any) -> None:
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise ValueError(f"option {name} must be one of {_CHOICES[name]}, got {value!r}")
    elif name == "card_points":
        if value is None:
            return
        try:
            ok = len(value) == NUM_CARD_TYPES and all(is_int(p) and 0 <= p <= 1000 for p in value)
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(
                f"option card_points must be None or {NUM_CARD_TYPES} integers in 0..1000 "
                f"(points per card type, R12.21), got {value!r}"
            )
    elif name == "card_counts":
        if value is None:
            return
        try:
            ok = len(value) == NUM_CARD_TYPES and all(is_int(c) and 0 <= c <= 8 for c in value)
            ok = ok and 2 <= sum(value) <= MAX_DECK_SIZE
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(
                f"option card_counts must be None or {NUM_CARD_TYPES} integers in 0..8 (copies per card "
                f"type, R1) adding up to 2..{MAX_DECK_SIZE}, got {value!r}"
            )
    elif isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"option {name} must be True or False, got {value!r}")
    else:
        lo, hi = _INT_RANGES[name]
        if value is None and name == "max_turns":
            return
        if not is_int(value) or value < lo or (hi is not None and value > hi):
            allowed = f"an integer in {lo}..{hi}" if hi is not None else f"an integer >= {lo}"
            if name == "max_turns":
                allowed += " or None"
            raise ValueError(f"option {name} must be {allowed}, got {value!r}")


def _check_contradictions(r: UnoRules) -> None:
    if r.deck == "classic":
        if r.custom_wild_rule != "blank":
            raise ValueError(
                f"option custom_wild_rule={r.custom_wild_rule!r} needs a deck with Wild Customizable "
                f"cards, but deck='classic'; use deck='shuffle_hands' or 'swap_hands'"
            )
        if r.custom_wild_count != 3:
            raise ValueError(
                "option custom_wild_count applies only to the 112-card decks, but deck='classic'; "
                "use deck='shuffle_hands' or 'swap_hands'"
            )
    if r.deck != "classic" and r.custom_wild_count == 0 and r.custom_wild_rule != "blank":
        raise ValueError(
            f"option custom_wild_rule={r.custom_wild_rule!r} has no card to act on with custom_wild_count=0"
        )
    if r.always_respond and not (r.stack_draw_two or r.stack_draw_four):
        raise ValueError("option always_respond=True needs stacking (R5, R12.7): set stack_draw_two or stack_draw_four")
    if r.teams and r.scoring == "elimination":
        raise ValueError("option teams=True cannot be combined with scoring='elimination' (seed 000 plays them apart)")
    if r.uno_call == "auto" and r.uno_penalty != 2:
        raise ValueError(
            f"option uno_penalty={r.uno_penalty} has no effect with uno_call='auto'; set uno_call='explicit'"
        )
    if not r.challenge and (r.challenge_guilty_draw != 4 or r.challenge_innocent_draw != 6):
        raise ValueError("options challenge_guilty_draw / challenge_innocent_draw have no effect with challenge=False")
    if r.episode == "round" and r.scoring == "winner_takes" and r.target_points != 500:
        raise ValueError(
            f"option target_points={r.target_points} has no effect with episode='round' and "
            f"scoring='winner_takes'; set episode='match'"
        )
    if r.wd4_only_when_stuck and r.bluffing:
        raise ValueError(
            "option wd4_only_when_stuck=True offers a Wild Draw Four only when no other card may be played, "
            "so there is no bluff to challenge: set wd4_bluffing=False or challenge=False"
        )
    if r.drawn_card != "choose" and r.draw_until_playable:
        raise ValueError(
            f"option drawn_card={r.drawn_card!r} decides what the one drawn card does; it cannot be combined "
            "with draw_until_playable=True"
        )
    if r.turn_limit_rule != "truncate" and r.max_turns is None:
        raise ValueError(f"option turn_limit_rule={r.turn_limit_rule!r} needs a turn limit, but max_turns=None")
