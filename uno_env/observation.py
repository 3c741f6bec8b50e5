"""The observation vector (R11): its field table, offsets, the phase ids, and compiled decoders.

The one source of the layout (the engine, the spaces and the docs tables read it). Seats are
relative: slot k is the seat k places clockwise from the observer."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import CARD_COLOR, NUM_CARD_TYPES, NUM_COLORS
from .legality import wd4_allowed
from .rules import MAX_PLAYERS

# Phases of a turn: game_state()["phase"] and the observation's one-hot ``phase`` field.
PHASE_PLAY = 0
PHASE_POST_DRAW = 1
PHASE_CHOOSE_COLOR = 2
PHASE_CHOOSE_SWAP_TARGET = 3
PHASE_RESPOND_DRAW_TWO = 4
PHASE_RESPOND_DRAW_FOUR = 5
PHASE_ROUND_OVER = 6
PHASE_NAMES = (
    "play",
    "post_draw",
    "choose_color",
    "choose_swap_target",
    "respond_draw_two",
    "respond_draw_four",
    "round_over",
)
NUM_PHASES = len(PHASE_NAMES)

# (name, length, meaning) in order; the offsets follow from the lengths.
OBS_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("hand", NUM_CARD_TYPES, "copies of each card type in the observer's hand"),
    ("top_card", NUM_CARD_TYPES, "one-hot type of the top card of the discard pile"),
    ("current_color", 4, "one-hot current colour (all 0 while a first-card wild awaits its colour)"),
    ("phase", NUM_PHASES, "one-hot phase: " + ", ".join(PHASE_NAMES)),
    ("direction", 1, "+1 clockwise, -1 counter-clockwise"),
    ("pending_draw", 1, "cards the responder would draw (respond phases)"),
    ("drawn_card", NUM_CARD_TYPES, "one-hot card just drawn (post_draw, observer only)"),
    ("hand_sizes", MAX_PLAYERS, "cards held per relative seat (0 for absent seats)"),
    ("seat_present", MAX_PLAYERS, "1 for each relative seat in the game"),
    ("scores", MAX_PLAYERS, "score per relative seat / 100"),
    ("uno_called", MAX_PLAYERS, "UNO called per relative seat (auto mode: holds one card)"),
    ("discard_counts", NUM_CARD_TYPES, "copies of each card type in the discard pile"),
    ("draw_pile_size", 1, "cards in the draw pile"),
    ("wd4_prev_color", 4, "one-hot colour in play before a pending Wild Draw Four (R6)"),
    ("is_current", 1, "1 if the observer is the player to act"),
    ("eliminated", MAX_PLAYERS, "1 per relative seat out of the match (R8 elimination)"),
    ("catchable", MAX_PLAYERS, "1 for a relative seat that can be caught not calling UNO (R7)"),
    ("partner", MAX_PLAYERS, "1 for the observer's partner's relative seat (R8 teams)"),
    ("round", 1, "rounds finished in this match (episode='match')"),
    # Public history (R11): what every player saw a seat do, 4 colours per relative seat.
    (
        "drew_on_color",
        MAX_PLAYERS * 4,
        "per relative seat, one-hot colour in play when it last drew and kept the card (R4); cleared when it plays, at a new round and after Shuffle Hands",
    ),
    (
        "named_color",
        MAX_PLAYERS * 4,
        "per relative seat, one-hot colour it named with its last wild this round (R4); cleared after Shuffle Hands; swapped with the hands (Swap Hands)",
    ),
)
SCORE_SCALE = 100.0  # the ``scores`` field holds points / SCORE_SCALE


def field_offsets(fields: tuple[tuple[str, int, str], ...]) -> dict[str, int]:
    """Where each field of a (name, length, meaning) table starts; ``"_end"``: the total length."""
    out, at = {}, 0
    for name, size, _ in fields:
        out[name] = at
        at += size
    out["_end"] = at
    return out


OBS_OFFSETS = field_offsets(OBS_FIELDS)
OBS_HAND = OBS_OFFSETS["hand"]
OBS_TOP = OBS_OFFSETS["top_card"]
OBS_COLOR = OBS_OFFSETS["current_color"]
OBS_PHASE = OBS_OFFSETS["phase"]
OBS_DIRECTION = OBS_OFFSETS["direction"]
OBS_PENDING = OBS_OFFSETS["pending_draw"]
OBS_DRAWN = OBS_OFFSETS["drawn_card"]
OBS_HAND_SIZES = OBS_OFFSETS["hand_sizes"]
OBS_PRESENT = OBS_OFFSETS["seat_present"]
OBS_SCORES = OBS_OFFSETS["scores"]
OBS_UNO = OBS_OFFSETS["uno_called"]
OBS_DISCARD = OBS_OFFSETS["discard_counts"]
OBS_DRAW_PILE = OBS_OFFSETS["draw_pile_size"]
OBS_WD4_PREV = OBS_OFFSETS["wd4_prev_color"]
OBS_IS_CURRENT = OBS_OFFSETS["is_current"]
OBS_ELIMINATED = OBS_OFFSETS["eliminated"]
OBS_CATCHABLE = OBS_OFFSETS["catchable"]
OBS_PARTNER = OBS_OFFSETS["partner"]
OBS_ROUND = OBS_OFFSETS["round"]
OBS_DREW_ON = OBS_OFFSETS["drew_on_color"]
OBS_NAMED = OBS_OFFSETS["named_color"]
OBS_BASE_SIZE = OBS_OFFSETS["_end"]
# With open_hands (R11), the other seats' hands follow: relative seats 1..9, 57 counts each.
OBS_OPEN_HANDS = OBS_BASE_SIZE
OBS_OPEN_SIZE = OBS_BASE_SIZE + (MAX_PLAYERS - 1) * NUM_CARD_TYPES


# The whole state (hidden information, for critics and global-state learners; never an
# observation): a seat's observation with every hand open, then what no seat sees.
STATE_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("observation", OBS_BASE_SIZE, "the observing seat's R11 observation (the fields above)"),
    ("other_hands", (MAX_PLAYERS - 1) * NUM_CARD_TYPES, "copies of each card type per relative seat 1..9"),
    ("draw_pile_counts", NUM_CARD_TYPES, "copies of each card type in the draw pile (not its order)"),
    ("to_act", MAX_PLAYERS, "one-hot relative seat of the player to act (all 0 once the round is over)"),
)
STATE_OTHER_HANDS = OBS_OPEN_HANDS
STATE_DRAW_PILE = OBS_OPEN_SIZE
STATE_TO_ACT = STATE_DRAW_PILE + NUM_CARD_TYPES
STATE_SIZE = STATE_TO_ACT + MAX_PLAYERS


def observation_size(open_hands: bool = False) -> int:
    """Length D of the observation vector."""
    return OBS_OPEN_SIZE if open_hands else OBS_BASE_SIZE


# --- decoders of one observation row (float32 [D]) -----------------------------------------


@njit(cache=True)
def phase_of(o):
    """Phase id (PHASE_*) of the one-hot ``phase`` field."""
    for k in range(NUM_PHASES):
        if o[OBS_PHASE + k] > 0.5:
            return k
    return -1


@njit(cache=True)
def one_hot_color(o, offset):
    """Colour 0–3 of a one-hot colour field (4 entries from ``offset``), or -1 when empty."""
    for c in range(NUM_COLORS):
        if o[offset + c] > 0.5:
            return c
    return -1


@njit(cache=True)
def color_of(o):
    """Current colour 0–3, or -1 while a first-card wild awaits its colour."""
    return one_hot_color(o, OBS_COLOR)


@njit(cache=True)
def one_hot_card(o, offset):
    """Card type of a one-hot card field, or -1 when the field is empty."""
    for t in range(NUM_CARD_TYPES):
        if o[offset + t] > 0.5:
            return t
    return -1


@njit(cache=True)
def top_of(o):
    """Type of the top card of the discard pile."""
    return one_hot_card(o, OBS_TOP)


@njit(cache=True)
def drawn_of(o):
    """Type of the card just drawn (phase post_draw), or -1."""
    return one_hot_card(o, OBS_DRAWN)


@njit(cache=True)
def wd4_prev_color_of(o):
    """Colour in play before the pending Wild Draw Four (R6), or -1."""
    return one_hot_color(o, OBS_WD4_PREV)


@njit(cache=True)
def drew_on_color_of(o, slot):
    """Colour in play when the seat in a relative slot last ended its turn drawing without
    playing (it had no card that fitted), -1 when it has played since or never did so."""
    return one_hot_color(o, OBS_DREW_ON + 4 * slot)


@njit(cache=True)
def named_color_of(o, slot):
    """Colour the seat in a relative slot named with its last wild this round, or -1."""
    return one_hot_color(o, OBS_NAMED + 4 * slot)


@njit(cache=True)
def num_seats(o):
    """Number of players in the game."""
    n = 0
    for k in range(MAX_PLAYERS):
        if o[OBS_PRESENT + k] > 0.5:
            n += 1
    return n


@njit(cache=True)
def in_play(o, slot):
    """Whether the seat in a relative slot is still in the match (R8 elimination)."""
    return o[OBS_PRESENT + slot] > 0.5 and o[OBS_ELIMINATED + slot] < 0.5


@njit(cache=True)
def active_seats(o, n):
    """Players still in the match."""
    k = 0
    for slot in range(n):
        if in_play(o, slot):
            k += 1
    return k


@njit(cache=True)
def _slot_after(o, n, step):
    x = step % n
    for _ in range(n):
        if x == 0 or in_play(o, x):
            return x
        x = (x + step) % n
    return 0


@njit(cache=True)
def next_slot(o, n):
    """Relative slot of the next player in the current direction (eliminated seats skipped)."""
    return _slot_after(o, n, 1 if o[OBS_DIRECTION] > 0 else -1)


@njit(cache=True)
def prev_slot(o, n):
    """Relative slot of the previous player (who just played, in respond phases)."""
    return _slot_after(o, n, -1 if o[OBS_DIRECTION] > 0 else 1)


@njit(cache=True)
def is_partner(o, slot):
    """Whether a relative slot holds the observer's partner (R8 teams)."""
    return o[OBS_PARTNER + slot] > 0.5


