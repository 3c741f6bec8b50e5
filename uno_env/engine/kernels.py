"""The rules of UNO as numba kernels over one game's slice of the batched state.

Every function takes the state tuple ``s = (g, pl, hands, piles, rng, ev, evn)`` and a game index
``b``; ``cfg`` is the rule configuration vector (layout.C_*); ``hands[b, P]`` (one row past the last
seat) holds the discard pile's counts. Section numbers refer to docs/rules.md."""

# How this file stays fast: arrays are indexed with ``b``, not sliced (a view costs two atomic
# reference counts); constants passed to the drawing helpers are np.int64 (numba compiles a copy
# per distinct literal); the drawing helpers take flags, not ``cfg`` (every array argument costs
# reference counting per card drawn); the kernels of an ordinary step are inline="always" with one
# call site each, in batch._run_range (a second call site adds cold compile time), which is why
# apply_action is long; hot loops avoid data-dependent branches, which random play mispredicts.
# Resampling gathers hidden cards in card-id order first, so a deal depends only on which cards
# are hidden, never on where they were.

from __future__ import annotations

import numpy as np
from numba import njit

from ..actions import (
    ACCEPT,
    CALL_UNO,
    CATCH_UNO,
    CHALLENGE,
    CHOOSE_RED,
    DRAW,
    NUM_DOUBLES,
    PASS,
    PLAY_DOUBLE_FIRST,
    SWAP_WITH_FIRST,
    card_of_double,
)
from ..cards import (
    CARD_COLOR,
    CARD_RANK,
    DRAW_TWO,
    NUM_CARD_TYPES,
    NUM_COLORS,
    NUM_NUMBER_RANKS,
    NUM_RANKS,
    REVERSE,
    SKIP,
    WILD,
    WILD_CUSTOMIZABLE,
    WILD_DRAW_FOUR,
    WILD_SHUFFLE_HANDS,
    WILD_SWAP_HANDS,
)
from ..legality import wd4_allowed
from .layout import (  # the state layout constants; numba freezes them
    C_ALWAYS_RESPOND,
    C_BLUFFING,
    C_CHALLENGE,
    C_CUSTOM_RULE,
    C_DOUBLES,
    C_DRAW_UNTIL_PLAYABLE,
    C_DRAWN_PLAYS,
    C_ELIMINATION,
    C_END_ON_EMPTY_DECK,
    C_EXPLICIT_UNO,
    C_FEWEST_CARDS_WINS,
    C_FIRST_DEALER_LAST,
    C_FIRST_DRAW_TWO_SKIPS,
    C_FORBID_LAST_ACTION,
    C_GUILTY_DRAW,
    C_HAND_SIZE,
    C_INNOCENT_DRAW,
    C_MATCH,
    C_MAX_TURNS,
    C_NUM_PLAYERS,
    C_OPEN_HANDS,
    C_RANDOM_WILD_FIRST,
    C_REDRAW_SPECIAL,
    C_REDRAW_WILD,
    C_RESHUFFLE_ALL,
    C_REVERSE_SKIPS_TWO,
    C_STACK_DRAW_FOUR,
    C_STACK_DRAW_TWO,
    C_TARGET_POINTS,
    C_TEAMS,
    C_UNO_PENALTY,
    C_VOLUNTARY_DRAW,
    C_WD4_ONLY_WHEN_STUCK,
    C_WD4_WILDS_MATCH,
    CUSTOM_NEXT_DRAWS_THREE_IF_STUCK,
    CUSTOM_NEXT_DRAWS_UNTIL_COLOR,
    CUSTOM_OPPONENTS_DISCARD_WILDS,
    CUSTOM_OTHERS_DRAW_TWO,
    CUSTOM_PLAY_AGAIN,
    DRAW_CHALLENGE_GUILTY,
    DRAW_CHALLENGE_INNOCENT,
    DRAW_CUSTOM_WILD,
    DRAW_DRAW_FOUR,
    DRAW_DRAW_TWO,
    DRAW_FIRST_CARD,
    DRAW_PENALTY,
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
    G_ACTIVE,
    G_CATCH,
    G_COLOR,
    G_DEALER,
    G_DIRECTION,
    G_DISCARD_SIZE,
    G_DONE,
    G_DRAW_SIZE,
    G_DRAWN,
    G_EMPTY_DRAW,
    G_FIRST_CARD,
    G_PENDING,
    G_PHASE,
    G_PLAYER,
    G_PREV_COLOR,
    G_ROUND,
    G_TOP,
    G_TURN,
    G_WD4_GUILTY,
    G_WD4_PLAYER,
    G_WILD,
    G_WINNERS,
    OBS_CATCHABLE,
    OBS_COLOR,
    OBS_DIRECTION,
    OBS_DISCARD,
    OBS_DRAW_PILE,
    OBS_DRAWN,
    OBS_DREW_ON,
    OBS_ELIMINATED,
    OBS_HAND,
    OBS_HAND_SIZES,
    OBS_IS_CURRENT,
    OBS_NAMED,
    OBS_OPEN_HANDS,
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
    PHASE_PLAY,
    PHASE_POST_DRAW,
    PHASE_RESPOND_DRAW_FOUR,
    PHASE_RESPOND_DRAW_TWO,
    PHASE_ROUND_OVER,
    PILE_DISCARD,
    PILE_DRAW,
    PL_DREW_ON,
    PL_ELIMINATED,
    PL_HAND_SIZE,
    PL_NAMED,
    PL_SCORE,
    PL_UNO_CALLED,
)
from .rng import GOLDEN, mix64

# --- randomness: splitmix64, one uint64 state per game ------------------------------------


@njit(cache=True, inline="always")
def next_u64(rng, b):
    """Advance game b's generator and return 64 random bits."""
    z = rng[b, 0] + GOLDEN
    rng[b, 0] = z
    return mix64(z)


