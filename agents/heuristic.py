"""``HeuristicAgent``: the strongest rule-based player of the package (its rules: docs/agents.md)."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

if TYPE_CHECKING:
    from uno_env.threads import Chunks
from uno_env.actions import ACCEPT, CHALLENGE, CHOOSE_RED, DRAW, PASS, double_of
from uno_env.cards import (
    CARD_COLOR,
    CARD_RANK,
    DRAW_TWO,
    NUM_CARD_TYPES,
    NUM_COLORS,
    NUM_RANKS,
    REVERSE,
    SKIP,
    WILD,
    WILD_DRAW_FOUR,
    WILD_SHUFFLE_HANDS,
    WILD_SWAP_HANDS,
)
from uno_env.observation import (
    PHASE_CHOOSE_COLOR,
    PHASE_CHOOSE_SWAP_TARGET,
    PHASE_PLAY,
    PHASE_POST_DRAW,
    PHASE_RESPOND_DRAW_FOUR,
    PHASE_RESPOND_DRAW_TWO,
    active_seats,
    color_of,
    drawn_of,
    drew_on_color_of,
    hand_size_at,
    held,
    in_play,
    is_partner,
    named_color_of,
    next_slot,
    num_seats,
    phase_of,
    prev_slot,
    top_of,
    unseen_counts,
    wd4_legal,
    wd4_prev_color_of,
)
from uno_env.policy import as_batch, kth_legal
from uno_env.rules import UnoRules

from ._tactics import answer_draw_penalty, prob_lacks, rule_tables, smallest_hand_swap, uno_call_action


class HeuristicParams(NamedTuple):
    """The heuristic's weights, one named field each; ``HeuristicAgent(rules, **overrides)`` builds one."""

    # The kernels get a float64 array and read ``prm[W.follow]``: numba would unbox a tuple's fields
    # one by one on every call, which the search agents' one-row calls feel.

    follow: float = 1.0
    """per own card expected to fit the colour left after the next reply"""
    lack: float = 2.0
    """times the chance that the next player fits nothing and must draw"""
    spread: float = 0.5
    """per colour still held after the play"""
    points: float = 0.05
    """per 50 R8 points shed (a tie-breaker: shed high-point cards first)"""
    tempo: float = 1.5
    """2 players: an action card that can be followed up in the same turn"""
    no_follow: float = 3.0
    """2 players: an action card whose extra turn could only draw"""
    draw_two: float = 1.0
    """the next player draws two"""
    wd4: float = 2.0
    """the next player draws four"""
    attack: float = 3.0
    """per card the next player is under attack_size + 1, for stopping cards"""
    attack_size: float = 2.0
    """the next player is "close to going out" at this many cards or fewer"""
    skip_multi: float = 0.5
    """3+ players: skipping the next player"""
    wild_keep: float = 8.0
    """cost of spending a wild that could be kept for when nothing fits"""
    wd4_keep: float = 6.0
    """the same for a (legal) Wild Draw Four"""
    hand_gain: float = 1.0
    """per card a Shuffle/Swap Hands wild is expected to take off the hand"""
    bluff: float = 0.0
    """chance of considering a bluff when nobody is close to going out"""
    bluff_attack: float = 0.25
    """chance of considering a bluff when the next player is close to out"""
    bluff_risk: float = 1.0
    """cost of an illegal Wild Draw Four (it may be challenged)"""
    bluff_prior: float = 0.05
    """assumed chance that an opponent holding the colour bluffs anyway"""
    challenge_at: float = 0.18
    """challenge when the estimated chance of a bluff exceeds this"""
    in_play_bias: float = 0.85
    """weight of unseen cards of the colour in play in the next hand"""
    named_bias: float = 1.4
    """the same when the wild on top named that colour"""
    other_bias: float = 1.0
    """the same for the other colours"""
    setup: float = 1.0
    """2 players: the hand left could all be shed in one later turn"""
    seat_named_bias: float = 1.4
    """weight of the colour the next player named with its last wild"""
    drew_bias: float = 0.2
    """weight of the colour the next player last drew on (it held none then)"""
    drew_wild_bias: float = 0.3
    """weight of wilds in the hand of a next player that drew on a colour"""


