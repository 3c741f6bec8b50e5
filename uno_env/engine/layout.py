"""Layout of the engine's state arrays, phases, events and the observation vector.

Module-level ints are compile-time constants inside numba kernels, so the kernels index the
state by these names at no cost.
"""

from __future__ import annotations

from ..cards import NUM_CARD_TYPES

MAX_PLAYERS = 10
MIN_PLAYERS = 2

# Phases (DESIGN.md, game_state()["phase"]).
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

# Columns of the per-game scalar state `g` (int32 [B, G_SIZE]).
G_PLAYER = 0  # seat whose decision it is
G_DIRECTION = 1  # +1 clockwise, -1 counter-clockwise
G_PHASE = 2
G_COLOR = 3  # current colour 0-3, -1 before a first-card wild's colour is chosen
G_PENDING = 4  # cards the responder would draw (respond phases)
G_DRAWN = 5  # card type drawn this turn (post_draw), else -1
G_DRAW_SIZE = 6
G_DISCARD_SIZE = 7
G_DEALER = 8
G_WINNERS = 9  # bit mask of winning seats
G_TURN = 10  # actions taken in this round
G_WD4_PLAYER = 11  # seat that played the pending Wild Draw Four
G_WD4_GUILTY = 12  # 1 if that play broke R4 (judged on the hand at the time)
G_PREV_COLOR = 13  # colour in play before the pending Wild Draw Four
G_WILD = 14  # wild whose colour is being chosen
G_FIRST_CARD = 15  # 1 while choosing the colour of a first-card wild (R9)
G_DONE = 16  # 0 playing, 1 terminated, 2 truncated
G_EMPTY_DRAW = 17  # 1 once a draw found both piles empty this step (end_on_empty_deck)
G_CATCH = 18  # seat that went down to one card without calling UNO and can be caught, else -1
G_ACTIVE = 19  # seats still in the match (elimination scoring)
G_ROUND = 20  # rounds finished in this episode (episode="match")
G_SIZE = 21

# Columns of the per-player state `pl` (int32 [B, P, PL_SIZE]).
PL_HAND_SIZE = 0
PL_SCORE = 1
PL_UNO_CALLED = 2  # called UNO and the hand has not grown since (R7 explicit)
PL_ELIMINATED = 3  # out of the match (R8 elimination)
PL_DREW_ON = 4  # 1 + colour in play when the seat last ended a turn drawing without playing, else 0
PL_NAMED = 5  # 1 + colour the seat named with its last wild this round, else 0
PL_SIZE = 6

# Rows of `piles` (int8 [B, 2, MAX_DECK_SIZE]); the top of each pile is its last used slot.
PILE_DRAW = 0
PILE_DISCARD = 1

# Slots of the rule configuration vector `cfg` (int32).
C_NUM_PLAYERS = 0
C_HAND_SIZE = 1
C_VOLUNTARY_DRAW = 2
C_DRAW_UNTIL_PLAYABLE = 3
C_END_ON_EMPTY_DECK = 4
C_WD4_WILDS_MATCH = 5
C_BLUFFING = 6
C_CHALLENGE = 7
C_GUILTY_DRAW = 8
C_INNOCENT_DRAW = 9
C_FORBID_LAST_ACTION = 10
C_MAX_TURNS = 11  # 0: no limit
C_FEWEST_CARDS_WINS = 12
C_REDRAW_SPECIAL = 13
C_REDRAW_WILD = 14
C_PENALTY = 15
C_OPEN_HANDS = 16
C_AUTORESET = 17
C_DECK_SIZE = 18
C_STACK_DRAW_TWO = 19
C_STACK_DRAW_FOUR = 20
C_DOUBLES = 21
C_EXPLICIT_UNO = 22
C_UNO_PENALTY = 23
C_CUSTOM_RULE = 24  # index into rules custom_wild_rule choices
C_ELIMINATION = 25
C_MATCH = 26
C_TARGET_POINTS = 27
C_TEAMS = 28
C_WRITE_OBS = 29  # 0: step() leaves `observation` alone (rollouts); observe() still works
C_SIZE = 30

# custom_wild_rule values (R5), in the order of UnoRules' choices.
CUSTOM_BLANK = 0
CUSTOM_PLAY_AGAIN = 1
CUSTOM_OTHERS_DRAW_TWO = 2
CUSTOM_OPPONENTS_DISCARD_WILDS = 3
CUSTOM_NEXT_DRAWS_UNTIL_COLOR = 4
CUSTOM_NEXT_DRAWS_THREE_IF_STUCK = 5

# Recorded events: int32 rows (kind, player, card, extra).
EV_DEAL = 0
EV_FLIP = 1
EV_RETURN_FIRST = 2
EV_PLAY = 3
EV_DRAW = 4
EV_COLOR = 5
EV_CHALLENGE = 6
EV_ACCEPT = 7
EV_PENALTY = 8
EV_PASS = 9
EV_RESHUFFLE = 10
EV_ROUND_END = 11
EV_SCORE = 12
EV_TRUNCATE = 13
EV_SHUFFLE_HANDS = 14
EV_SWAP = 15
EV_CALL_UNO = 16
EV_CATCH_UNO = 17
EV_DISCARD_WILD = 18
EV_ELIMINATED = 19
EV_MATCH_END = 20
EV_REDEAL = 21  # one card of the Wild Shuffle Hands deal
EVENT_NAMES = (
    "deal",
    "flip",
    "return_first_card",
    "play",
    "draw",
    "color",
    "challenge",
    "accept",
    "penalty",
    "pass",
    "reshuffle",
    "round_end",
    "score",
    "truncate",
    "shuffle_hands",
    "swap",
    "call_uno",
    "catch_uno",
    "discard_wild",
    "eliminated",
    "match_end",
    "redeal",
)
# Why cards were drawn (extra column of EV_DRAW).
DRAW_VOLUNTARY = 0
DRAW_DRAW_TWO = 1
DRAW_DRAW_FOUR = 2
DRAW_CHALLENGE_GUILTY = 3
DRAW_CHALLENGE_INNOCENT = 4
DRAW_PENALTY = 5
DRAW_FIRST_CARD = 6
DRAW_UNO_PENALTY = 7
DRAW_CUSTOM_WILD = 8
DRAW_UNTIL_COLOR = 9
DRAW_REASONS = (
    "voluntary",
    "draw_two",
    "draw_four",
    "challenge_guilty",
    "challenge_innocent",
    "penalty",
    "first_card",
    "uno_penalty",
    "custom_wild",
    "until_color",
)
MAX_EVENTS_PER_STEP = 1024

# Observation vector (float32 [D]) from one seat's point of view. Seats are relative: slot k is
# the seat k places clockwise from the observer (slot 0 is the observer).
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
    ("drew_on_color", MAX_PLAYERS * 4, "per relative seat, one-hot colour in play when it last drew and kept the card (R4); cleared when it plays, at a new round and after Shuffle Hands"),
    ("named_color", MAX_PLAYERS * 4, "per relative seat, one-hot colour it named with its last wild this round (R4); cleared after Shuffle Hands; swapped with the hands (Swap Hands)"),
)


def _offsets() -> dict[str, int]:
    out, at = {}, 0
    for name, size, _ in OBS_FIELDS:
        out[name] = at
        at += size
    out["_end"] = at
    return out


OBS_OFFSETS = _offsets()
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


def observation_size(open_hands: bool = False) -> int:
    """Length D of the observation vector."""
    return OBS_OPEN_SIZE if open_hands else OBS_BASE_SIZE