@njit(cache=True)
def hand_size_at(o, slot):
    """Cards held by the seat in a relative slot."""
    return int(o[OBS_HAND_SIZES + slot] + 0.5)


@njit(cache=True)
def held(o, t):
    """Copies of card type t in the observer's hand."""
    return int(o[OBS_HAND + t] + 0.5)


@njit(cache=True)
def discarded(o, t):
    """Copies of card type t in the discard pile."""
    return int(o[OBS_DISCARD + t] + 0.5)


@njit(cache=True)
def color_counts(o, out):
    """Coloured cards held per colour, into out (int64 [4]); wilds are not counted."""
    out[:] = 0
    for t in range(NUM_CARD_TYPES):
        if CARD_COLOR[t] >= 0:
            out[CARD_COLOR[t]] += held(o, t)


@njit(cache=True)
def most_held_color(o):
    """The colour the observer holds most coloured cards of (lowest id on a tie)."""
    counts = np.zeros(NUM_COLORS, np.int64)
    color_counts(o, counts)
    return np.argmax(counts)


@njit(cache=True)
def wd4_legal(o, wilds_match):
    """R4, R12.9: whether the observer may play its Wild Draw Four without bluffing."""
    return wd4_allowed(o[OBS_HAND : OBS_HAND + NUM_CARD_TYPES], color_of(o), wilds_match)


@njit(cache=True)
def unseen_counts(o, deck, out):
    """Copies of each type the observer cannot see (draw pile plus other hands), into out."""
    for t in range(NUM_CARD_TYPES):
        out[t] = max(deck[t] - held(o, t) - discarded(o, t), 0)