W = HeuristicParams._make(range(len(HeuristicParams._fields)))
"""each weight's position in the kernels' array ``prm`` (``np.array(params)``): they read ``prm[W.follow]``"""

# Slots of the per-decision context vector shared by the scoring functions.
X_TWO = 0  # 1 when two players are left (action cards give the turn back, R5)
X_H_ME = 1
X_H_NEXT = 2
X_H_PREV = 3
X_FOE = 4  # +1 when the next player is an opponent, -1 for a partner (R8 teams)
X_PREV_FOE = 5
X_BLUFF_OK = 6  # 1 when an illegal Wild Draw Four may be played this decision
X_WILDS_MATCH = 7  # R12.9
X_SHUFFLE_GAIN = 8  # cards a Wild Shuffle Hands would take off the hand
X_SWAP_GAIN = 9  # cards a Wild Swap Hands would take off the hand
X_SIZE = 10

WIN = 1e6
MAX_OUT_CARDS = 5  # going-out search tries every order of at most 5 cards (120 orders)


# --- going out in one turn with 2 players ---------------------------------------------------


@njit(cache=True)
def _sequence_fits(cards, k, color, rank, wilds_match, may_bluff):
    """Whether cards[:k] can be played in this order in one turn (2 players) from (color, rank).

    ``color`` -1 means any colour fits (a Wild Draw Four just let us name it).
    """
    for i in range(k):
        t = cards[i]
        if i == k - 1:
            return t >= WILD or color < 0 or CARD_COLOR[t] == color or CARD_RANK[t] == rank
        if t == WILD_DRAW_FOUR:
            # It gives the turn back (R5) and names the next card's colour; R4 judges it on the
            # cards still held (R12.9 adds the plain wilds) unless a bluff is allowed.
            if not may_bluff:
                for j in range(i + 1, k):
                    x = cards[j]
                    if color >= 0 and x < WILD and CARD_COLOR[x] == color:
                        return False
                    if wilds_match and x >= WILD and x != WILD_DRAW_FOUR:
                        return False
            color = -1
            rank = -1
            continue
        if t >= WILD:
            return False  # a plain wild passes the turn on: only as the last card
        if color >= 0 and CARD_COLOR[t] != color and CARD_RANK[t] != rank:
            return False
        if CARD_RANK[t] < SKIP:
            return False  # a number card ends the turn
        color = CARD_COLOR[t]
        rank = CARD_RANK[t]
    return True


@njit(cache=True)
def _goes_out(hand, color, rank, wilds_match, may_bluff):
    """2 players: whether the whole hand can be shed this turn after a play left (color, rank)."""
    # Every order of at most MAX_OUT_CARDS cards, by Heap's algorithm: numba's cache cannot hold
    # recursive functions.
    k = 0
    for t in range(NUM_CARD_TYPES):
        k += hand[t]
    if k == 0:
        return True
    if k > MAX_OUT_CARDS:
        return False
    cards = np.empty(k, np.int64)
    i = 0
    stoppers = 0
    for t in range(NUM_CARD_TYPES):
        for _ in range(hand[t]):
            cards[i] = t
            i += 1
            if t == WILD_DRAW_FOUR or (t < WILD and CARD_RANK[t] >= SKIP):
                stoppers += 1
    if stoppers < k - 1:
        return False
    if _sequence_fits(cards, k, color, rank, wilds_match, may_bluff):
        return True
    c = np.zeros(k, np.int64)
    i = 1
    while i < k:
        if c[i] < i:
            j = 0 if i % 2 == 0 else c[i]
            tmp = cards[j]
            cards[j] = cards[i]
            cards[i] = tmp
            if _sequence_fits(cards, k, color, rank, wilds_match, may_bluff):
                return True
            c[i] += 1
            i = 1
        else:
            c[i] = 0
            i += 1
    return False


# --- values of positions and plays ----------------------------------------------------------


@njit(cache=True)
def _attack(h, prm):
    """How urgently a player holding h cards must be stopped (0 when not close to going out)."""
    return max(prm[W.attack_size] + 1.0 - h, 0.0)


