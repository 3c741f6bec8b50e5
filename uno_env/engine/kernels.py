"""The rules of UNO as numba kernels over one game's slice of the batched state.

Every function takes the state tuple ``s = (g, pl, hands, piles, rng, ev, evn)`` and a game
index ``b``; ``cfg`` is the rule configuration vector (layout.C_*). ``hands[b, P]`` (one row
past the last seat) holds the counts of the discard pile, so observations need no scan.
Section numbers refer to RULES.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cards import CARD_COLOR, CARD_RANK, NUM_CARD_TYPES, WILD, WILD_DRAW_FOUR
from ..actions import Action
from .layout import (
    C_BLUFFING,
    C_CHALLENGE,
    C_DRAW_UNTIL_PLAYABLE,
    C_END_ON_EMPTY_DECK,
    C_FEWEST_CARDS_WINS,
    C_FORBID_LAST_ACTION,
    C_GUILTY_DRAW,
    C_HAND_SIZE,
    C_INNOCENT_DRAW,
    C_MAX_TURNS,
    C_NUM_PLAYERS,
    C_OPEN_HANDS,
    C_REDRAW_SPECIAL,
    C_REDRAW_WILD,
    C_VOLUNTARY_DRAW,
    C_WD4_WILDS_MATCH,
    DRAW_CHALLENGE_GUILTY,
    DRAW_CHALLENGE_INNOCENT,
    DRAW_DRAW_FOUR,
    DRAW_DRAW_TWO,
    DRAW_FIRST_CARD,
    DRAW_PENALTY,
    DRAW_VOLUNTARY,
    EV_ACCEPT,
    EV_CHALLENGE,
    EV_COLOR,
    EV_DEAL,
    EV_DRAW,
    EV_FLIP,
    EV_PASS,
    EV_PENALTY,
    EV_PLAY,
    EV_RESHUFFLE,
    EV_RETURN_FIRST,
    EV_ROUND_END,
    EV_SCORE,
    EV_TRUNCATE,
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
    G_TURN,
    G_WD4_GUILTY,
    G_WD4_PLAYER,
    G_WILD,
    G_WINNERS,
    MAX_PLAYERS,
    NUM_PHASES,
    OBS_COLOR,
    OBS_DIRECTION,
    OBS_DISCARD,
    OBS_DRAW_PILE,
    OBS_DRAWN,
    OBS_HAND,
    OBS_HAND_SIZES,
    OBS_IS_CURRENT,
    OBS_OPEN_HANDS,
    OBS_PENDING,
    OBS_PHASE,
    OBS_PRESENT,
    OBS_SCORES,
    OBS_TOP,
    OBS_UNO,
    OBS_WD4_PREV,
    PHASE_CHOOSE_COLOR,
    PHASE_PLAY,
    PHASE_POST_DRAW,
    PHASE_RESPOND_DRAW_FOUR,
    PHASE_ROUND_OVER,
    PILE_DISCARD,
    PILE_DRAW,
    PL_HAND_SIZE,
    PL_SCORE,
)

DRAW = int(Action.DRAW)
PASS = int(Action.PASS)
CHOOSE_RED = int(Action.CHOOSE_RED)
CHALLENGE = int(Action.CHALLENGE)
ACCEPT = int(Action.ACCEPT)
SKIP, REVERSE, DRAW_TWO = 10, 11, 12

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# --- randomness: splitmix64, one uint64 state per game ------------------------------------


@njit(cache=True, inline="always")
def next_u64(rng, b):
    """Advance game b's generator and return 64 random bits."""
    z = rng[b, 0] + _GOLDEN
    rng[b, 0] = z
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def randint(rng, b, n):
    """Uniform integer in [0, n): the high 32 random bits scaled by n (Lemire's multiply-shift;
    bias below 3e-8 for n <= 112), because a 64-bit division costs more than the whole draw."""
    return np.int64(((next_u64(rng, b) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True)
def shuffle_prefix(rng, b, arr, n):
    """Fisher–Yates shuffle of arr[:n] with game b's generator."""
    for i in range(n - 1, 0, -1):
        j = randint(rng, b, i + 1)
        tmp = arr[i]
        arr[i] = arr[j]
        arr[j] = tmp


# --- events -------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def emit(s, b, kind, player, card, extra):
    """Append one event to game b's buffer when recording (buffer width 0 means off)."""
    ev, evn = s[5], s[6]
    if ev.shape[1] == 0:
        return
    n = evn[b]
    if n < ev.shape[1]:
        ev[b, n, 0] = kind
        ev[b, n, 1] = player
        ev[b, n, 2] = card
        ev[b, n, 3] = extra
    evn[b] = n + 1


# --- small helpers ------------------------------------------------------------------------


@njit(cache=True, inline="always")
def seat_after(g, cfg, b, seat, k):
    """The seat k places after `seat` in the current direction."""
    n = cfg[C_NUM_PLAYERS]
    return (seat + k * g[b, G_DIRECTION]) % n


@njit(cache=True, inline="always")
def top_card(s, b):
    g, piles = s[0], s[3]
    return piles[b, PILE_DISCARD, g[b, G_DISCARD_SIZE] - 1]


@njit(cache=True, inline="always")
def push_discard(s, b, card):
    g, hands, piles = s[0], s[2], s[3]
    piles[b, PILE_DISCARD, g[b, G_DISCARD_SIZE]] = card
    g[b, G_DISCARD_SIZE] += 1
    hands[b, hands.shape[1] - 1, card] += 1


@njit(cache=True)
def reshuffle(s, b):
    """R4, R12.2: the discard pile but its top card becomes the new draw pile."""
    g, hands, piles, rng = s[0], s[2], s[3], s[4]
    d = g[b, G_DISCARD_SIZE]
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
    shuffle_prefix(rng, b, piles[b, PILE_DRAW], d - 1)
    emit(s, b, EV_RESHUFFLE, -1, -1, d - 1)


@njit(cache=True)
def draw_one(s, b, seat, kind, reason):
    """Move the top of the draw pile to a hand; -1 (and a flag) when both piles are empty."""
    g, pl, hands, piles = s[0], s[1], s[2], s[3]
    if g[b, G_DRAW_SIZE] == 0:
        reshuffle(s, b)
        if g[b, G_DRAW_SIZE] == 0:
            g[b, G_EMPTY_DRAW] = 1
            return -1
    n = g[b, G_DRAW_SIZE] - 1
    g[b, G_DRAW_SIZE] = n
    c = piles[b, PILE_DRAW, n]
    hands[b, seat, c] += 1
    pl[b, seat, PL_HAND_SIZE] += 1
    emit(s, b, kind, seat, c, reason)
    return c


@njit(cache=True)
def draw_n(s, b, seat, count, reason):
    for _ in range(count):
        if draw_one(s, b, seat, EV_DRAW, reason) < 0:
            return


@njit(cache=True, inline="always")
def can_draw(s, b):
    """R12.1: something can be drawn (the draw pile, or the discard pile below its top)."""
    g = s[0]
    return g[b, G_DRAW_SIZE] > 0 or g[b, G_DISCARD_SIZE] > 1


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
    g, hands = s[0], s[2]
    color = g[b, G_COLOR]
    if color >= 0:
        base = color * 13
        for r in range(13):
            if hands[b, seat, base + r] > 0:
                return False
    if cfg[C_WD4_WILDS_MATCH]:
        for t in range(WILD, NUM_CARD_TYPES):
            if t != WILD_DRAW_FOUR and hands[b, seat, t] > 0:
                return False
    return True


@njit(cache=True)
def offered(s, cfg, b, seat, card):
    """Whether PLAY of a held card is in the mask of phase `play` (R4, R8, R12.10)."""
    if not matches(s, cfg, b, card):
        return False
    if card == WILD_DRAW_FOUR and not cfg[C_BLUFFING] and not wd4_legal(s, cfg, b, seat):
        return False
    if cfg[C_FORBID_LAST_ACTION] and s[1][b, seat, PL_HAND_SIZE] == 1:
        if card == WILD or card == WILD_DRAW_FOUR or (card < WILD and CARD_RANK[card] == REVERSE):
            return False
    return True


# --- mask and observation -----------------------------------------------------------------


@njit(cache=True)
def write_mask(s, cfg, b, mask):
    """The legal actions of the player to act (all False once the round is over)."""
    # Arrays are indexed with b rather than sliced: every view costs two atomic refcounts.
    g = s[0]
    for a in range(mask.shape[1]):
        mask[b, a] = False
    phase = g[b, G_PHASE]
    p = g[b, G_PLAYER]
    if phase == PHASE_PLAY:
        any_play = write_play_mask(s, cfg, b, p, mask)
        drawable = can_draw(s, b)
        if drawable and (cfg[C_VOLUNTARY_DRAW] or not any_play):
            mask[b, DRAW] = True
        if not any_play and not drawable:
            mask[b, PASS] = True
    elif phase == PHASE_POST_DRAW:
        mask[b, g[b, G_DRAWN]] = True
        mask[b, PASS] = True
    elif phase == PHASE_CHOOSE_COLOR:
        for c in range(4):
            mask[b, CHOOSE_RED + c] = True
    elif phase == PHASE_RESPOND_DRAW_FOUR:
        mask[b, CHALLENGE] = True
        mask[b, ACCEPT] = True


@njit(cache=True)
def write_play_mask(s, cfg, b, p, mask):
    """PLAY entries of phase `play` (R4, R8, R12.10), the same set as `offered`; True if any.

    Only the slots that can match are visited: the current colour, the top card's rank in the
    other colours, and the wilds. This is the hot loop of every step."""
    h = s[2]
    color = s[0][b, G_COLOR]
    top = top_card(s, b)
    top_rank = CARD_RANK[top] if top < WILD else -1
    any_play = False
    for c in range(4):
        base = c * 13
        if c == color:
            for r in range(13):
                if h[b, p, base + r] > 0:
                    mask[b, base + r] = True
                    any_play = True
        elif top_rank >= 0 and h[b, p, base + top_rank] > 0:
            mask[b, base + top_rank] = True
            any_play = True
    for t in range(WILD, NUM_CARD_TYPES):
        if h[b, p, t] > 0:
            if t == WILD_DRAW_FOUR and not cfg[C_BLUFFING] and not wd4_legal(s, cfg, b, p):
                continue
            mask[b, t] = True
            any_play = True
    if cfg[C_FORBID_LAST_ACTION] and s[1][b, p, PL_HAND_SIZE] == 1:
        mask[b, WILD] = False
        mask[b, WILD_DRAW_FOUR] = False
        for c in range(4):
            mask[b, c * 13 + REVERSE] = False
        any_play = False
        for t in range(NUM_CARD_TYPES):
            any_play = any_play or mask[b, t]
    return any_play


@njit(cache=True)
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
    is_current = seat == g[b, G_PLAYER] and phase != PHASE_ROUND_OVER
    obs[row, OBS_IS_CURRENT] = 1.0 if is_current else 0.0
    if is_current and phase == PHASE_POST_DRAW:
        obs[row, OBS_DRAWN + g[b, G_DRAWN]] = 1.0
    if phase == PHASE_RESPOND_DRAW_FOUR and g[b, G_PREV_COLOR] >= 0:
        obs[row, OBS_WD4_PREV + g[b, G_PREV_COLOR]] = 1.0
    for k in range(n):
        other = (seat + k) % n
        size = pl[b, other, PL_HAND_SIZE]
        obs[row, OBS_HAND_SIZES + k] = size
        obs[row, OBS_PRESENT + k] = 1.0
        obs[row, OBS_SCORES + k] = pl[b, other, PL_SCORE] / 100.0
        obs[row, OBS_UNO + k] = 1.0 if size == 1 else 0.0
        if cfg[C_OPEN_HANDS] and k > 0:
            for t in range(NUM_CARD_TYPES):
                obs[row, OBS_OPEN_HANDS + (k - 1) * NUM_CARD_TYPES + t] = hands[b, other, t]
    obs[row, OBS_DRAW_PILE] = g[b, G_DRAW_SIZE]


# --- round end ----------------------------------------------------------------------------


@njit(cache=True)
def hand_points(s, points, b, seat):
    hands = s[2]
    total = 0
    for t in range(NUM_CARD_TYPES):
        total += hands[b, seat, t] * points[t]
    return total


@njit(cache=True)
def end_round(s, cfg, points, b, winners, rewards):
    """R8 `winner_takes`: each winner scores the points left in the losers' hands; +1/-1."""
    g, pl = s[0], s[1]
    n = cfg[C_NUM_PLAYERS]
    losers_points = 0
    for p in range(n):
        if not (winners >> p) & 1:
            losers_points += hand_points(s, points, b, p)
    for p in range(n):
        if (winners >> p) & 1:
            pl[b, p, PL_SCORE] += losers_points
            rewards[b, p] = 1.0
            emit(s, b, EV_SCORE, p, -1, losers_points)
        else:
            rewards[b, p] = -1.0
    g[b, G_WINNERS] = winners
    g[b, G_PHASE] = PHASE_ROUND_OVER
    g[b, G_DONE] = 1
    g[b, G_PENDING] = 0
    emit(s, b, EV_ROUND_END, -1, -1, winners)


@njit(cache=True)
def fewest_mask(s, cfg, points, b, by_points):
    """Bit mask of the seats tied on the fewest hand points (or cards)."""
    pl = s[1]
    n = cfg[C_NUM_PLAYERS]
    best = 1 << 30
    winners = 0
    for p in range(n):
        v = hand_points(s, points, b, p) if by_points else pl[b, p, PL_HAND_SIZE]
        if v < best:
            best = v
            winners = 1 << p
        elif v == best:
            winners |= 1 << p
    return winners


# --- setup (R3, R9) -----------------------------------------------------------------------


@njit(cache=True)
def first_card_redrawn(cfg, card):
    """R9: whether the turned card goes back into the draw pile."""
    if card == WILD_DRAW_FOUR:
        return True
    if cfg[C_REDRAW_SPECIAL] and (card >= WILD or CARD_RANK[card] >= 10):
        return True
    return cfg[C_REDRAW_WILD] and card >= WILD


@njit(cache=True)
def reset_game(s, cfg, deck, b):
    """Shuffle, pick a dealer, deal, turn the first card and apply R9."""
    g, pl, hands, piles, rng = s[0], s[1], s[2], s[3], s[4]
    n = cfg[C_NUM_PLAYERS]
    rng[b, 1] = rng[b, 0]
    g[b, :] = 0
    pl[b, :, :] = 0
    hands[b, :, :] = 0
    size = 0
    for t in range(NUM_CARD_TYPES):
        for _ in range(deck[t]):
            piles[b, PILE_DRAW, size] = t
            size += 1
    shuffle_prefix(rng, b, piles[b, PILE_DRAW], size)
    g[b, G_DRAW_SIZE] = size
    g[b, G_DIRECTION] = 1
    g[b, G_DRAWN] = -1
    g[b, G_WD4_PLAYER] = -1
    g[b, G_PREV_COLOR] = -1
    dealer = randint(rng, b, n)
    g[b, G_DEALER] = dealer
    for _ in range(cfg[C_HAND_SIZE]):
        for k in range(1, n + 1):
            draw_one(s, b, (dealer + k) % n, EV_DEAL, 0)
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
        shuffle_prefix(rng, b, piles[b, PILE_DRAW], m + 1)
    first = (dealer + 1) % n
    g[b, G_PLAYER] = first
    g[b, G_PHASE] = PHASE_PLAY
    if card >= WILD:
        g[b, G_COLOR] = -1
        g[b, G_PHASE] = PHASE_CHOOSE_COLOR
        g[b, G_WILD] = card
        g[b, G_FIRST_CARD] = 1
        return
    g[b, G_COLOR] = CARD_COLOR[card]
    rank = CARD_RANK[card]
    if rank == SKIP:
        g[b, G_PLAYER] = (first + 1) % n
    elif rank == DRAW_TWO:
        draw_n(s, b, first, 2, DRAW_FIRST_CARD)
        g[b, G_PLAYER] = (first + 1) % n
    elif rank == REVERSE:
        g[b, G_DIRECTION] = -1
        g[b, G_PLAYER] = dealer


# --- one action ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def advance(s, cfg, b, k):
    """End the turn: the seat k places on plays next (k=2 skips one player)."""
    g = s[0]
    g[b, G_PLAYER] = seat_after(g, cfg, b, g[b, G_PLAYER], k)
    g[b, G_PHASE] = PHASE_PLAY
    g[b, G_DRAWN] = -1


@njit(cache=True)
def play_card(s, cfg, points, b, card, rewards):
    """R4, R5, R8: play a held card."""
    g, pl, hands = s[0], s[1], s[2]
    p = g[b, G_PLAYER]
    n = cfg[C_NUM_PLAYERS]
    if card == WILD_DRAW_FOUR:
        g[b, G_WD4_GUILTY] = 0 if wd4_legal(s, cfg, b, p) else 1
        g[b, G_WD4_PLAYER] = p
        g[b, G_PREV_COLOR] = g[b, G_COLOR]
    hands[b, p, card] -= 1
    pl[b, p, PL_HAND_SIZE] -= 1
    push_discard(s, b, card)
    emit(s, b, EV_PLAY, p, card, 0)
    g[b, G_DRAWN] = -1
    rank = CARD_RANK[card]
    if card < WILD:
        g[b, G_COLOR] = CARD_COLOR[card]
    if pl[b, p, PL_HAND_SIZE] == 0:
        nxt = seat_after(g, cfg, b, p, 1)
        if rank == DRAW_TWO:
            draw_n(s, b, nxt, 2, DRAW_DRAW_TWO)
        elif card == WILD_DRAW_FOUR:
            draw_n(s, b, nxt, 4, DRAW_DRAW_FOUR)
        end_round(s, cfg, points, b, 1 << p, rewards)
        return
    if card >= WILD:
        g[b, G_WILD] = card
        g[b, G_PHASE] = PHASE_CHOOSE_COLOR
    elif rank < 10:
        advance(s, cfg, b, 1)
    elif rank == SKIP:
        advance(s, cfg, b, 2)
    elif rank == REVERSE:
        g[b, G_DIRECTION] = -g[b, G_DIRECTION]
        advance(s, cfg, b, 2 if n == 2 else 1)
    else:
        draw_n(s, b, seat_after(g, cfg, b, p, 1), 2, DRAW_DRAW_TWO)
        advance(s, cfg, b, 2)


@njit(cache=True)
def choose_color(s, cfg, b, color):
    """R4: the colour of a wild; then its effect (R5) or, for a first card, the play (R9)."""
    g = s[0]
    g[b, G_COLOR] = color
    emit(s, b, EV_COLOR, g[b, G_PLAYER], -1, color)
    if g[b, G_FIRST_CARD]:
        g[b, G_FIRST_CARD] = 0
        g[b, G_PHASE] = PHASE_PLAY
        return
    if g[b, G_WILD] == WILD_DRAW_FOUR:
        nxt = seat_after(g, cfg, b, g[b, G_PLAYER], 1)
        if cfg[C_CHALLENGE]:
            g[b, G_PENDING] = 4
            g[b, G_PLAYER] = nxt
            g[b, G_PHASE] = PHASE_RESPOND_DRAW_FOUR
        else:
            draw_n(s, b, nxt, 4, DRAW_DRAW_FOUR)
            advance(s, cfg, b, 2)
    else:
        advance(s, cfg, b, 1)


@njit(cache=True)
def respond_draw_four(s, cfg, b, action):
    """R6: accept (draw, lose the turn) or challenge (judged on the hand at the time)."""
    g = s[0]
    p = g[b, G_PLAYER]
    pending = g[b, G_PENDING]
    g[b, G_PENDING] = 0
    g[b, G_PREV_COLOR] = -1
    if action == ACCEPT:
        emit(s, b, EV_ACCEPT, p, -1, pending)
        draw_n(s, b, p, pending, DRAW_DRAW_FOUR)
        advance(s, cfg, b, 1)
        return
    guilty = g[b, G_WD4_GUILTY]
    emit(s, b, EV_CHALLENGE, p, g[b, G_WD4_PLAYER], guilty)
    if guilty:
        draw_n(s, b, g[b, G_WD4_PLAYER], cfg[C_GUILTY_DRAW], DRAW_CHALLENGE_GUILTY)
        g[b, G_PHASE] = PHASE_PLAY
    else:
        extra = cfg[C_INNOCENT_DRAW] - 4
        draw_n(s, b, p, max(pending + extra, 0), DRAW_CHALLENGE_INNOCENT)
        advance(s, cfg, b, 1)


@njit(cache=True)
def draw_action(s, cfg, b):
    """R4: draw; a playable card opens `post_draw`, else the turn ends."""
    g = s[0]
    p = g[b, G_PLAYER]
    card = draw_one(s, b, p, EV_DRAW, DRAW_VOLUNTARY)
    if cfg[C_DRAW_UNTIL_PLAYABLE]:
        while card >= 0 and not offered(s, cfg, b, p, card):
            card = draw_one(s, b, p, EV_DRAW, DRAW_VOLUNTARY)
    if card >= 0 and offered(s, cfg, b, p, card):
        g[b, G_PHASE] = PHASE_POST_DRAW
        g[b, G_DRAWN] = card
    else:
        advance(s, cfg, b, 1)


@njit(cache=True)
def apply_action(s, cfg, points, b, action, legal, rewards):
    """One decision of the player to act; `legal` is False only for an R10 penalty."""
    g = s[0]
    phase = g[b, G_PHASE]
    p = g[b, G_PLAYER]
    g[b, G_TURN] += 1
    g[b, G_EMPTY_DRAW] = 0
    if not legal:
        emit(s, b, EV_PENALTY, p, action, 0)
        draw_n(s, b, p, 1, DRAW_PENALTY)
        advance(s, cfg, b, 1)
    elif phase == PHASE_PLAY or phase == PHASE_POST_DRAW:
        if action < NUM_CARD_TYPES:
            play_card(s, cfg, points, b, action, rewards)
        elif action == DRAW:
            draw_action(s, cfg, b)
        else:
            emit(s, b, EV_PASS, p, -1, 0)
            advance(s, cfg, b, 1)
    elif phase == PHASE_CHOOSE_COLOR:
        choose_color(s, cfg, b, action - CHOOSE_RED)
    elif phase == PHASE_RESPOND_DRAW_FOUR:
        respond_draw_four(s, cfg, b, action)
    if g[b, G_DONE]:
        return
    if cfg[C_END_ON_EMPTY_DECK] and g[b, G_EMPTY_DRAW]:
        end_round(s, cfg, points, b, fewest_mask(s, cfg, points, b, True), rewards)
    elif cfg[C_MAX_TURNS] > 0 and g[b, G_TURN] >= cfg[C_MAX_TURNS]:
        if cfg[C_FEWEST_CARDS_WINS]:
            end_round(s, cfg, points, b, fewest_mask(s, cfg, points, b, False), rewards)
        else:
            g[b, G_PHASE] = PHASE_ROUND_OVER
            g[b, G_DONE] = 2
            emit(s, b, EV_TRUNCATE, -1, -1, g[b, G_TURN])
