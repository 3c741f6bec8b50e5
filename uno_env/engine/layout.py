"""Layout of the engine's state arrays, its rule configuration vector and its recorded events.

Module-level ints are compile-time constants inside numba kernels, so the kernels index the
state by these names at no cost.
"""

from __future__ import annotations

# The observation layout and the phase ids are public (uno_env.observation); the kernels see
# them here with the state layout, as names of this module.
from ..observation import (  # noqa: F401
    NUM_PHASES,
    OBS_BASE_SIZE,
    OBS_CATCHABLE,
    OBS_COLOR,
    OBS_DIRECTION,
    OBS_DISCARD,
    OBS_DRAW_PILE,
    OBS_DRAWN,
    OBS_DREW_ON,
    OBS_ELIMINATED,
    OBS_FIELDS,
    OBS_HAND,
    OBS_HAND_SIZES,
    OBS_IS_CURRENT,
    OBS_NAMED,
    OBS_OFFSETS,
    OBS_OPEN_HANDS,
    OBS_OPEN_SIZE,
    OBS_PARTNER,
    OBS_PENDING,
    OBS_PHASE,
    OBS_PRESENT,
    OBS_ROUND,
    OBS_SCORES,
    OBS_TOP,
    OBS_UNO,
    OBS_WD4_PREV,
    PHASE_CHOOSE_COLOR,
    PHASE_CHOOSE_SWAP_TARGET,
    PHASE_NAMES,
    PHASE_PLAY,
    PHASE_POST_DRAW,
    PHASE_RESPOND_DRAW_FOUR,
    PHASE_RESPOND_DRAW_TWO,
    PHASE_ROUND_OVER,
    STATE_SIZE,
    observation_size,
)
from ..rules import MAX_PLAYERS, MIN_PLAYERS  # noqa: F401

# Recorded events: int32 rows (kind, player, card, extra); the kinds are the event table's.
from .events import (  # noqa: F401
    DRAW_CHALLENGE_GUILTY,
    DRAW_CHALLENGE_INNOCENT,
    DRAW_CUSTOM_WILD,
    DRAW_DRAW_FOUR,
    DRAW_DRAW_TWO,
    DRAW_FIRST_CARD,
    DRAW_PENALTY,
    DRAW_REASONS,
    DRAW_UNO_PENALTY,
    DRAW_UNTIL_COLOR,
    DRAW_VOLUNTARY,
    EV_ACCEPT,
    EV_CALL_UNO,
    EV_CATCH_UNO,
    EV_CHALLENGE,
    EV_COLOR,
    EV_DEAL,
    EV_DISCARD_WILD,
    EV_DRAW,
    EV_ELIMINATED,
    EV_FLIP,
    EV_MATCH_END,
    EV_PASS,
    EV_PENALTY,
    EV_PLAY,
    EV_REDEAL,
    EV_RESHUFFLE,
    EV_RETURN_FIRST,
    EV_ROUND_END,
    EV_SCORE,
    EV_SHUFFLE_HANDS,
    EV_SWAP,
    EV_TRUNCATE,
    EVENT_NAMES,
)

# Columns of the per-game scalar state `g` (int64 [B, G_SIZE]).
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
G_TOP = 21  # the card to match: the top of the discard pile, or the card shuffled away with it (R4 reshuffle)
G_SIZE = 22

# Columns of the per-player state `pl` (int64 [B, P, PL_SIZE]).
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

# Slots of the rule configuration vector `cfg` (int64).
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
C_ALWAYS_RESPOND = 30
C_WD4_ONLY_WHEN_STUCK = 31
C_DRAWN_PLAYS = 32  # drawn_card="play_color_or_wild"
C_RESHUFFLE_ALL = 33  # reshuffle="every_played_card"
C_REVERSE_SKIPS_TWO = 34  # two_player_reverse_skips
C_FIRST_DEALER_LAST = 35  # first_dealer="last_seat"
C_RANDOM_WILD_FIRST = 36  # wild_first_card="random_color"
C_FIRST_DRAW_TWO_SKIPS = 37
C_SIZE = 38

# custom_wild_rule values (R5), in the order of UnoRules' choices.
CUSTOM_BLANK = 0
CUSTOM_PLAY_AGAIN = 1
CUSTOM_OTHERS_DRAW_TWO = 2
CUSTOM_OPPONENTS_DISCARD_WILDS = 3
CUSTOM_NEXT_DRAWS_UNTIL_COLOR = 4
CUSTOM_NEXT_DRAWS_THREE_IF_STUCK = 5

MAX_EVENTS_PER_STEP = 1024
MAX_HISTORY = 1024  # the longest history ring an Engine keeps (events per game)