@njit(cache=True)
def _leave_value(cnt, unseen, unseen_color, total_unseen, h_next, foe, c, r, prm):
    """Value of leaving (colour c, rank r) on top, rank -1 for a wild; cnt: the hand after (rules 2-3)."""
    fits = unseen_color[c]
    for t in range(WILD, NUM_CARD_TYPES):
        fits += unseen[t]
    stay = float(unseen_color[c])
    follow = stay * cnt[c]
    total = stay
    if r >= 0:
        for c2 in range(NUM_COLORS):
            if c2 != c:
                w = unseen[c2 * NUM_RANKS + r]
                fits += w
                follow += w * cnt[c2]
                total += w
    follow = follow / total if total > 0 else float(cnt[c])
    spread = 0
    for c2 in range(NUM_COLORS):
        if cnt[c2] > 0:
            spread += 1
    stuck = prob_lacks(total_unseen, fits, h_next)
    return prm[W.follow] * follow + foe * prm[W.lack] * stuck + prm[W.spread] * spread


@njit(cache=True)
def _best_color(cnt, unseen, unseen_color, total_unseen, h_next, foe, prm):
    """The colour to name for a wild (rule 2), and its value."""
    best, best_v = 0, -1e18
    for c in range(NUM_COLORS):
        v = _leave_value(cnt, unseen, unseen_color, total_unseen, h_next, foe, c, -1, prm)
        if v > best_v:
            best, best_v = c, v
    return best, best_v


@njit(cache=True)
def _holds_plain_wild(hand):
    """Whether the hand holds a wild other than a Wild Draw Four."""
    for t in range(WILD, NUM_CARD_TYPES):
        if t != WILD_DRAW_FOUR and hand[t] > 0:
            return True
    return False


@njit(cache=True)
def _setup_bonus(hand, x, prm):
    """2 players: ``setup`` when the hand left (2+ cards) could all go in one later turn."""
    if x[X_TWO] == 0:
        return 0.0
    k = 0
    for t in range(NUM_CARD_TYPES):
        k += hand[t]
    if k < 2 or k > MAX_OUT_CARDS:
        return 0.0
    return prm[W.setup] if _goes_out(hand, -1, -1, x[X_WILDS_MATCH] > 0, False) else 0.0


@njit(cache=True)
def _has_follow(hand, color, rank):
    """Whether a coloured card of the hand fits (color, rank)."""
    for t in range(WILD):
        if hand[t] > 0 and (CARD_COLOR[t] == color or CARD_RANK[t] == rank):
            return True
    return False


@njit(cache=True)
def _continuation(hand, cnt, c, r, unseen, unseen_color, total_unseen, h_next, foe, points, x, prm):
    """2 players, after an action card left (c, r): value of the best coloured follow-up (-1e18: none)."""
    best = -1e18
    for t in range(WILD):
        if hand[t] == 0 or (CARD_COLOR[t] != c and CARD_RANK[t] != r):
            continue
        c2 = CARD_COLOR[t]
        r2 = CARD_RANK[t]
        cnt[c2] -= 1
        v = prm[W.points] * points[t] / 50.0
        v += _leave_value(cnt, unseen, unseen_color, total_unseen, h_next, foe, c2, r2, prm)
        hand[t] -= 1
        if r2 >= SKIP:
            # A follow-up that is itself an action card is worth its tempo only if something
            # follows it in turn (checked one more level, not scored).
            v += prm[W.tempo] if _has_follow(hand, c2, r2) else -prm[W.no_follow]
        else:
            v += _setup_bonus(hand, x, prm)
        hand[t] += 1
        cnt[c2] += 1
        if v > best:
            best = v
    return best


@njit(cache=True)
def _best_turn_color(hand, cnt, unseen, unseen_color, total_unseen, h_next, foe, points, x, prm):
    """2 players, naming a colour and playing again: the colour with the best follow-up.

    Returns (colour, value of that follow-up), or (-1, -1e18) when no coloured card is held.
    """
    best, best_v = -1, -1e18
    for c in range(NUM_COLORS):
        v = _continuation(hand, cnt, c, -1, unseen, unseen_color, total_unseen, h_next, foe, points, x, prm)
        if v > best_v:
            best, best_v = c, v
    if best_v <= -1e17:
        return -1, best_v
    return best, best_v