@njit(cache=True, inline="always")
def randint(rng, b, n):
    """Uniform integer in [0, n): the high 32 random bits scaled by n (Lemire's multiply-shift;
    bias below 3e-8 for n <= 112), because a 64-bit division costs more than the whole draw."""
    return np.int64(((next_u64(rng, b) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True)
def shuffle_pile(rng, b, piles, row, lo, hi):
    """Fisher–Yates shuffle of piles[b, row, lo:hi] with game b's generator."""
    for i in range(hi - 1, lo, -1):
        j = lo + randint(rng, b, i - lo + 1)
        tmp = piles[b, row, i]
        piles[b, row, i] = piles[b, row, j]
        piles[b, row, j] = tmp


# --- events -------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def emit(s, b, kind, player, card, extra):
    """Append one event to game b's buffer when recording (buffer width 0 means off)."""
    ev, evn = s[5], s[6]  # ev [W, B, 4] (layout.FIELDS)
    if ev.shape[0] == 0:
        return
    n = evn[b]
    if n < ev.shape[0]:
        ev[n, b, 0] = kind
        ev[n, b, 1] = player
        ev[n, b, 2] = card
        ev[n, b, 3] = extra
    evn[b] = n + 1


# --- seats --------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def seat_after(s, cfg, b, seat, k):
    """The seat k turns after `seat` in the current direction, skipping eliminated seats."""
    g, pl = s[0], s[1]
    n = cfg[C_NUM_PLAYERS]
    d = g[b, G_DIRECTION]
    if g[b, G_ACTIVE] == n:
        # k <= n (callers step 1 or 2 seats, or up to n - 1 for Swap Hands), so the seat wraps
        # once at most: two selects instead of an integer division.
        x = seat + k * d
        x = x + n if x < 0 else x
        return x - n if x >= n else x
    x = seat
    for _ in range(k):
        x = (x + d) % n
        while pl[b, x, PL_ELIMINATED]:
            x = (x + d) % n
    return x


@njit(cache=True)
def clockwise_after(s, cfg, b, seat):
    """The next seat still in the match clockwise, whatever the direction."""
    pl = s[1]
    n = cfg[C_NUM_PLAYERS]
    x = (seat + 1) % n
    while pl[b, x, PL_ELIMINATED]:
        x = (x + 1) % n
    return x


@njit(cache=True)
def with_partners(cfg, seats):
    """R8 teams: a bit mask of seats widened to their partners (seat i and i + n/2)."""
    if not cfg[C_TEAMS]:
        return seats
    n = cfg[C_NUM_PLAYERS]
    half = n // 2
    out = seats
    for p in range(n):
        if (seats >> p) & 1:
            out |= 1 << ((p + half) % n)
    return out


# --- piles and hands ----------------------------------------------------------------------


@njit(cache=True, inline="always")
def top_card(s, b):
    """The card to match: the top of the discard pile (R4 reshuffle='every_played_card' keeps it
    after the pile was shuffled away)."""
    return s[0][b, G_TOP]


@njit(cache=True, inline="always")
def push_discard(s, b, card):
    g, hands, piles = s[0], s[2], s[3]
    piles[b, PILE_DISCARD, g[b, G_DISCARD_SIZE]] = card
    g[b, G_DISCARD_SIZE] += 1
    g[b, G_TOP] = card
    hands[b, hands.shape[1] - 1, card] += 1


@njit(cache=True, inline="always")
def set_hand_size(s, b, seat, size):
    """Store a hand size; a hand that grows loses its UNO call, and its owner cannot be caught."""
    g, pl = s[0], s[1]
    if size > pl[b, seat, PL_HAND_SIZE]:
        pl[b, seat, PL_UNO_CALLED] = 0
        if g[b, G_CATCH] == seat:
            g[b, G_CATCH] = -1
    pl[b, seat, PL_HAND_SIZE] = size


@njit(cache=True)
def reshuffle(s, b, every):
    """R4, R12.2: the discard pile but its top card becomes the draw pile (with ``every``, the whole pile joins)."""
    g, hands, piles, rng = s[0], s[2], s[3], s[4]
    d = g[b, G_DISCARD_SIZE]
    if every:
        if d == 0:
            return
        n = g[b, G_DRAW_SIZE]
        disc_row = hands.shape[1] - 1
        for i in range(d):
            c = piles[b, PILE_DISCARD, i]
            piles[b, PILE_DRAW, n + i] = c
            hands[b, disc_row, c] -= 1
        g[b, G_DISCARD_SIZE] = 0
        g[b, G_DRAW_SIZE] = n + d
        shuffle_pile(rng, b, piles, np.int64(PILE_DRAW), np.int64(0), n + d)
        emit(s, b, EV_RESHUFFLE, -1, 1, d)
        return
    if d <= 1:
        return
    top = piles[b, PILE_DISCARD, d - 1]
    disc_row = hands.shape[1] - 1
    for i in range(d - 1):
        c = piles[b, PILE_DISCARD, i]
        piles[b, PILE_DRAW, i] = c
        hands[b, disc_row, c] -= 1
    piles[b, PILE_DISCARD, 0] = top
    g[b, G_DISCARD_SIZE] = 1
    g[b, G_DRAW_SIZE] = d - 1
    shuffle_pile(rng, b, piles, np.int64(PILE_DRAW), np.int64(0), d - 1)
    emit(s, b, EV_RESHUFFLE, -1, -1, d - 1)


@njit(cache=True)
def draw_one(s, b, seat, kind, reason, every):
    """Move the top of the draw pile to a hand; -1 (and a flag) when both piles are empty."""
    g, pl, hands, piles = s[0], s[1], s[2], s[3]
    if g[b, G_DRAW_SIZE] == 0:
        reshuffle(s, b, every)
        if g[b, G_DRAW_SIZE] == 0:
            g[b, G_EMPTY_DRAW] = 1
            return -1
    n = g[b, G_DRAW_SIZE] - 1
    g[b, G_DRAW_SIZE] = n
    c = piles[b, PILE_DRAW, n]
    hands[b, seat, c] += 1
    set_hand_size(s, b, seat, pl[b, seat, PL_HAND_SIZE] + 1)
    emit(s, b, kind, seat, c, reason)
    return c


@njit(cache=True)
def draw_n(s, b, seat, count, reason, every):
    if every and s[0][b, G_DRAW_SIZE] < count:
        reshuffle(s, b, every)  # R4: a draw of `count` cards that finds fewer reshuffles first
    for _ in range(count):
        if draw_one(s, b, seat, np.int64(EV_DRAW), reason, every) < 0:
            return


@njit(cache=True, inline="always")
def can_draw(s, cfg, b):
    """R12.1: something can be drawn (the draw pile, or the discard pile below its top; the
    whole discard pile under reshuffle='every_played_card')."""
    g = s[0]
    return g[b, G_DRAW_SIZE] > 0 or g[b, G_DISCARD_SIZE] > 1 - cfg[C_RESHUFFLE_ALL]


@njit(cache=True)
def holds(s, b, seat, card):
    return s[2][b, seat, card] > 0


@njit(cache=True)
def holds_draw_two(s, b, seat):
    h = s[2]
    for c in range(NUM_COLORS):
        if h[b, seat, c * NUM_RANKS + DRAW_TWO] > 0:
            return True
    return False


# --- legality -----------------------------------------------------------------------------


@njit(cache=True)
def matches(s, cfg, b, card):
    """R4: the card fits the top of the discard pile (Wild Draw Four checked apart)."""
    if card >= WILD:
        return True
    g = s[0]
    if CARD_COLOR[card] == g[b, G_COLOR]:
        return True
    top = top_card(s, b)
    return top < WILD and CARD_RANK[card] == CARD_RANK[top]


@njit(cache=True)
def wd4_legal(s, cfg, b, seat):
    """R4, R12.9: a Wild Draw Four is legal when no other held card matches the colour."""
    return wd4_allowed(s[2][b, seat], s[0][b, G_COLOR], cfg[C_WD4_WILDS_MATCH])


@njit(cache=True)
def last_card_forbidden(cfg, card):
    """R8 forbid_last_action_card, R12.10: a last Wild Draw Four, Reverse or plain Wild."""
    return cfg[C_FORBID_LAST_ACTION] and (
        card == WILD or card == WILD_DRAW_FOUR or (card < WILD and CARD_RANK[card] == REVERSE)
    )


@njit(cache=True)
def offered(s, cfg, b, seat, card):
    """Whether PLAY of a held card is in the mask of phase `play` (R4, R8, R12.10, R12.22)."""
    if not matches(s, cfg, b, card):
        return False
    if card == WILD_DRAW_FOUR and not cfg[C_BLUFFING] and not wd4_legal(s, cfg, b, seat):
        return False
    if s[1][b, seat, PL_HAND_SIZE] == 1 and last_card_forbidden(cfg, card):
        return False
    if card == WILD_DRAW_FOUR and cfg[C_WD4_ONLY_WHEN_STUCK]:
        return not other_card_offered(s, cfg, b, seat)
    return True


@njit(cache=True)
def other_card_offered(s, cfg, b, seat):
    """Whether `offered` holds for a held card other than a Wild Draw Four (for which it is
    `matches` and not forbidden as the last card)."""
    h = s[2]
    last = s[1][b, seat, PL_HAND_SIZE] == 1
    for t in range(NUM_CARD_TYPES):
        if t != WILD_DRAW_FOUR and h[b, seat, t] > 0 and matches(s, cfg, b, t):
            if not (last and last_card_forbidden(cfg, t)):
                return True
    return False


@njit(cache=True)
def has_play(s, cfg, b, seat):
    """R12.12: the play-phase mask of `seat` would offer some PLAY."""
    h = s[2]
    for t in range(NUM_CARD_TYPES):
        if h[b, seat, t] > 0 and offered(s, cfg, b, seat, t):
            return True
    return False


# --- mask and observation -----------------------------------------------------------------


@njit(cache=True, inline="always")
def write_mask(s, cfg, b, mask):
    """The legal actions of the player to act (all False once the round is over)."""
    g, pl, h = s[0], s[1], s[2]
    for a in range(mask.shape[1]):
        mask[b, a] = False
    phase = g[b, G_PHASE]
    p = g[b, G_PLAYER]
    if phase == PHASE_PLAY:
        any_play = write_play_mask(s, cfg, b, p, mask)
        drawable = can_draw(s, cfg, b)
        if drawable and (cfg[C_VOLUNTARY_DRAW] or not any_play):
            mask[b, DRAW] = True
        if not any_play and not drawable:
            mask[b, PASS] = True
        if cfg[C_EXPLICIT_UNO] and not pl[b, p, PL_UNO_CALLED]:
            size = pl[b, p, PL_HAND_SIZE]
            if (size == 2 and any_play) or (size == 3 and any_double(mask, b)):
                mask[b, CALL_UNO] = True
    elif phase == PHASE_POST_DRAW:
        mask[b, g[b, G_DRAWN]] = True
        mask[b, PASS] = True
        if cfg[C_EXPLICIT_UNO] and not pl[b, p, PL_UNO_CALLED] and pl[b, p, PL_HAND_SIZE] == 2:
            mask[b, CALL_UNO] = True
    elif phase == PHASE_CHOOSE_COLOR:
        for c in range(NUM_COLORS):
            mask[b, CHOOSE_RED + c] = True
    elif phase == PHASE_CHOOSE_SWAP_TARGET:
        n = cfg[C_NUM_PLAYERS]
        for k in range(1, n):
            if not pl[b, (p + k) % n, PL_ELIMINATED]:
                mask[b, SWAP_WITH_FIRST + k - 1] = True
    elif phase == PHASE_RESPOND_DRAW_TWO:
        # R5 stacking: any Draw Two answers; R12.7 without always_respond one is held here.
        for c in range(NUM_COLORS):
            t = c * NUM_RANKS + DRAW_TWO
            if h[b, p, t] > 0 and not (pl[b, p, PL_HAND_SIZE] == 1 and last_card_forbidden(cfg, t)):
                mask[b, t] = True
        mask[b, DRAW] = True
    elif phase == PHASE_RESPOND_DRAW_FOUR:
        if cfg[C_CHALLENGE]:
            mask[b, CHALLENGE] = True
        mask[b, ACCEPT] = True
        if cfg[C_STACK_DRAW_FOUR] and h[b, p, WILD_DRAW_FOUR] > 0:
            if (cfg[C_BLUFFING] or wd4_legal(s, cfg, b, p)) and not (
                pl[b, p, PL_HAND_SIZE] == 1 and last_card_forbidden(cfg, WILD_DRAW_FOUR)
            ):
                mask[b, WILD_DRAW_FOUR] = True
    if phase == PHASE_PLAY or phase == PHASE_RESPOND_DRAW_TWO or phase == PHASE_RESPOND_DRAW_FOUR:
        catch = g[b, G_CATCH]
        if catch >= 0 and catch != p and pl[b, catch, PL_HAND_SIZE] == 1:
            mask[b, CATCH_UNO] = True


@njit(cache=True)
def any_double(mask, b):
    for a in range(PLAY_DOUBLE_FIRST, PLAY_DOUBLE_FIRST + NUM_DOUBLES):
        if mask[b, a]:
            return True
    return False


@njit(cache=True, inline="always")
def write_play_mask(s, cfg, b, p, mask):
    """PLAY (and PLAY_DOUBLE) entries of phase ``play``, the same set as ``offered``; True if any."""
    h = s[2]
    color = s[0][b, G_COLOR]
    top = top_card(s, b)
    top_rank = CARD_RANK[top]  # -1 for a wild, which no coloured card's rank equals
    count = 0
    for t in range(WILD):
        ok = (h[b, p, t] > 0) & ((CARD_COLOR[t] == color) | (CARD_RANK[t] == top_rank))
        mask[b, t] = ok
        count += ok
    for t in range(WILD, NUM_CARD_TYPES):
        ok = h[b, p, t] > 0
        mask[b, t] = ok
        count += ok
    if mask[b, WILD_DRAW_FOUR] and not cfg[C_BLUFFING] and not wd4_legal(s, cfg, b, p):
        mask[b, WILD_DRAW_FOUR] = False
        count -= 1
    if cfg[C_FORBID_LAST_ACTION] and s[1][b, p, PL_HAND_SIZE] == 1:
        mask[b, WILD] = False
        mask[b, WILD_DRAW_FOUR] = False
        for c in range(NUM_COLORS):
            mask[b, c * NUM_RANKS + REVERSE] = False
        count = 0
        for t in range(NUM_CARD_TYPES):
            count += mask[b, t]
    if cfg[C_WD4_ONLY_WHEN_STUCK] and mask[b, WILD_DRAW_FOUR] and count > 1:
        mask[b, WILD_DRAW_FOUR] = False  # R4: only when no other card may be played
        count -= 1
    if cfg[C_DOUBLES]:
        # R4 allow_doubles: two identical number cards, when one of them may be played.
        for c in range(NUM_COLORS):
            for r in range(NUM_NUMBER_RANKS):
                t = c * NUM_RANKS + r
                mask[b, PLAY_DOUBLE_FIRST + c * NUM_NUMBER_RANKS + r] = (h[b, p, t] >= 2) & mask[b, t]
    return count > 0


@njit(cache=True, inline="always")
def write_obs(s, cfg, b, seat, obs, row):
    """R11: the public information plus `seat`'s own hand, into obs[row] (float32 [D])."""
    g, pl, hands = s[0], s[1], s[2]
    n = cfg[C_NUM_PLAYERS]
    for k in range(obs.shape[1]):
        obs[row, k] = 0.0
    disc_row = hands.shape[1] - 1
    for t in range(NUM_CARD_TYPES):
        obs[row, OBS_HAND + t] = hands[b, seat, t]
        obs[row, OBS_DISCARD + t] = hands[b, disc_row, t]
    obs[row, OBS_TOP + top_card(s, b)] = 1.0
    color = g[b, G_COLOR]
    if color >= 0:
        obs[row, OBS_COLOR + color] = 1.0
    phase = g[b, G_PHASE]
    obs[row, OBS_PHASE + phase] = 1.0
    obs[row, OBS_DIRECTION] = g[b, G_DIRECTION]
    obs[row, OBS_PENDING] = g[b, G_PENDING]
    # The one-hot entries below are stored unconditionally (a 0 into a zeroed slot when absent):
    # these conditions change at random from step to step, and a mispredicted branch costs more
    # than the store.
    is_current = (seat == g[b, G_PLAYER]) & (phase != PHASE_ROUND_OVER)
    obs[row, OBS_IS_CURRENT] = is_current
    obs[row, OBS_DRAWN + max(g[b, G_DRAWN], 0)] = is_current & (phase == PHASE_POST_DRAW)
    prev = g[b, G_PREV_COLOR]
    obs[row, OBS_WD4_PREV + max(prev, 0)] = (phase == PHASE_RESPOND_DRAW_FOUR) & (prev >= 0)
    explicit = cfg[C_EXPLICIT_UNO]
    catch = g[b, G_CATCH]
    other = seat
    for k in range(n):
        size = pl[b, other, PL_HAND_SIZE]
        obs[row, OBS_HAND_SIZES + k] = size
        obs[row, OBS_PRESENT + k] = 1.0
        obs[row, OBS_SCORES + k] = pl[b, other, PL_SCORE] / 100.0
        called = pl[b, other, PL_UNO_CALLED] != 0 if explicit else size == 1
        obs[row, OBS_UNO + k] = called
        obs[row, OBS_ELIMINATED + k] = pl[b, other, PL_ELIMINATED]
        obs[row, OBS_CATCHABLE + k] = (other == catch) & (size == 1)
        drew_on = pl[b, other, PL_DREW_ON]
        obs[row, OBS_DREW_ON + 4 * k + max(drew_on - 1, 0)] = drew_on > 0
        named = pl[b, other, PL_NAMED]
        obs[row, OBS_NAMED + 4 * k + max(named - 1, 0)] = named > 0
        if cfg[C_OPEN_HANDS] and k > 0:
            for t in range(NUM_CARD_TYPES):
                obs[row, OBS_OPEN_HANDS + (k - 1) * NUM_CARD_TYPES + t] = hands[b, other, t]
        other = other + 1 if other + 1 < n else 0  # (seat + k) % n without a division
    if cfg[C_TEAMS]:
        obs[row, OBS_PARTNER + n // 2] = 1.0
    obs[row, OBS_DRAW_PILE] = g[b, G_DRAW_SIZE]
    obs[row, OBS_ROUND] = g[b, G_ROUND]


# --- round and match end (R8) -------------------------------------------------------------


@njit(cache=True)
def hand_points(s, points, b, seat):
    hands = s[2]
    total = 0
    for t in range(NUM_CARD_TYPES):
        total += hands[b, seat, t] * points[t]
    return total


@njit(cache=True)
def fewest_mask(s, cfg, points, b, by_points):
    """Bit mask of the seats in play tied on the fewest hand points (or cards)."""
    pl = s[1]
    n = cfg[C_NUM_PLAYERS]
    best = 1 << 30
    winners = 0
    for p in range(n):
        if pl[b, p, PL_ELIMINATED]:
            continue
        v = hand_points(s, points, b, p) if by_points else pl[b, p, PL_HAND_SIZE]
        if v < best:
            best = v
            winners = 1 << p
        elif v == best:
            winners |= 1 << p
    return winners


@njit(cache=True)
def finish(s, cfg, b, winners, rewards):
    """End the episode: +1 for each winner, -1 for every other seat (R8)."""
    g = s[0]
    n = cfg[C_NUM_PLAYERS]
    for p in range(n):
        rewards[b, p] = 1.0 if (winners >> p) & 1 else -1.0
    g[b, G_WINNERS] = winners
    g[b, G_PHASE] = PHASE_ROUND_OVER
    g[b, G_DONE] = 1
    g[b, G_PENDING] = 0


@njit(cache=True)
def end_round(s, cfg, points, deck, b, winners, rewards):
    """R8: score the round; end the episode, or in a match deal the next round."""
    g, pl = s[0], s[1]
    n = cfg[C_NUM_PLAYERS]
    winners = with_partners(cfg, winners)
    emit(s, b, EV_ROUND_END, -1, -1, winners)
    if cfg[C_ELIMINATION]:
        for p in range(n):
            if not pl[b, p, PL_ELIMINATED]:
                pts = hand_points(s, points, b, p)
                pl[b, p, PL_SCORE] += pts
                emit(s, b, EV_SCORE, p, -1, pts)
    else:
        left = 0
        for p in range(n):
            if not (winners >> p) & 1 and not pl[b, p, PL_ELIMINATED]:
                left += hand_points(s, points, b, p)
        for p in range(n):
            if (winners >> p) & 1:
                pl[b, p, PL_SCORE] += left
                emit(s, b, EV_SCORE, p, -1, left)
    g[b, G_ROUND] += 1
    if not cfg[C_MATCH]:
        finish(s, cfg, b, winners, rewards)
        return
    target = cfg[C_TARGET_POINTS]
    if cfg[C_ELIMINATION]:
        # Seats reaching the target are out; the last seat below it wins (R8, seed 000).
        below = 0
        in_play = 0
        for p in range(n):
            if not pl[b, p, PL_ELIMINATED]:
                in_play |= 1 << p
                if pl[b, p, PL_SCORE] < target:
                    below |= 1 << p
        count = 0
        for p in range(n):
            count += (below >> p) & 1
        if count == 1:
            match_over(s, cfg, b, below, rewards)
            return
        if count == 0:
            best = 1 << 30
            lowest = 0
            for p in range(n):
                if (in_play >> p) & 1:
                    v = pl[b, p, PL_SCORE]
                    if v < best:
                        best = v
                        lowest = 1 << p
                    elif v == best:
                        lowest |= 1 << p
            match_over(s, cfg, b, lowest, rewards)
            return
        for p in range(n):
            if (in_play >> p) & 1 and not (below >> p) & 1:
                pl[b, p, PL_ELIMINATED] = 1
                g[b, G_ACTIVE] -= 1
                emit(s, b, EV_ELIMINATED, p, -1, pl[b, p, PL_SCORE])
    else:
        best = -1
        leaders = 0
        for p in range(n):
            v = pl[b, p, PL_SCORE]
            if v > best:
                best = v
                leaders = 1 << p
            elif v == best:
                leaders |= 1 << p
        if best >= target:
            match_over(s, cfg, b, leaders, rewards)
            return
    deal_round(s, cfg, deck, b, clockwise_after(s, cfg, b, g[b, G_DEALER]))


@njit(cache=True)
def match_over(s, cfg, b, winners, rewards):
    emit(s, b, EV_MATCH_END, -1, -1, winners)
    finish(s, cfg, b, winners, rewards)


# --- setup (R3, R9) -----------------------------------------------------------------------


@njit(cache=True)
def first_card_redrawn(cfg, card):
    """R9: whether the turned card goes back into the draw pile."""
    if card == WILD_DRAW_FOUR:
        return True
    if cfg[C_REDRAW_SPECIAL] and (card >= WILD or CARD_RANK[card] >= NUM_NUMBER_RANKS):
        return True
    return cfg[C_REDRAW_WILD] and card >= WILD


@njit(cache=True)
def reset_game(s, cfg, deck, b):
    """A new episode: scores cleared, a dealer drawn at random (R3), the first round dealt."""
    g, pl, rng = s[0], s[1], s[4]
    n = cfg[C_NUM_PLAYERS]
    rng[b, 1] = rng[b, 0]
    g[b, :] = 0
    pl[b, :, :] = 0
    g[b, G_ACTIVE] = n
    deal_round(s, cfg, deck, b, n - 1 if cfg[C_FIRST_DEALER_LAST] else randint(rng, b, n))


@njit(cache=True)
def deal_round(s, cfg, deck, b, dealer):
    """R3 and R9: shuffle, deal from the dealer's left, turn the first card and apply it."""
    g, pl, hands, piles, rng = s[0], s[1], s[2], s[3], s[4]
    n = cfg[C_NUM_PLAYERS]
    hands[b, :, :] = 0
    for p in range(n):
        pl[b, p, PL_HAND_SIZE] = 0
        pl[b, p, PL_UNO_CALLED] = 0
        pl[b, p, PL_DREW_ON] = 0
        pl[b, p, PL_NAMED] = 0
    size = 0
    for t in range(NUM_CARD_TYPES):
        for _ in range(deck[t]):
            piles[b, PILE_DRAW, size] = t
            size += 1
    shuffle_pile(rng, b, piles, np.int64(PILE_DRAW), np.int64(0), size)
    g[b, G_DRAW_SIZE] = size
    g[b, G_DISCARD_SIZE] = 0
    g[b, G_DIRECTION] = 1
    g[b, G_PHASE] = PHASE_PLAY
    g[b, G_PENDING] = 0
    g[b, G_TURN] = 0
    g[b, G_WINNERS] = 0
    g[b, G_DRAWN] = -1
    g[b, G_WD4_PLAYER] = -1
    g[b, G_PREV_COLOR] = -1
    g[b, G_CATCH] = -1
    g[b, G_FIRST_CARD] = 0
    g[b, G_DEALER] = dealer
    first = clockwise_after(s, cfg, b, dealer)
    for _ in range(cfg[C_HAND_SIZE]):
        seat = first
        for _ in range(g[b, G_ACTIVE]):
            draw_one(s, b, seat, np.int64(EV_DEAL), np.int64(0), cfg[C_RESHUFFLE_ALL])
            seat = clockwise_after(s, cfg, b, seat)
    card = -1
    while True:
        m = g[b, G_DRAW_SIZE] - 1
        card = piles[b, PILE_DRAW, m]
        if not first_card_redrawn(cfg, card):
            g[b, G_DRAW_SIZE] = m
            push_discard(s, b, card)
            emit(s, b, EV_FLIP, -1, card, 0)
            break
        emit(s, b, EV_RETURN_FIRST, -1, card, 0)
        shuffle_pile(rng, b, piles, np.int64(PILE_DRAW), np.int64(0), m + 1)
    g[b, G_PLAYER] = first
    if card >= WILD and cfg[C_RANDOM_WILD_FIRST]:
        g[b, G_COLOR] = randint(rng, b, 4)  # R9 wild_first_card='random_color': no other effect
        emit(s, b, EV_COLOR, -1, 1, g[b, G_COLOR])
        g[b, G_EMPTY_DRAW] = 0
        return
    if card >= WILD:
        # R9, R12.11: the first player chooses the colour (and a swap target), then plays.
        g[b, G_COLOR] = -1
        g[b, G_PHASE] = PHASE_CHOOSE_COLOR
        g[b, G_WILD] = card
        g[b, G_FIRST_CARD] = 1
        return
    g[b, G_COLOR] = CARD_COLOR[card]
    rank = CARD_RANK[card]
    if rank == SKIP:
        g[b, G_PLAYER] = seat_after(s, cfg, b, first, 1)
    elif rank == DRAW_TWO:
        draw_n(s, b, first, np.int64(2), np.int64(DRAW_FIRST_CARD), cfg[C_RESHUFFLE_ALL])
        if cfg[C_FIRST_DRAW_TWO_SKIPS]:
            g[b, G_PLAYER] = seat_after(s, cfg, b, first, 1)
    elif rank == REVERSE:
        g[b, G_DIRECTION] = -1
        g[b, G_PLAYER] = dealer
    g[b, G_EMPTY_DRAW] = 0


# --- one action ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def advance(s, cfg, b, k):
    """End the turn: the seat k turns on plays next (k=2 skips one player)."""
    g = s[0]
    g[b, G_PLAYER] = seat_after(s, cfg, b, g[b, G_PLAYER], k)
    g[b, G_PHASE] = PHASE_PLAY
    g[b, G_DRAWN] = -1


@njit(cache=True)
def hit_next(s, cfg, b, p, reason):
    """R5/R12.7: after a Draw Two (or an unanswerable Draw Four) the next player either answers
    (stacking) or draws the whole sum and loses the turn."""
    g = s[0]
    nxt = seat_after(s, cfg, b, p, 1)
    # R12.7: with always_respond the phase opens whatever the hand, so it reveals nothing.
    if reason == DRAW_DRAW_TWO and cfg[C_STACK_DRAW_TWO] and (cfg[C_ALWAYS_RESPOND] or holds_draw_two(s, b, nxt)):
        g[b, G_PLAYER] = nxt
        g[b, G_PHASE] = PHASE_RESPOND_DRAW_TWO
        return
    draw_n(s, b, nxt, g[b, G_PENDING], reason, cfg[C_RESHUFFLE_ALL])
    g[b, G_PENDING] = 0
    advance(s, cfg, b, 2)


@njit(cache=True, inline="always")
def play_card(s, cfg, points, deck, b, card, count, rewards):
    """R4, R5, R8: play one held card (or two identical number cards, R4 allow_doubles)."""
    g, pl, hands = s[0], s[1], s[2]
    p = g[b, G_PLAYER]
    if card == WILD_DRAW_FOUR:
        g[b, G_WD4_GUILTY] = 0 if wd4_legal(s, cfg, b, p) else 1
        g[b, G_WD4_PLAYER] = p
        g[b, G_PREV_COLOR] = g[b, G_COLOR]
    hands[b, p, card] -= count
    pl[b, p, PL_HAND_SIZE] -= count
    pl[b, p, PL_DREW_ON] = 0
    for _ in range(count):
        push_discard(s, b, card)
    emit(s, b, EV_PLAY, p, card, count)
    g[b, G_DRAWN] = -1
    if cfg[C_EXPLICIT_UNO] and pl[b, p, PL_HAND_SIZE] == 1 and not pl[b, p, PL_UNO_CALLED]:
        g[b, G_CATCH] = p
    rank = CARD_RANK[card]
    if card < WILD:
        g[b, G_COLOR] = CARD_COLOR[card]
    if pl[b, p, PL_HAND_SIZE] == 0:
        # R8, R12.17: a last Draw Two / Wild Draw Four still hits the next player (whole sum).
        nxt = seat_after(s, cfg, b, p, 1)
        if rank == DRAW_TWO:
            draw_n(s, b, nxt, g[b, G_PENDING] + 2, np.int64(DRAW_DRAW_TWO), cfg[C_RESHUFFLE_ALL])
        elif card == WILD_DRAW_FOUR:
            draw_n(s, b, nxt, g[b, G_PENDING] + 4, np.int64(DRAW_DRAW_FOUR), cfg[C_RESHUFFLE_ALL])
        g[b, G_PENDING] = 0
        end_round(s, cfg, points, deck, b, 1 << p, rewards)
        return
    if card >= WILD:
        g[b, G_WILD] = card
        g[b, G_PHASE] = PHASE_CHOOSE_COLOR
    elif rank == DRAW_TWO:
        g[b, G_PENDING] += 2
        hit_next(s, cfg, b, p, np.int64(DRAW_DRAW_TWO))
    else:
        # One inlined `advance` for numbers, Skip and Reverse (each copy costs compile time).
        if rank == REVERSE:
            g[b, G_DIRECTION] = -g[b, G_DIRECTION]
        skip = rank == SKIP or (rank == REVERSE and g[b, G_ACTIVE] == 2 and cfg[C_REVERSE_SKIPS_TWO])
        advance(s, cfg, b, 2 if skip else 1)


@njit(cache=True)
def play_drawn(s, cfg, b, p, card):
    """R4 drawn_card='play_color_or_wild': the drawn playable card goes straight onto the discard pile."""
    g, pl, rng = s[0], s[1], s[4]
    g[b, G_DRAW_SIZE] -= 1
    emit(s, b, EV_DRAW, p, card, DRAW_VOLUNTARY)
    push_discard(s, b, card)
    emit(s, b, EV_PLAY, p, card, 1)
    pl[b, p, PL_DREW_ON] = 0
    if card >= WILD:
        color = randint(rng, b, 4)
        g[b, G_COLOR] = color
        emit(s, b, EV_COLOR, p, 1, color)
        advance(s, cfg, b, 1)
        return
    rank = CARD_RANK[card]
    if rank == DRAW_TWO:
        g[b, G_PENDING] += 2
        hit_next(s, cfg, b, p, np.int64(DRAW_DRAW_TWO))
        return
    if rank == REVERSE:
        g[b, G_DIRECTION] = -g[b, G_DIRECTION]
    skip = rank == SKIP or (rank == REVERSE and g[b, G_ACTIVE] == 2 and cfg[C_REVERSE_SKIPS_TWO])
    advance(s, cfg, b, 2 if skip else 1)


@njit(cache=True)
def shuffle_hands(s, cfg, b, p):
    """R5 Wild Shuffle Hands: gather every hand, shuffle, deal one at a time from seat + 1."""
    g, pl, hands, piles, rng = s[0], s[1], s[2], s[3], s[4]
    n = cfg[C_NUM_PLAYERS]
    # The free tail of the draw-pile row is scratch space: it has room for every held card.
    lo = g[b, G_DRAW_SIZE]
    hi = lo
    for q in range(n):
        for t in range(NUM_CARD_TYPES):
            for _ in range(hands[b, q, t]):
                piles[b, PILE_DRAW, hi] = t
                hi += 1
            hands[b, q, t] = 0
    shuffle_pile(rng, b, piles, np.int64(PILE_DRAW), lo, hi)
    emit(s, b, EV_SHUFFLE_HANDS, p, -1, hi - lo)
    sizes = np.zeros(n, np.int64)
    seat = clockwise_after(s, cfg, b, p)
    for i in range(lo, hi):
        card = piles[b, PILE_DRAW, i]
        hands[b, seat, card] += 1
        sizes[seat] += 1
        emit(s, b, EV_REDEAL, seat, card, 0)
        seat = clockwise_after(s, cfg, b, seat)
    for q in range(n):
        set_hand_size(s, b, q, sizes[q])
        pl[b, q, PL_DREW_ON] = 0
        pl[b, q, PL_NAMED] = 0


@njit(cache=True)
def swap_hands(s, cfg, b, p, k):
    """R5 Wild Swap Hands: exchange whole hands with the player k seats further clockwise."""
    pl, hands = s[1], s[2]
    n = cfg[C_NUM_PLAYERS]
    q = (p + k) % n
    for t in range(NUM_CARD_TYPES):
        tmp = hands[b, p, t]
        hands[b, p, t] = hands[b, q, t]
        hands[b, q, t] = tmp
    size_p = pl[b, p, PL_HAND_SIZE]
    size_q = pl[b, q, PL_HAND_SIZE]
    set_hand_size(s, b, p, size_q)
    set_hand_size(s, b, q, size_p)
    for col in (PL_DREW_ON, PL_NAMED):
        tmp = pl[b, p, col]
        pl[b, p, col] = pl[b, q, col]
        pl[b, q, col] = tmp
    emit(s, b, EV_SWAP, p, q, 0)


@njit(cache=True)
def discard_wilds(s, cfg, b, p):
    """R5, R12.12 opponents_discard_wilds: every other player's wilds go under the top card."""
    g, pl, hands, piles = s[0], s[1], s[2], s[3]
    n = cfg[C_NUM_PLAYERS]
    disc_row = hands.shape[1] - 1
    top = top_card(s, b)
    at = g[b, G_DISCARD_SIZE] - 1
    for q in range(n):
        if q == p or pl[b, q, PL_ELIMINATED]:
            continue
        for t in range(WILD, NUM_CARD_TYPES):
            while hands[b, q, t] > 0:
                hands[b, q, t] -= 1
                pl[b, q, PL_HAND_SIZE] -= 1
                piles[b, PILE_DISCARD, at] = t
                hands[b, disc_row, t] += 1
                at += 1
                emit(s, b, EV_DISCARD_WILD, q, t, 0)
    piles[b, PILE_DISCARD, at] = top
    g[b, G_DISCARD_SIZE] = at + 1


@njit(cache=True)
def custom_wild(s, cfg, b, p):
    """R5 Wild Customizable: the effect named by custom_wild_rule, after the colour."""
    g, pl = s[0], s[1]
    rule = cfg[C_CUSTOM_RULE]
    n = cfg[C_NUM_PLAYERS]
    nxt = seat_after(s, cfg, b, p, 1)
    if rule == CUSTOM_PLAY_AGAIN:
        g[b, G_PHASE] = PHASE_PLAY
        return
    if rule == CUSTOM_OTHERS_DRAW_TWO:
        for q in range(n):
            if q != p and not pl[b, q, PL_ELIMINATED]:
                draw_n(s, b, q, np.int64(2), np.int64(DRAW_CUSTOM_WILD), cfg[C_RESHUFFLE_ALL])
    elif rule == CUSTOM_OPPONENTS_DISCARD_WILDS:
        discard_wilds(s, cfg, b, p)
    elif rule == CUSTOM_NEXT_DRAWS_UNTIL_COLOR:
        color = g[b, G_COLOR]
        while True:
            c = draw_one(s, b, nxt, np.int64(EV_DRAW), np.int64(DRAW_UNTIL_COLOR), cfg[C_RESHUFFLE_ALL])
            if c < 0 or CARD_COLOR[c] == color:
                break
    elif rule == CUSTOM_NEXT_DRAWS_THREE_IF_STUCK:
        if not has_play(s, cfg, b, nxt):
            draw_n(s, b, nxt, np.int64(3), np.int64(DRAW_CUSTOM_WILD), cfg[C_RESHUFFLE_ALL])
            advance(s, cfg, b, 2)
            return
    advance(s, cfg, b, 1)


@njit(cache=True)
def choose_color(s, cfg, b, color):
    """R4: the colour of a wild; then its effect (R5) or, for a first card, the play (R9)."""
    g, pl = s[0], s[1]
    p = g[b, G_PLAYER]
    g[b, G_COLOR] = color
    pl[b, p, PL_NAMED] = color + 1
    emit(s, b, EV_COLOR, p, -1, color)
    wild = g[b, G_WILD]
    if wild == WILD_SWAP_HANDS:
        g[b, G_PHASE] = PHASE_CHOOSE_SWAP_TARGET
    elif g[b, G_FIRST_CARD]:
        g[b, G_FIRST_CARD] = 0
        g[b, G_PHASE] = PHASE_PLAY
    elif wild == WILD_DRAW_FOUR:
        g[b, G_PENDING] += 4
        nxt = seat_after(s, cfg, b, p, 1)
        if cfg[C_CHALLENGE] or (cfg[C_STACK_DRAW_FOUR] and (cfg[C_ALWAYS_RESPOND] or holds(s, b, nxt, WILD_DRAW_FOUR))):
            g[b, G_PLAYER] = nxt
            g[b, G_PHASE] = PHASE_RESPOND_DRAW_FOUR
        else:
            hit_next(s, cfg, b, p, np.int64(DRAW_DRAW_FOUR))
    elif wild == WILD_SHUFFLE_HANDS:
        shuffle_hands(s, cfg, b, p)
        advance(s, cfg, b, 1)
    elif wild == WILD_CUSTOMIZABLE:
        custom_wild(s, cfg, b, p)
    else:
        advance(s, cfg, b, 1)


@njit(cache=True)
def respond_draw_four(s, cfg, b, action):
    """R6, R12.8: accept (draw the sum, lose the turn) or challenge the last Wild Draw Four."""
    g = s[0]
    p = g[b, G_PLAYER]
    pending = g[b, G_PENDING]
    g[b, G_PENDING] = 0
    g[b, G_PREV_COLOR] = -1
    if action == ACCEPT:
        emit(s, b, EV_ACCEPT, p, -1, pending)
        draw_n(s, b, p, pending, np.int64(DRAW_DRAW_FOUR), cfg[C_RESHUFFLE_ALL])
        advance(s, cfg, b, 1)
        return
    guilty = g[b, G_WD4_GUILTY]
    emit(s, b, EV_CHALLENGE, p, g[b, G_WD4_PLAYER], guilty)
    if guilty:
        draw_n(s, b, g[b, G_WD4_PLAYER], cfg[C_GUILTY_DRAW], np.int64(DRAW_CHALLENGE_GUILTY), cfg[C_RESHUFFLE_ALL])
        g[b, G_PHASE] = PHASE_PLAY
    else:
        extra = cfg[C_INNOCENT_DRAW] - 4
        draw_n(s, b, p, max(pending + extra, 0), np.int64(DRAW_CHALLENGE_INNOCENT), cfg[C_RESHUFFLE_ALL])
        advance(s, cfg, b, 1)


@njit(cache=True, inline="always")
def draw_action(s, cfg, b):
    """R4: draw; a playable card opens `post_draw`, else the turn ends. Facing a stacked
    Draw Two (R5), DRAW takes the whole sum and loses the turn."""
    g = s[0]
    p = g[b, G_PLAYER]
    if g[b, G_PHASE] == PHASE_RESPOND_DRAW_TWO:
        draw_n(s, b, p, g[b, G_PENDING], np.int64(DRAW_DRAW_TWO), cfg[C_RESHUFFLE_ALL])
        g[b, G_PENDING] = 0
    else:
        if cfg[C_DRAWN_PLAYS]:
            # R4 drawn_card: a wild or a card of the current colour plays itself, never joining the hand.
            if g[b, G_DRAW_SIZE] == 0:
                reshuffle(s, b, cfg[C_RESHUFFLE_ALL])
            n = g[b, G_DRAW_SIZE]
            if n > 0:
                top = s[3][b, PILE_DRAW, n - 1]
                if top >= WILD or CARD_COLOR[top] == g[b, G_COLOR]:
                    play_drawn(s, cfg, b, p, top)
                    return
        card = draw_one(s, b, p, np.int64(EV_DRAW), np.int64(DRAW_VOLUNTARY), cfg[C_RESHUFFLE_ALL])
        if cfg[C_DRAW_UNTIL_PLAYABLE]:
            while card >= 0 and not offered(s, cfg, b, p, card):
                card = draw_one(s, b, p, np.int64(EV_DRAW), np.int64(DRAW_VOLUNTARY), cfg[C_RESHUFFLE_ALL])
        if card >= 0 and not cfg[C_DRAWN_PLAYS] and offered(s, cfg, b, p, card):
            g[b, G_PHASE] = PHASE_POST_DRAW
            g[b, G_DRAWN] = card
            return
        s[1][b, p, PL_DREW_ON] = g[b, G_COLOR] + 1
    advance(s, cfg, b, 1)  # one inlined copy for both ways the turn ends


@njit(cache=True, inline="always")
def apply_action(s, cfg, points, deck, b, action, legal, rewards):
    """One decision of the player to act; ``legal`` is False only for an R10 penalty."""
    g, pl = s[0], s[1]
    phase = g[b, G_PHASE]
    p = g[b, G_PLAYER]
    g[b, G_TURN] += 1
    g[b, G_EMPTY_DRAW] = 0
    catch = g[b, G_CATCH]
    if catch >= 0 and catch != p:
        g[b, G_CATCH] = -1  # R12.15: this decision is the only chance to catch
    # One `emit` and one `advance` for all the branches below: every inlined copy costs compile
    # time. The event comes before any cards drawn (records keep that order).
    kind, arg = -1, -1
    if not legal:
        kind, arg = EV_PENALTY, action
    elif action == CALL_UNO:
        kind = EV_CALL_UNO
    elif action == CATCH_UNO:
        kind, arg = EV_CATCH_UNO, catch
    elif action == PASS:
        kind = EV_PASS
    if kind >= 0:
        emit(s, b, kind, p, arg, 0)
    end_turn = False
    if not legal:
        draw_n(s, b, p, np.int64(1), np.int64(DRAW_PENALTY), cfg[C_RESHUFFLE_ALL])
        end_turn = True
    elif action == CALL_UNO:
        pl[b, p, PL_UNO_CALLED] = 1
    elif action == CATCH_UNO:
        draw_n(s, b, catch, cfg[C_UNO_PENALTY], np.int64(DRAW_UNO_PENALTY), cfg[C_RESHUFFLE_ALL])
    elif action < NUM_CARD_TYPES or action >= PLAY_DOUBLE_FIRST:
        card, count = action, 1
        if action >= PLAY_DOUBLE_FIRST:
            card, count = card_of_double(action), 2
        play_card(s, cfg, points, deck, b, card, count, rewards)
    elif action == DRAW:
        draw_action(s, cfg, b)
    elif action == PASS:
        pl[b, p, PL_DREW_ON] = g[b, G_COLOR] + 1
        end_turn = True
    elif phase == PHASE_CHOOSE_COLOR:
        choose_color(s, cfg, b, action - CHOOSE_RED)
    elif phase == PHASE_CHOOSE_SWAP_TARGET:
        swap_hands(s, cfg, b, p, action - SWAP_WITH_FIRST + 1)
        if g[b, G_FIRST_CARD]:
            g[b, G_FIRST_CARD] = 0
            g[b, G_PHASE] = PHASE_PLAY
        else:
            end_turn = True
    else:
        respond_draw_four(s, cfg, b, action)
    if end_turn:
        advance(s, cfg, b, 1)
    if g[b, G_DONE] or g[b, G_TURN] == 0:
        return  # the episode ended, or a match dealt its next round
    if cfg[C_END_ON_EMPTY_DECK] and g[b, G_EMPTY_DRAW]:
        end_round(s, cfg, points, deck, b, fewest_mask(s, cfg, points, b, True), rewards)
    elif cfg[C_MAX_TURNS] > 0 and g[b, G_TURN] >= cfg[C_MAX_TURNS]:
        if cfg[C_FEWEST_CARDS_WINS]:
            end_round(s, cfg, points, deck, b, fewest_mask(s, cfg, points, b, False), rewards)
        else:
            g[b, G_PHASE] = PHASE_ROUND_OVER
            g[b, G_DONE] = 2
            emit(s, b, EV_TRUNCATE, -1, -1, g[b, G_TURN])


# --- determinization (search support, R11) ------------------------------------------------


@njit(cache=True)
def redeal_hidden(s, cfg, b, seat, u, seed):
    """Redeal what ``seat`` cannot see from the same cards (u: a uniform per deck slot); the generator gets ``seed``."""
    g, pl, hands, piles, rng = s[0], s[1], s[2], s[3], s[4]
    n = cfg[C_NUM_PLAYERS]
    size = g[b, G_DRAW_SIZE]
    hidden = np.zeros(NUM_CARD_TYPES, np.int64)
    for i in range(size):
        hidden[piles[b, PILE_DRAW, i]] += 1
    for p in range(n):
        if p != seat:
            for t in range(NUM_CARD_TYPES):
                hidden[t] += hands[b, p, t]
    pool = np.empty(piles.shape[2], np.int64)
    k = 0
    for t in range(NUM_CARD_TYPES):
        for _ in range(hidden[t]):
            pool[k] = t
            k += 1
    for i in range(k - 1, 0, -1):
        j = min(int(u[i] * (i + 1)), i)
        tmp = pool[i]
        pool[i] = pool[j]
        pool[j] = tmp
    at = 0
    for p in range(n):
        if p != seat:
            for t in range(NUM_CARD_TYPES):
                hands[b, p, t] = 0
            for _ in range(pl[b, p, PL_HAND_SIZE]):
                hands[b, p, pool[at]] += 1
                at += 1
    for i in range(size):
        piles[b, PILE_DRAW, i] = pool[at + i]
    rng[b, 0] = seed


@njit(cache=True)
def shuffle_draw(s, b, u, seed):
    """Shuffle game b's draw pile (u: uniforms per deck slot) and set its generator to ``seed``; the hands stay."""
    g, piles, rng = s[0], s[3], s[4]
    size = g[b, G_DRAW_SIZE]
    pile = np.sort(piles[b, PILE_DRAW, :size])
    for i in range(size - 1, 0, -1):
        j = min(int(u[i] * (i + 1)), i)
        tmp = pile[i]
        pile[i] = pile[j]
        pile[j] = tmp
    piles[b, PILE_DRAW, :size] = pile
    rng[b, 0] = seed
