"""Batch drivers: loop the one-game kernels over every game of the batch.

Validation runs over the whole batch before any game changes, so a rejected step leaves the state
as it was. The drivers called from Python take the engine's one byte buffer and cut every array
out of it (``unpack``), so a call unboxes one or two arrays, not one per field."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ..actions import NUM_ACTIONS
from ..cards import MAX_DECK_SIZE, NUM_CARD_TYPES
from ..observation import STATE_DRAW_PILE, STATE_OTHER_HANDS, STATE_TO_ACT
from .borrow import borrow, view_at
from .deal import deal_pool
from .kernels import PLAY_DOUBLE_FIRST, apply_action, redeal_hidden, reset_game, shuffle_draw, write_mask, write_obs
from .layout import (
    C_AUTORESET,
    C_NUM_PLAYERS,
    C_PENALTY,
    C_SIZE,
    C_WRITE_OBS,
    F_CFG,
    F_CODES,
    F_CUR,
    F_DECK,
    F_EVENT_COUNTS,
    F_EVENTS,
    F_FINAL_OBS,
    F_G,
    F_HANDS,
    F_MASK,
    F_OBS,
    F_PILES,
    F_PL,
    F_POINTS,
    F_REWARDS,
    F_RNG,
    F_TERM,
    F_TRUNC,
    G_DONE,
    G_DRAW_SIZE,
    G_PHASE,
    G_PLAYER,
    G_SIZE,
    H_EVENT_WIDTH,
    H_NUM_ENVS,
    H_NUM_PLAYERS,
    H_OBS_SIZE,
    H_OFFSETS,
    HEADER_SIZE,
    PHASE_PLAY,
    PHASE_POST_DRAW,
    PHASE_ROUND_OVER,
    PILE_DRAW,
    PL_HAND_SIZE,
    PL_SIZE,
)

# Internal action codes of the game loop (never valid in Engine.step): -1 leaves a game alone.
NONE = -1
RESET = -2  # deal a new round, then write the outputs
REFRESH = -3  # write the outputs of a position set from outside
AUTORESET = -4  # a game finished in this step: keep its observation as final_obs, deal anew

# Step error codes (returned as code * 2**32 + game index; 0 means no error).
ERR_OUT_OF_RANGE = 1
ERR_FINISHED = 2
ERR_ILLEGAL = 3
ERR_SHAPE = 4  # actions of another length than the batch (Engine.step checks them and says so)


@njit(cache=True)
def write_obs_call(s, cfg, b, seat, obs, row):
    """write_obs, called (observe(); off the step's path)."""
    write_obs(s, cfg, b, seat, obs, row)


@njit(cache=True)
def validate_batch(s, cfg, actions, mask, rewards):
    """0 if every action can be applied (the rewards are then cleared for the step), else
    code * 2**32 + the first bad game."""
    g = s[0]
    for b in range(actions.shape[0]):
        a = actions[b]
        if a == -1:
            continue
        if a < 0 or a >= NUM_ACTIONS:
            return ERR_OUT_OF_RANGE * 2**32 + b
        if g[b, G_DONE]:
            return ERR_FINISHED * 2**32 + b
        if not mask[b, a]:
            phase = g[b, G_PHASE]
            penalised = (
                cfg[C_PENALTY]
                and (phase == PHASE_PLAY or phase == PHASE_POST_DRAW)
                and (a < NUM_CARD_TYPES or a >= PLAY_DOUBLE_FIRST)
            )
            if not penalised:
                return ERR_ILLEGAL * 2**32 + b
    rewards[:, :] = 0.0
    return 0


# The views of the engine's buffer, by name: layout.FIELDS up to the history's arrays (which
# history.unpack_history makes), a test keeps the two in step. numba passes a namedtuple of
# arrays as it passes the arrays themselves, so naming them costs nothing in a step.
Buffers = namedtuple(
    "Buffers",
    [
        "g",
        "pl",
        "hands",
        "piles",
        "rng",
        "events",
        "event_counts",
        "cfg",
        "points",
        "deck",
        "observation",
        "legal_mask",
        "current_player",
        "rewards",
        "terminated",
        "truncated",
        "final_observation",
        "codes",
    ],
)


@njit(cache=True)
def unpack(buf):
    """The arrays of the engine's buffer (layout.FIELDS, offsets from its header), as unowned
    views in a ``Buffers``."""
    h = view_at(buf, 0, (HEADER_SIZE,), np.int64)
    B, P, D, W = h[H_NUM_ENVS], h[H_NUM_PLAYERS], h[H_OBS_SIZE], h[H_EVENT_WIDTH]
    o = H_OFFSETS
    return Buffers(
        view_at(buf, h[o + F_G], (B, G_SIZE), np.int64),
        view_at(buf, h[o + F_PL], (B, P, PL_SIZE), np.int64),
        view_at(buf, h[o + F_HANDS], (B, P + 1, NUM_CARD_TYPES), np.int8),
        view_at(buf, h[o + F_PILES], (B, 2, MAX_DECK_SIZE), np.int8),
        view_at(buf, h[o + F_RNG], (B, 2), np.uint64),
        view_at(buf, h[o + F_EVENTS], (W, B, 4), np.int32),
        view_at(buf, h[o + F_EVENT_COUNTS], (B,), np.int32),
        view_at(buf, h[o + F_CFG], (C_SIZE,), np.int64),
        view_at(buf, h[o + F_POINTS], (NUM_CARD_TYPES,), np.int64),
        view_at(buf, h[o + F_DECK], (NUM_CARD_TYPES,), np.int64),
        view_at(buf, h[o + F_OBS], (B, D), np.float32),
        view_at(buf, h[o + F_MASK], (B, NUM_ACTIONS), np.bool_),
        view_at(buf, h[o + F_CUR], (B,), np.int8),
        view_at(buf, h[o + F_REWARDS], (B, P), np.float32),
        view_at(buf, h[o + F_TERM], (B,), np.bool_),
        view_at(buf, h[o + F_TRUNC], (B,), np.bool_),
        view_at(buf, h[o + F_FINAL_OBS], (B, D), np.float32),
        view_at(buf, h[o + F_CODES], (B,), np.int64),
    )


@njit(cache=True)
def game_state(v):
    """The state tuple the kernels take, ``s = (g, pl, hands, piles, rng, events, event_counts)``."""
    return (v.g, v.pl, v.hands, v.piles, v.rng, v.events, v.event_counts)


@njit(cache=True)
def step_batch(buf, actions, validate):
    """Apply one action per game (-1: none), validated first when ``validate``; else RESET and REFRESH codes too.

    ``Engine`` seals this dispatcher after its first compile (``seal``): other argument types raise
    TypeError, and the Engine's checks take over."""
    v = unpack(buf)
    actions = borrow(actions)
    if actions.shape[0] != v.g.shape[0]:
        return ERR_SHAPE * 2**32
    if validate:
        err = validate_batch(game_state(v), v.cfg, actions, v.legal_mask, v.rewards)
        if err:
            return err
    _run_range(v, actions, 0, actions.shape[0])
    return 0


@njit(cache=True)
def step_one(buf, action):
    """The step of a batch of one game (the AEC env's), validated: an int action in.

    Returns -(error code * 2**32) on an error (nothing changed), else ``current_player + 256 * done``
    (done: 0 playing, 1 terminated, 2 truncated)."""
    v = unpack(buf)
    if v.g.shape[0] != 1:
        return -ERR_SHAPE * 2**32
    if action < 0 or action >= NUM_ACTIONS:
        return -ERR_OUT_OF_RANGE * 2**32
    v.codes[0] = action
    err = validate_batch(game_state(v), v.cfg, v.codes, v.legal_mask, v.rewards)
    if err:
        return -err
    # hi as g.shape[0] (1), never a literal 1: numba would compile _run_range again for it (seconds).
    _run_range(v, v.codes, 0, v.g.shape[0])
    return v.current_player[0] + 256 * v.g[0, G_DONE]


def seal(dispatcher) -> None:
    """Stop compiling for ``dispatcher`` once it has its one specialisation (other types raise TypeError)."""
    if hasattr(dispatcher, "disable_compile") and len(dispatcher.overloads) == 1:
        dispatcher.disable_compile()


# The step's kernels (apply_action, the mask and observation writers) are inlined into this one
# loop, which passes the state tuple and its reference counts once instead of per call; inlining
# costs compile time per copy, so this is their only call site: resets, refreshes and auto-resets
# run through it as codes, and splitting it into calls would bring the per-call cost back.
@njit(cache=True)
def _run_range(v, codes, lo, hi):
    """Games lo..hi-1: apply codes[b] (an action or internal code), write the outputs, auto-reset finished games."""
    g, pl, hands, piles, rng, ev, evn = (
        borrow(v.g),
        borrow(v.pl),
        borrow(v.hands),
        borrow(v.piles),
        borrow(v.rng),
        borrow(v.events),
        borrow(v.event_counts),
    )
    cfg, points, deck, codes = borrow(v.cfg), borrow(v.points), borrow(v.deck), borrow(codes)
    obs, mask, cur = borrow(v.observation), borrow(v.legal_mask), borrow(v.current_player)
    term, trunc = borrow(v.terminated), borrow(v.truncated)
    rewards, final_obs = borrow(v.rewards), borrow(v.final_observation)
    s = (g, pl, hands, piles, rng, ev, evn)
    for again in range(2):
        for b in range(lo, hi):
            a = codes[b]
            if again:
                # Auto-reset pass: the outputs of a game that finished are in place.
                a = AUTORESET if a >= 0 and g[b, G_DONE] != 0 else NONE
            if a == NONE:
                continue
            if a >= 0:
                evn[b] = 0
                apply_action(s, cfg, points, deck, b, a, mask[b, a], rewards)
            elif a == RESET:
                evn[b] = 0
                reset_game(s, cfg, deck, b)
            done = g[b, G_DONE]
            if a == AUTORESET:
                for k in range(obs.shape[1]):  # keep the finished game's observation, deal anew
                    final_obs[b, k] = obs[b, k]
                reset_game(s, cfg, deck, b)
            write_mask(s, cfg, b, mask)
            if cfg[C_WRITE_OBS]:
                write_obs(s, cfg, b, g[b, G_PLAYER], obs, b)
            cur[b] = g[b, G_PLAYER]
            if a == AUTORESET:
                term[b] = done == 1
                trunc[b] = done == 2
            else:
                term[b] = g[b, G_DONE] == 1
                trunc[b] = g[b, G_DONE] == 2
        if not cfg[C_AUTORESET]:
            return


@njit(cache=True)
def check_step(buf, actions, validate):
    """``step_batch``'s checks alone, over the whole batch before any chunk steps: 0, or the error it would return."""
    v = unpack(buf)
    if actions.shape[0] != v.g.shape[0]:
        return ERR_SHAPE * 2**32
    if validate:
        return validate_batch(game_state(v), v.cfg, borrow(actions), v.legal_mask, v.rewards)
    return 0


@njit(cache=True, nogil=True)
def step_range(buf, actions, lo, hi):
    """``step_batch``'s games lo..hi-1 once ``check_step`` passed, without the GIL (``Engine(threads=N)``'s chunks)."""
    _run_range(unpack(buf), borrow(actions), lo, hi)


@njit(cache=True, parallel=True)
def step_batch_parallel(buf, actions, validate):
    """``step_batch`` over numba's threads in contiguous chunks; each game touches only its own rows."""
    v = unpack(buf)
    if actions.shape[0] != v.g.shape[0]:
        return ERR_SHAPE * 2**32
    if validate:
        err = validate_batch(game_state(v), v.cfg, actions, v.legal_mask, v.rewards)
        if err:
            return err
    n = actions.shape[0]
    chunks = min(n, 64)  # prange hands each thread a contiguous run of chunks
    # numba's parallel lowering cannot name a namedtuple type that enters the loop: the arrays
    # go in as a plain tuple and are named again inside.
    arrays = v[:]
    for c in prange(chunks):
        _run_range(Buffers(*arrays), actions, c * n // chunks, (c + 1) * n // chunks)
    return 0


@njit(cache=True)
def observe_batch(buf, seats, which, out):
    """Observation of game b from seat seats[b] into out[b], for every game b with which[b]
    (one entry for all games or some: each entry point costs compile time)."""
    v = unpack(buf)
    s, cfg = game_state(v), v.cfg
    for b in range(seats.shape[0]):
        if which[b]:
            write_obs_call(s, cfg, b, seats[b], out, b)


@njit(cache=True, nogil=True)
def observe_range(buf, seats, which, out, lo, hi):
    """``observe_batch``'s games lo..hi-1, without the GIL (``Engine(threads=N)``'s pieces)."""
    v = unpack(buf)
    s, cfg = game_state(v), v.cfg
    for b in range(lo, hi):
        if which[b]:
            write_obs_call(s, cfg, b, seats[b], out, b)


@njit(cache=True)
def resample_batch(s, cfg, games, seat, u, seeds):
    """Redeal the hidden cards of game games[k] from `seat`'s view, for every k (u[k]: uniforms,
    seeds[k]: its new generator state); the caller then refreshes the outputs."""
    for k in range(games.shape[0]):
        redeal_hidden(s, cfg, games[k], seat, u[k], seeds[k])


@njit(cache=True)
def shuffle_draw_batch(s, games, u, seeds):
    """Shuffle the draw pile of game games[k] (u[k]: uniforms, seeds[k]: its new generator
    state), for every k; the caller then refreshes the outputs."""
    for k in range(games.shape[0]):
        shuffle_draw(s, games[k], u[k], seeds[k])


@njit(cache=True)
def state_batch(buf, seats, which, out):
    """The whole state of game b from seat seats[b] into out[b] (``observation.STATE_FIELDS``),
    for every game b with which[b]."""
    v = unpack(buf)
    s, cfg, g, hands, piles = game_state(v), v.cfg, v.g, v.hands, v.piles
    n = cfg[C_NUM_PLAYERS]
    for b in range(seats.shape[0]):
        if not which[b]:
            continue
        seat = seats[b]
        write_obs_call(s, cfg, b, seat, out, b)  # zeroes the whole row first
        other = seat
        for k in range(1, n):
            other = other + 1 if other + 1 < n else 0
            for t in range(NUM_CARD_TYPES):
                out[b, STATE_OTHER_HANDS + (k - 1) * NUM_CARD_TYPES + t] = hands[b, other, t]
        for j in range(g[b, G_DRAW_SIZE]):
            out[b, STATE_DRAW_PILE + piles[b, PILE_DRAW, j]] += 1.0
        if g[b, G_PHASE] != PHASE_ROUND_OVER:
            rel = g[b, G_PLAYER] - seat
            out[b, STATE_TO_ACT + (rel + n if rel < 0 else rel)] = 1.0


@njit(cache=True)
def resample_constrained_batch(s, cfg, games, seat, exclude, deal_seeds, seeds, max_tries, status):
    """``resample_batch`` with exclusions exclude[k] [P, T] per game, dealt by ``deal.deal_pool``; status[k] out."""
    pl, hands, piles, rng = s[1], s[2], s[3], s[4]
    g = s[0]
    n = cfg[C_NUM_PLAYERS]
    cap = piles.shape[2]
    pool = np.empty(cap, np.int64)
    out = np.empty(cap, np.int64)
    free = np.empty(cap, np.bool_)
    idx = np.empty(cap, np.int64)
    take = np.empty(cap, np.int64)
    sizes = np.zeros(n, np.int64)
    state = np.empty(1, np.uint64)
    for k in range(games.shape[0]):
        b = games[k]
        size = g[b, G_DRAW_SIZE]
        m = 0
        hidden = np.zeros(NUM_CARD_TYPES, np.int64)
        for i in range(size):
            hidden[piles[b, PILE_DRAW, i]] += 1
        for p in range(n):
            sizes[p] = 0 if p == seat else pl[b, p, PL_HAND_SIZE]
            if p != seat:
                for t in range(NUM_CARD_TYPES):
                    hidden[t] += hands[b, p, t]
        for t in range(NUM_CARD_TYPES):  # card-id order: the deal ignores where the cards were
            for _ in range(hidden[t]):
                pool[m] = t
                m += 1
        state[0] = deal_seeds[k]
        status[k] = deal_pool(pool, m, sizes, exclude[k], state, max_tries, out, free, idx, take)
        at = 0
        for p in range(n):
            if p != seat:
                for t in range(NUM_CARD_TYPES):
                    hands[b, p, t] = 0
                for _ in range(sizes[p]):
                    hands[b, p, out[at]] += 1
                    at += 1
        for i in range(size):
            piles[b, PILE_DRAW, i] = out[at + i]
        rng[b, 0] = seeds[k]