@njit(cache=True)
def _score_wild(t, hand, cnt, unseen, unseen_color, total_unseen, points, x, bluff, prm):
    """Value of playing a wild (rules 1, 5, 6, 7)."""
    h_next = x[X_H_NEXT]
    foe = x[X_FOE]
    v = prm[W.points] * points[t] / 50.0
    threat = _attack(h_next, prm)
    if t == WILD_DRAW_FOUR:
        v += foe * (prm[W.wd4] + 2.0 * prm[W.attack] * threat) - prm[W.wd4_keep]
        if bluff:
            v -= prm[W.bluff_risk]
        if x[X_TWO] > 0:
            # The turn comes straight back (R5): it may go out, else a coloured card follows.
            hand[t] -= 1
            out = _goes_out(hand, -1, -1, x[X_WILDS_MATCH] > 0, x[X_BLUFF_OK] > 0)
            hand[t] += 1
            if out:
                return WIN / 2
            v += prm[W.tempo] if cnt[0] + cnt[1] + cnt[2] + cnt[3] > 0 else -prm[W.no_follow]
        return v + _best_color(cnt, unseen, unseen_color, total_unseen, h_next, foe, prm)[1]
    v += _best_color(cnt, unseen, unseen_color, total_unseen, h_next, foe, prm)[1]
    v += foe * prm[W.attack] * threat - prm[W.wild_keep]
    hand[t] -= 1
    v += _setup_bonus(hand, x, prm)
    hand[t] += 1
    if t == WILD_SHUFFLE_HANDS:
        v += prm[W.hand_gain] * x[X_SHUFFLE_GAIN]
    elif t == WILD_SWAP_HANDS:
        v += prm[W.hand_gain] * x[X_SWAP_GAIN]
    return v


@njit(cache=True)
def _score_coloured(t, hand, cnt, unseen, unseen_color, total_unseen, points, x, prm):
    """Value of playing coloured card t (rules 1–5)."""
    c = CARD_COLOR[t]
    r = CARD_RANK[t]
    h_next = x[X_H_NEXT]
    foe = x[X_FOE]
    v = prm[W.points] * points[t] / 50.0
    hand[t] -= 1
    cnt[c] -= 1
    if x[X_TWO] > 0 and r >= SKIP:
        # Every action card gives the turn straight back with 2 players (R5): value the best
        # follow-up rather than what the opponent would face.
        h_after = h_next + 2 if r == DRAW_TWO else h_next
        if _goes_out(hand, c, r, x[X_WILDS_MATCH] > 0, x[X_BLUFF_OK] > 0):
            v = WIN / 2
        else:
            cont = _continuation(hand, cnt, c, r, unseen, unseen_color, total_unseen, h_after, foe, points, x, prm)
            if cont > -1e17:
                v += prm[W.tempo] + cont
            else:
                # No coloured card follows: the extra turn draws, or plays a wild (a Wild Draw
                # Four is legal then, as no card of colour c is left, unless R12.9 forbids it).
                alt = _leave_value(cnt, unseen, unseen_color, total_unseen, h_after, foe, c, r, prm)
                alt -= prm[W.no_follow]
                x2 = x.copy()
                x2[X_H_NEXT] = h_after
                for w in range(WILD, NUM_CARD_TYPES):
                    if hand[w] == 0:
                        continue
                    if w == WILD_DRAW_FOUR and x[X_WILDS_MATCH] > 0 and _holds_plain_wild(hand):
                        continue
                    vw = prm[W.tempo] + _score_wild(
                        w, hand, cnt, unseen, unseen_color, total_unseen, points, x2, False, prm
                    )
                    if vw > alt:
                        alt = vw
                v += alt
    else:
        v += _leave_value(cnt, unseen, unseen_color, total_unseen, h_next, foe, c, r, prm)
        v += _setup_bonus(hand, x, prm)
    hand[t] += 1
    cnt[c] += 1
    if v >= WIN / 2:
        return v
    threat = _attack(h_next, prm)
    if r == DRAW_TWO:
        v += foe * (prm[W.draw_two] + 2.0 * prm[W.attack] * threat)
    elif r == SKIP or (r == REVERSE and x[X_TWO] > 0):
        v += foe * prm[W.attack] * threat
        if x[X_TWO] == 0:
            v += foe * prm[W.skip_multi]
    elif r == REVERSE:
        # The previous player moves next instead of the next one.
        v += prm[W.attack] * (foe * threat - x[X_PREV_FOE] * _attack(x[X_H_PREV], prm))
    return v