# Columns of a history row (int32): the event's raw row, the colour in play before it, flags.
HR_KIND = 0
HR_PLAYER = 1
HR_CARD = 2
HR_EXTRA = 3
HR_COLOR = 4  # colour in play before the event, -1 none
HR_FLAGS = 5  # HF_* bits
HR_SIZE = 6
HF_DRAWN_PLAYED = 1  # a play of the card its player had just drawn (R4 post_draw, drawn_card)
# The history fold's running state per game (int64).
HM_COUNT = 0  # events of the round so far (the ring's next row is HM_COUNT % K)
HM_COLOR = 1  # colour in play after the last folded event, -1 none
HM_DRAW_SEAT = 2  # seat whose voluntary draw may still be played, -1 none
HM_DRAW_CARD = 3  # that draw's (last) card
HM_DRAW_COLOR = 4  # the colour in play when it drew
HM_DEALING = 5  # 1 while a deal goes round (the next deal row does not start a new round)
HM_SIZE = 6
# Per-seat counts over the round (int32), about the hand the seat holds: they move with it in a
# Swap Hands and are cleared by Shuffle Hands.
HC_PLAYED = 0  # cards played
HC_DRAWN = 1  # cards drawn, for any reason
HC_KEPT = 2  # 4 colours: turns ended keeping a voluntary draw while that colour was in play
HC_OFF = 6  # 4 colours: cards played that did not match that colour in play (a wild, or by rank)
HC_NAMED = 10  # 4 colours: colours named with a wild
HC_SIZE = 14
# A token of a seat's history (int8): the event in that seat's frame, already redacted
# (history.HISTORY_TOKEN_FIELDS says what each column holds).
HT_SIZE = 7

# --- the engine's one buffer --------------------------------------------------------------
# Every array a step touches (state, configuration, outputs) lives in one uint8 buffer, so a
# call from Python unboxes one array instead of one per field (each a cost in numba's dispatcher).
# The buffer opens with an int64 header: the sizes below, then the byte offset of each field.
H_NUM_ENVS = 0
H_NUM_PLAYERS = 1
H_OBS_SIZE = 2
H_EVENT_WIDTH = 3
H_HISTORY = 4  # K, the rows of each game's history ring (0: no history)
H_OFFSETS = 5  # byte offset of field k (FIELDS order) in slot H_OFFSETS + k
# (name, dtype name, shape in terms of B, P, D, W, K); the kernels make the same views by name
# (batch.unpack's Buffers, history.unpack_history), and the Engine keeps each as the attribute of
# its name (Engine._VIEW_NAMES): a new array goes here and in the kernels' unpacking.
FIELDS = (
    ("g", "int64", ("B", G_SIZE)),
    ("pl", "int64", ("B", "P", PL_SIZE)),
    ("hands", "int8", ("B", "P+1", "T")),
    ("piles", "int8", ("B", 2, "DECK")),
    ("rng", "uint64", ("B", 2)),  # a game's live generator, and its state at the deal
    # Event slot i of every game, then slot i + 1: a step's first events, all most steps have,
    # lie side by side across the games rather than a slot of W rows apart.
    ("events", "int32", ("W", "B", 4)),
    ("event_counts", "int32", ("B",)),
    ("cfg", "int64", (C_SIZE,)),
    ("points", "int64", ("T",)),
    ("deck", "int64", ("T",)),
    ("observation", "float32", ("B", "D")),
    ("legal_mask", "bool", ("B", "A")),
    ("current_player", "int8", ("B",)),
    ("rewards", "float32", ("B", "P")),
    ("terminated", "bool", ("B",)),
    ("truncated", "bool", ("B",)),
    ("final_observation", "float32", ("B", "D")),
    ("codes", "int64", ("B",)),  # the game loop's per-game codes when the caller passes none
    # A seat's history (Engine(history=K)): each game's last K public events (HR_* columns), the
    # fold's running state (HM_*) and per-seat counts over the whole round (HC_*).
    ("history", "int32", ("B", "K", HR_SIZE)),
    ("history_meta", "int64", ("B", HM_SIZE)),
    ("history_counts", "int32", ("B", "P", HC_SIZE)),
    # The same events as tokens, one ring per reading seat (written as the events are folded,
    # so a read is a copy), and per seat the events it has read as new (Engine.history_tokens_new).
    ("history_tokens", "int8", ("B", "P", "K", HT_SIZE)),
    ("history_read", "int64", ("B", "P")),
)
F_G, F_PL, F_HANDS, F_PILES, F_RNG, F_EVENTS, F_EVENT_COUNTS, F_CFG, F_POINTS, F_DECK = range(10)
F_OBS, F_MASK, F_CUR, F_REWARDS, F_TERM, F_TRUNC, F_FINAL_OBS, F_CODES = range(10, 18)
F_HISTORY, F_HISTORY_META, F_HISTORY_COUNTS, F_HISTORY_TOKENS, F_HISTORY_READ = range(18, 23)
HEADER_SIZE = H_OFFSETS + len(FIELDS)
FIELD_ALIGN = 64  # every field starts on its own cache line
