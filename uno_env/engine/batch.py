"""Batch drivers: loop the one-game kernels over every game of the batch.

Validation runs over the whole batch before any game changes, so a rejected step leaves the
state as it was (the error code names the first offending game).
"""

from __future__ import annotations

from numba import njit, prange

from ..actions import NUM_ACTIONS
from ..cards import NUM_CARD_TYPES
from .borrow import borrow
from .kernels import DOUBLE_FIRST, apply_action, redeal_hidden, reset_game, write_mask, write_obs
from .layout import (
    C_AUTORESET,
    C_WRITE_OBS,
    C_PENALTY,
    G_DONE,
    G_PHASE,
    G_PLAYER,
    PHASE_PLAY,
    PHASE_POST_DRAW,
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
            penalised = cfg[C_PENALTY] and (phase == PHASE_PLAY or phase == PHASE_POST_DRAW) and (
                a < NUM_CARD_TYPES or a >= DOUBLE_FIRST
            )
            if not penalised:
                return ERR_ILLEGAL * 2**32 + b
    rewards[:, :] = 0.0
    return 0


@njit(cache=True)
def step_batch(g, pl, hands, piles, rng, ev, evn, cfg, points, deck, actions, obs, mask, cur, term, trunc,
               rewards, final_obs, validate):
    """Apply one action per game (-1 leaves a game as it is), validated first when `validate`;
    without it, the internal codes RESET and REFRESH are accepted too.

    The one entry point of the game loop: resets and refreshes share it (each entry point with
    this many array arguments costs ~2 s of compile). The state arrays come one by one, not as a
    tuple: numba types a tuple argument far more slowly, and this call is the whole per-step
    overhead of a single game."""
    if validate:
        err = validate_batch((g, pl, hands, piles, rng, ev, evn), cfg, actions, mask, rewards)
        if err:
            return err
    _run_range(g, pl, hands, piles, rng, ev, evn, cfg, points, deck, actions, obs, mask, cur, term, trunc, rewards,
               final_obs, 0, actions.shape[0])
    return 0


@njit(cache=True)
def _run_range(g, pl, hands, piles, rng, ev, evn, cfg, points, deck, codes, obs, mask, cur, term, trunc, rewards,
               final_obs, lo, hi):
    """Games lo..hi-1: apply codes[b] (an action or internal code), then write the outputs; with
    autoreset, a second pass deals anew the games that finished (code AUTORESET).

    The arrays are borrowed (``borrow``: no reference counting below this call; 0.81 -> 0.58 µs
    per game step at batch 4096 before the kernels were inlined here). The rules of a step
    (apply_action) and the mask and observation kernels are inlined here (numba IR): every call
    passes the state tuple as ~100 machine words on the stack plus a reference-count call per
    array taken from it, and those calls were a third of a batched step (perf). Every inlined
    copy costs compile time, superlinear in its size (numba deep-copies the callee's IR), so
    this loop body is their only call site: resets, refreshes and auto-resets run through it as
    codes, and it is written out here rather than in a helper. It stays one function on purpose:
    splitting it into calls brings back the per-call argument passing it exists to remove."""
    g, pl, hands, piles, rng, ev, evn = borrow(g), borrow(pl), borrow(hands), borrow(piles), borrow(rng), borrow(ev), borrow(evn)
    cfg, points, deck, codes = borrow(cfg), borrow(points), borrow(deck), borrow(codes)
    obs, mask, cur, term, trunc = borrow(obs), borrow(mask), borrow(cur), borrow(term), borrow(trunc)
    rewards, final_obs = borrow(rewards), borrow(final_obs)
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


@njit(cache=True, parallel=True)
def step_batch_parallel(g, pl, hands, piles, rng, ev, evn, cfg, points, deck, actions, obs, mask, cur, term,
                        trunc, rewards, final_obs, validate):
    """step_batch with the games spread over numba's threads in contiguous chunks
    (Engine(parallel=True)); every game touches only its own rows, so the result is the same
    as the serial driver's."""
    if validate:
        err = validate_batch((g, pl, hands, piles, rng, ev, evn), cfg, actions, mask, rewards)
        if err:
            return err
    n = actions.shape[0]
    chunks = min(n, 64)  # prange hands each thread a contiguous run of chunks
    for c in prange(chunks):
        _run_range(g, pl, hands, piles, rng, ev, evn, cfg, points, deck, actions, obs, mask, cur, term, trunc,
                   rewards, final_obs, c * n // chunks, (c + 1) * n // chunks)
    return 0


@njit(cache=True)
def observe_batch(s, cfg, seats, out):
    """Observation of game b from seat seats[b], for every game."""
    for b in range(seats.shape[0]):
        write_obs_call(s, cfg, b, seats[b], out, b)


@njit(cache=True)
def observe_some(s, cfg, seats, which, out):
    """observe_batch for the games b with which[b] only."""
    for b in range(seats.shape[0]):
        if which[b]:
            write_obs_call(s, cfg, b, seats[b], out, b)


@njit(cache=True)
def resample_batch(s, cfg, games, seat, u, seeds):
    """Redeal the hidden cards of game games[k] from `seat`'s view, for every k (u[k]: uniforms,
    seeds[k]: its new generator state); the caller then refreshes the outputs."""
    for k in range(games.shape[0]):
        redeal_hidden(s, cfg, games[k], seat, u[k], seeds[k])