@njit(cache=True)
def _best_play(m, only, legal_wd4, hand, cnt, unseen, unseen_color, total_unseen, points, x, prm):
    """The best-scoring play (restricted to card ``only`` when >= 0), and its value."""
    best, best_v = -1, -1e18
    for t in range(NUM_CARD_TYPES):
        if not m[t] or (only >= 0 and t != only):
            continue
        bluff = t == WILD_DRAW_FOUR and not legal_wd4
        if bluff and x[X_BLUFF_OK] == 0:
            continue
        if x[X_H_ME] == 1:
            v = WIN  # the last card wins the round
        elif t < WILD:
            v = _score_coloured(t, hand, cnt, unseen, unseen_color, total_unseen, points, x, prm)
        else:
            v = _score_wild(t, hand, cnt, unseen, unseen_color, total_unseen, points, x, bluff, prm)
        if v > best_v:
            best, best_v = t, v
    return best, best_v


@njit(cache=True)
def _challenge(o, unseen, unseen_color, total_unseen, h_prev, wilds_match, prm):
    """Whether to challenge the pending Wild Draw Four (docs/agents.md)."""
    prev_color = wd4_prev_color_of(o)
    of_color = unseen_color[prev_color] if prev_color >= 0 else 0
    if wilds_match:
        for t in range(WILD, NUM_CARD_TYPES):
            if t != WILD_DRAW_FOUR:
                of_color += unseen[t]
    # Bayes: a player holding the colour plays the Draw Four only when bluffing.
    p_has = 1.0 - prob_lacks(total_unseen, of_color, h_prev)
    guilty = prm[W.bluff_prior] * p_has
    q = guilty / max(guilty + (1.0 - p_has), 1e-12)
    return q > prm[W.challenge_at]


# --- one decision, by phase ---------------------------------------------------------------------
# Inlined into _act_row by numba (inline="always"): as plain calls, with their many array
# arguments, they made a decision measurably slower.


@njit(cache=True, inline="always")
def _play_or_draw(o, m, u, phase, hand, cnt, opp_unseen, opp_color, total_unseen, points, x, wilds_match, prm):
    """Phases play and post_draw: the best-scoring card (as a double when allowed), else draw
    or pass; -1 when none of these is offered."""
    legal_wd4 = wd4_legal(o, wilds_match)
    attack = x[X_FOE] > 0 and x[X_H_NEXT] <= prm[W.attack_size]
    x[X_BLUFF_OK] = 1.0 if u[1] < (prm[W.bluff_attack] if attack else prm[W.bluff]) else 0.0
    only = drawn_of(o) if phase == PHASE_POST_DRAW else -1
    best = _best_play(m, only, legal_wd4, hand, cnt, opp_unseen, opp_color, total_unseen, points, x, prm)[0]
    if best >= 0:
        # Two copies of a number card shed twice as fast (R4 `allow_doubles`).
        d = double_of(best)
        if d >= 0 and m[d]:
            return d
        return best
    if m[DRAW]:
        return DRAW
    if m[PASS]:
        return PASS
    return -1


@njit(cache=True, inline="always")
def _choose_color(o, hand, cnt, opp_unseen, opp_color, total_unseen, points, x, prm):
    """Phase choose_color: the colour with the best leave value; with 2 players after a Wild
    Draw Four (it plays again), the colour of its best follow-up."""
    if x[X_TWO] > 0 and top_of(o) == WILD_DRAW_FOUR:
        c = _best_turn_color(hand, cnt, opp_unseen, opp_color, total_unseen, x[X_H_NEXT] + 4, x[X_FOE], points, x, prm)[
            0
        ]
        if c >= 0:
            return CHOOSE_RED + c
    return CHOOSE_RED + _best_color(cnt, opp_unseen, opp_color, total_unseen, x[X_H_NEXT], x[X_FOE], prm)[0]


@njit(cache=True, inline="always")
def _respond_draw_four(o, m, u, unseen, unseen_color, total_unseen, x, wilds_match, prm):
    """Phase respond_draw_four: stack, challenge or accept; -1 when none is offered."""
    # Stacking (R5): pass the sum on with a Wild Draw Four (legal, or a bluff when allowed).
    if m[WILD_DRAW_FOUR] and (wd4_legal(o, wilds_match) or u[1] < prm[W.bluff_attack]):
        return WILD_DRAW_FOUR
    if m[CHALLENGE] and _challenge(o, unseen, unseen_color, total_unseen, x[X_H_PREV], wilds_match, prm):
        return CHALLENGE
    if m[ACCEPT]:
        return ACCEPT
    return -1


@njit(cache=True)
def _act_row(o, m, u, deck, points, wilds_match, prm):
    """One decision of the heuristic: what it believes about the cards, then the decision of the phase."""
    call = uno_call_action(m)
    if call >= 0:
        return call
    phase = phase_of(o)
    n = num_seats(o)
    ns = next_slot(o, n)
    ps = prev_slot(o, n)
    # The beliefs stay inline rather than in helpers: every array handed to a numba function
    # costs an atomic reference-count pair, and four helpers made a decision measurably slower.
    hand = np.zeros(NUM_CARD_TYPES, np.int64)
    cnt = np.zeros(NUM_COLORS, np.int64)
    unseen = np.empty(NUM_CARD_TYPES, np.int64)
    unseen_counts(o, deck, unseen)
    unseen_color = np.zeros(NUM_COLORS, np.int64)
    total_unseen = 0
    for t in range(NUM_CARD_TYPES):
        hand[t] = held(o, t)
        total_unseen += unseen[t]
        if t < WILD:
            cnt[CARD_COLOR[t]] += hand[t]
            unseen_color[CARD_COLOR[t]] += unseen[t]
    # The next player's hand is modelled as drawn from the unseen cards, reweighted per colour:
    # players have been shedding the colour in play, and a wild names its player's colour.
    in_play_color = color_of(o)
    wild_on_top = top_of(o) >= WILD
    bias = np.full(NUM_COLORS, prm[W.other_bias])
    if in_play_color >= 0:
        bias[in_play_color] = prm[W.named_bias] if wild_on_top else prm[W.in_play_bias]
    # Public history (R11) of the next player: the colour named with its last wild (unless
    # that is the wild on top, counted above), and the colour it last drew on: it held no
    # card of that colour and no wild then, and has not played since.
    named = named_color_of(o, ns)
    if named >= 0 and not (wild_on_top and named == in_play_color):
        bias[named] *= prm[W.seat_named_bias]
    wild_bias = 1.0
    drew_on = drew_on_color_of(o, ns)
    if drew_on >= 0:
        bias[drew_on] *= prm[W.drew_bias]
        wild_bias = prm[W.drew_wild_bias]
    opp_unseen = np.empty(NUM_CARD_TYPES)
    opp_color = np.zeros(NUM_COLORS)
    for t in range(NUM_CARD_TYPES):
        opp_unseen[t] = unseen[t] * (bias[CARD_COLOR[t]] if t < WILD else wild_bias)
        if t < WILD:
            opp_color[CARD_COLOR[t]] += opp_unseen[t]
    x = np.zeros(X_SIZE)
    active = active_seats(o, n)
    x[X_TWO] = 1.0 if active == 2 else 0.0
    x[X_H_ME] = hand_size_at(o, 0)
    x[X_H_NEXT] = hand_size_at(o, ns)
    x[X_H_PREV] = hand_size_at(o, ps)
    x[X_FOE] = -1.0 if is_partner(o, ns) else 1.0
    x[X_PREV_FOE] = -1.0 if is_partner(o, ps) else 1.0
    x[X_WILDS_MATCH] = 1.0 if wilds_match else 0.0
    all_cards = 0.0
    smallest = 1e9
    for k in range(n):
        if in_play(o, k):
            all_cards += hand_size_at(o, k)
            if k > 0 and not is_partner(o, k):
                smallest = min(smallest, hand_size_at(o, k))
    # Shuffle Hands deals all cards evenly (R5); Swap Hands trades for the smallest hand.
    x[X_SHUFFLE_GAIN] = (x[X_H_ME] - 1.0) - (all_cards - 1.0) / max(active, 1)
    x[X_SWAP_GAIN] = (x[X_H_ME] - 1.0) - smallest if smallest < 1e9 else 0.0
    a = -1
    if phase == PHASE_PLAY or phase == PHASE_POST_DRAW:
        a = _play_or_draw(o, m, u, phase, hand, cnt, opp_unseen, opp_color, total_unseen, points, x, wilds_match, prm)
    elif phase == PHASE_CHOOSE_COLOR:
        a = _choose_color(o, hand, cnt, opp_unseen, opp_color, total_unseen, points, x, prm)
    elif phase == PHASE_RESPOND_DRAW_FOUR:
        a = _respond_draw_four(o, m, u, unseen, unseen_color, total_unseen, x, wilds_match, prm)
    elif phase == PHASE_RESPOND_DRAW_TWO:
        # Stacking (R5): pass the penalty on with a Draw Two rather than take it.
        a = answer_draw_penalty(o, m, phase, wilds_match)
    elif phase == PHASE_CHOOSE_SWAP_TARGET:
        a = smallest_hand_swap(o, m, n)
    return a if a >= 0 else kth_legal(m, u[0])


@njit(cache=True)
def _act_batch(obs, mask, u, deck, points, wilds_match, prm):
    out = np.empty(obs.shape[0], np.int64)
    for b in range(obs.shape[0]):
        out[b] = _act_row(obs[b], mask[b], u[b], deck, points, wilds_match, prm)
    return out


@njit(cache=True, nogil=True)
def _act_rows(obs, mask, u, deck, points, wilds_match, prm, out, lo, hi):
    """``_act_batch``'s rows lo..hi-1 into ``out``, without the GIL (one chunk of ``act_chunked``)."""
    for b in range(lo, hi):
        out[b] = _act_row(obs[b], mask[b], u[b], deck, points, wilds_match, prm)


class HeuristicAgent:
    """A rule-based player: it scores every legal play and takes the best (its rules: docs/agents.md).

    The weights are ``HeuristicParams``' fields, overridable by keyword: ``HeuristicAgent(rules, bluff=0.5)``.
    """

    name = "heuristic"

    def __init__(self, rules: UnoRules | None = None, **params: float) -> None:
        """``rules`` gives the deck, card points and R12.9; ``params`` override ``HeuristicParams``' defaults."""
        unknown = sorted(set(params) - set(HeuristicParams._fields))
        if unknown:
            raise ValueError(f"unknown heuristic parameter(s) {unknown}; known: {list(HeuristicParams._fields)}")
        bad = {k: v for k, v in params.items() if not isinstance(v, numbers.Real) or v != v}
        if bad:
            raise ValueError(f"heuristic parameters must be real numbers, got {bad}")
        self.params = HeuristicParams(**{k: float(v) for k, v in params.items()})
        self._prm = np.array(self.params, np.float64)
        self._deck, self._points, self._wilds_match = rule_tables(rules)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action per row (int64 [B])."""
        obs, mask = as_batch(observation, action_mask)
        # Two uniforms per row whatever the branch (a random fallback and the bluff decision),
        # so the stream a row consumes does not depend on the decisions.
        u = rng.random((obs.shape[0], 2))
        return _act_batch(obs, mask, u, self._deck, self._points, self._wilds_match, self._prm)

    def act_chunked(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator, chunks: Chunks
    ) -> np.ndarray:
        """``act``'s actions from the same draws, its rows in the contiguous chunks of ``chunks`` (one per thread)."""
        obs, mask = as_batch(observation, action_mask)
        u = rng.random((obs.shape[0], 2))
        out = np.empty(obs.shape[0], np.int64)
        chunks.run(obs.shape[0], _act_rows, obs, mask, u, self._deck, self._points, self._wilds_match, self._prm, out)
        return out
