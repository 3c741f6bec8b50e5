"""Gymnasium environments ``uno_env/Uno-v0``: ``UnoEnv`` (one game) and ``UnoVectorEnv`` (a batch).

@@SUMMARY@@

## Description

UNO as a single-agent problem: one seat of the table is the *learner* (the agent being
trained); the other seats are played by fixed opponent agents (``agents.Agent``: anything with
``act(observation [B, D], action_mask [B, 116], rng) -> int64 [B]``; ``agents.RandomAgent`` by
default). Every rule is the engine's (``RULES.md``); ``step`` applies the learner's action, then
lets the opponents play until the learner must decide again or the round ends. One episode is
one round (R8, ``episode="round"``).

``UnoVectorEnv`` runs ``num_envs`` such games in ONE ``Engine``: the opponents' moves are
computed for the whole batch at once (one ``act`` call per opponent agent per engine step, on
the rows where one of its seats acts), so it is the fast path for training.
``UnoSB3VecEnv`` (module ``uno_env.sb3_vec_env``) puts it behind stable-baselines3's
``VecEnv`` API for sb3-contrib's ``MaskablePPO``.

```python
import gymnasium as gym
import uno_env  # registers the ids

env = gym.make("uno_env/Uno-v0", num_players=4, rules="house")
obs, info = env.reset(seed=0)
mask = info["action_mask"]  # int8 [116]; or env.unwrapped.action_masks() (bool)
obs, reward, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))

envs = gym.make_vec("uno_env/Uno-v0", num_envs=1024)  # UnoVectorEnv, one engine
```

## Action Space

``Discrete(116)``, the same ids for every rule set (RULES.md R2). Only the actions of the
learner's legal mask may be taken (``action_masks()`` / ``info["action_mask"]``); anything
else raises ``ValueError`` and leaves the game as it was (R10).

@@ACTIONS@@

## Observation Space

``Box(low, high, (D,), float32)`` with ``D = @@D@@`` (``D = @@D_OPEN@@`` with
``open_hands``): the learner's view (R11), from ``uno_env.engine.layout.OBS_FIELDS``. Seats
are relative: slot ``k`` of a per-seat field is the seat ``k`` places clockwise from the
learner (slot 0 is the learner itself).

@@OBSERVATIONS@@

## Rewards

At the end of the round the learner gets its engine reward (R8): ``+1`` if it won, ``-1`` if
another seat won; ``0`` on every other step and on a truncated round.

## Starting State

A round is dealt (R3, R9) with the learner at ``learner_seat`` (a fixed seat, or
``"random"``: a seat drawn per episode from the reset seed), and the opponents play until the
learner's first decision. A round that ends before the learner's first decision (possible
only with ``hand_size=1`` or a tiny ``max_turns``) is not an episode: it is dealt anew.

## Episode End

* Termination: the round ends by the rules (a player plays their last card, R8; or
  ``end_on_empty_deck``, R4).
* Truncation: the round reaches ``rules.max_turns`` actions (R8, counting every seat's
  actions; 5000 by default).

``UnoEnv`` returns the learner's view of the finished round; ``step`` after the end raises
``ValueError`` until ``reset``.

## Vector environment and autoreset

``UnoVectorEnv`` auto-resets in gymnasium's ``SAME_STEP`` mode
(``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``): the step in which a game ends
returns that game's ``terminated``/``truncated`` flag and reward together with the FIRST
observation of its next round; the finished round's last observation is in
``infos["final_obs"]`` (an object array, ``None`` for games that did not end;
``infos["_final_obs"]`` marks the ones that did), as gymnasium's ``SyncVectorEnv`` does.

``final_obs`` is the learner's view of the finished round, rebuilt from the engine's
``final_observation`` (which is the view of the seat that was to act) because the engine
cannot be asked for another seat's view of a game it already dealt anew.
``infos["final_obs_exact"]`` says, per finished game, whether the rebuild is exact. It is
exact when the learner played its last card, when the round was truncated by the turn limit
(this layer stops a game at ``max_turns`` itself, reads the learner's view, then lets the
engine end it), and when an opponent played its last card -- except that if that card was a
Draw Two or Wild Draw Four drawn by the learner (R8), the drawn cards are missing from the
learner's ``hand`` (its ``hand_sizes`` slot is right). With ``end_on_empty_deck`` or
``turn_limit_rule="fewest_cards_wins"`` the per-seat fields and the hand are the learner's
last seen values (not exact).

Games of the batch are independent: game ``i`` of ``UnoVectorEnv.reset(seed=s)`` is the game
of ``UnoEnv.reset(seed=s + i)`` (then ``reset()`` without a seed after each episode), given
the same learner actions and opponents whose action on a row depends only on that row. A
random opponent shares one generator across the batch, so its draws depend on the batch.

## Arguments

* ``num_players`` (2-10, default 2).
* ``rules``: a ``UnoRules``, a preset name (``"classic"``, ``"official"``, ``"swap_hands"``,
  ``"house"``), or a dict of options over ``classic``; default ``classic``.
* ``learner_seat``: seat 0..num_players-1 (default 0) or ``"random"`` (per episode).
* ``opponents``: one agent for every other seat, or a list of ``num_players - 1`` agents; the
  j-th plays the seat j+1 places clockwise from the learner. Default: ``RandomAgent()``. Each
  distinct agent is called once per engine step on the games where one of its seats acts;
  the arrays it is given are reused buffers, valid during the call only. Opponents draw from
  the env's ``np_random`` (seeded by ``reset(seed=...)``).
* ``render_mode``: ``None`` or ``"ansi"`` (``UnoEnv`` only).
* ``on_illegal`` (``UnoEnv`` only): ``"raise"`` (default: ``ValueError``, the game unchanged,
  R10) or ``"terminate"`` (R10's PettingZoo convention: reward -1, the episode ends,
  ``info["illegal_action"] = True``). Gymnasium's ``check_env`` needs ``"terminate"``: it
  samples its action before its seeded ``reset``, i.e. for another position, where it is
  usually illegal. ``action_space.sample()`` without a mask draws a legal action of the
  current decision (``LegalDiscrete``).
* ``UnoVectorEnv`` also takes ``num_envs`` and ``copy`` (default True: returned arrays are
  fresh copies; False: views of engine buffers, valid until the next ``step``/``reset``).

## Version History

* v0: initial version (engine observation layout of ``uno_env`` 0.1.0).
"""

from __future__ import annotations

import numbers
import sys
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from numba import njit

from .actions import ACTION_NAMES, NUM_ACTIONS, Action
from .cards import COLOR_NAMES, NUM_CARD_TYPES, card_name, deck_counts
from .engine import OBS_FIELDS, OBS_OFFSETS, Engine, observation_size
from .engine.layout import MAX_PLAYERS, PHASE_NAMES
from .rules import PRESETS, UnoRules

__all__ = ["UnoEnv", "UnoVectorEnv", "LegalDiscrete", "ENV_ID", "make_rules", "observation_bounds", "register_envs"]

ENV_ID = "uno_env/Uno-v0"


def register_envs() -> None:
    """Register ``uno_env/Uno-v0`` with gymnasium (``make`` and ``make_vec``); idempotent."""
    if ENV_ID not in gym.registry:
        gym.register(ENV_ID, entry_point="uno_env.gym_env:UnoEnv",
                     vector_entry_point="uno_env.gym_env:UnoVectorEnv")


_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_SEED_LIMIT = 2**64

# Observation columns the final-observation rebuild needs (see the module docstring).
_HS = OBS_OFFSETS["hand_sizes"]
_HAND = OBS_OFFSETS["hand"]
_PHASE = OBS_OFFSETS["phase"]
_BASE_D = observation_size(False)
# Fields that are the same from every seat (copied from the engine's final observation),
# fields indexed by relative seat (rotated to the learner), and fields of the observer only.
# ("partner" marks a relative slot, the same one, n/2, from every seat.)
_PUBLIC = ("top_card", "current_color", "phase", "direction", "pending_draw", "discard_counts",
           "draw_pile_size", "wd4_prev_color", "partner", "round")
_PER_SEAT = ("hand_sizes", "seat_present", "scores", "uno_called", "eliminated", "catchable")
_OBSERVER = ("hand", "drawn_card", "is_current")
# Observer fields that are 0 for everyone once the round is over (no one is to act).
_ZERO_WHEN_OVER = ("drawn_card", "is_current", "wd4_prev_color")


def _cols(names: Sequence[str]) -> np.ndarray:
    """Observation column indices of the named fields (a name the engine lacks is skipped)."""
    sizes = {name: size for name, size, _ in OBS_FIELDS}
    return np.concatenate(
        [np.arange(OBS_OFFSETS[n], OBS_OFFSETS[n] + sizes[n]) for n in names if n in sizes] + [np.zeros(0, int)]
    )


_KNOWN = set(_PUBLIC) | set(_PER_SEAT) | set(_OBSERVER)
# A field added to the engine later is unknown here: rebuilt views are then flagged inexact.
_ALL_FIELDS_KNOWN = {name for name, _, _ in OBS_FIELDS} <= _KNOWN
_PUBLIC_COLS = _cols(_PUBLIC)
_ZERO_COLS = _cols(_ZERO_WHEN_OVER)
_PHASE_OVER_COL = _PHASE + PHASE_NAMES.index("round_over")
_PHASE_COLS = np.arange(_PHASE, _PHASE + len(PHASE_NAMES))
_PER_SEAT_OFFSETS = np.array([OBS_OFFSETS[n] for n in _PER_SEAT if n in OBS_OFFSETS])


def _force_priority() -> np.ndarray:
    """Preference among legal actions when ending a truncated game: 2 = draws no card (R2, R5)."""
    prio = np.full(NUM_ACTIONS, 2, np.int8)
    prio[int(Action.DRAW)] = 1  # draws
    prio[[c * 13 + 12 for c in range(4)]] = 1  # Draw Two: the next player draws
    prio[[int(Action.CHALLENGE), int(Action.ACCEPT), int(Action.CATCH_UNO)]] = 1  # someone draws
    return prio


_FORCE_PRIORITY = _force_priority()
_FIRST_DOUBLE = int(Action.PLAY_DOUBLE_FIRST)
# The observation layout as _rebuild_final's arguments (see the note above the kernels).
_LAYOUT = (_HS, _HAND, _BASE_D, NUM_CARD_TYPES, _PER_SEAT_OFFSETS.astype(np.int64),
           _PUBLIC_COLS.astype(np.int64), _ZERO_COLS.astype(np.int64))


# --- argument checking --------------------------------------------------------------------


def make_rules(rules: Any) -> UnoRules:
    """A ``UnoRules`` from ``None``, a ``UnoRules``, a preset name, or a dict of options."""
    if rules is None:
        return UnoRules()
    if isinstance(rules, UnoRules):
        return rules
    if isinstance(rules, str):
        return UnoRules.preset(rules)
    if isinstance(rules, dict):
        return UnoRules.from_dict(rules)
    raise ValueError(
        f"rules must be None, a UnoRules, a preset name in {tuple(PRESETS)}, or a dict of options; "
        f"got {type(rules).__name__} {rules!r}"
    )


def _check_int(name: str, value: Any, lo: int, hi: int) -> int:
    """``value`` as an int in lo..hi, else a ValueError naming it."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return int(value)


def _check_learner_seat(seat: Any, num_players: int) -> int | None:
    """The fixed learner seat, or None for ``"random"``."""
    if isinstance(seat, str) and seat == "random":
        return None
    if not isinstance(seat, numbers.Integral) or isinstance(seat, bool) or not 0 <= seat < num_players:
        raise ValueError(
            f"learner_seat must be a seat 0..{num_players - 1} or 'random', got {seat!r}"
        )
    return int(seat)


def _check_opponents(opponents: Any, num_players: int) -> list[Any]:
    """One agent per relative seat 1..num_players-1 (the same object may repeat)."""
    if opponents is None:
        # Imported here: agents sit above this layer (DESIGN.md) and are needed only as a default.
        from agents.base import RandomAgent

        return [RandomAgent()] * (num_players - 1)
    if isinstance(opponents, (list, tuple)):
        agents = list(opponents)
        if len(agents) != num_players - 1:
            raise ValueError(
                f"opponents must be one agent or a list of num_players - 1 = {num_players - 1} agents "
                f"(one per other seat, clockwise from the learner), got a list of {len(agents)}"
            )
    else:
        agents = [opponents] * (num_players - 1)
    for agent in agents:
        if not callable(getattr(agent, "act", None)):
            raise ValueError(
                "opponents must be agents with act(observation, action_mask, rng) -> actions "
                f"(see agents.base.Agent), got {type(agent).__name__} {agent!r}"
            )
    return agents


def _seed_list(seed: Any, n: int) -> list[int]:
    """Per-game seeds: an int s gives s, s+1, ..., s+n-1 (gymnasium's convention); or n ints."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if not 0 <= seed <= _SEED_LIMIT - n:
            raise ValueError(f"seed must be an integer in 0..2**64-{n} (one seed per game from it), got {seed!r}")
        return [int(seed) + i for i in range(n)]
    if isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == n:
        out = []
        for s in seed:
            if not isinstance(s, numbers.Integral) or isinstance(s, bool) or not 0 <= s < _SEED_LIMIT:
                raise ValueError(f"seed must hold integers in 0..2**64-1, got {s!r} in {seed!r}")
            out.append(int(s))
        return out
    raise ValueError(f"seed must be None, an integer, or a list of {n} integers (one per game), got {seed!r}")


# --- spaces and documentation -------------------------------------------------------------


def observation_bounds(rules: UnoRules, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-index ``(low, high)`` of the observation vector under ``rules`` (R1, R8, R11).

    A count of a card type never exceeds its copies in the deck, a pile or a hand never holds
    more than the deck, a score never exceeds the target plus every point in the deck (scores
    are /100). A field this module does not know is left unbounded rather than guessed.
    """
    deck = deck_counts(rules.deck, rules.custom_wild_count).astype(np.float32)
    cards = float(deck.sum())
    points = float(np.dot(deck, np.asarray(rules.points, np.float32)))
    one = (0.0, 1.0)
    known: dict[str, tuple[Any, Any]] = {
        "hand": (0.0, deck), "top_card": one, "current_color": one, "phase": one,
        "direction": (-1.0, 1.0), "pending_draw": (0.0, cards), "drawn_card": one,
        "hand_sizes": (0.0, cards), "seat_present": one,
        "scores": (0.0, (rules.target_points + points) / 100.0), "uno_called": one,
        "discard_counts": (0.0, deck), "draw_pile_size": (0.0, cards), "wd4_prev_color": one,
        "is_current": one, "eliminated": one, "catchable": one, "partner": one,
        # Rounds finished: 0 within a one-round episode; a match has no fixed length.
        "round": (0.0, 0.0 if rules.episode == "round" else np.inf),
    }
    low = np.full(size, -np.inf, np.float32)
    high = np.full(size, np.inf, np.float32)
    for name, width, _ in OBS_FIELDS:
        at = OBS_OFFSETS[name]
        if name in known:
            low[at : at + width], high[at : at + width] = known[name]
    if size > _BASE_D:  # open_hands (R11): one block of card-type counts per other seat
        low[_BASE_D:] = 0.0
        high[_BASE_D:] = np.tile(deck, (size - _BASE_D) // NUM_CARD_TYPES)
    # A card type absent from the deck is always 0; gymnasium warns on a zero-width Box
    # dimension, so such a dimension gets [0, 1] (still a true bound).
    high = np.where(high == low, low + 1.0, high).astype(np.float32)
    return low, high


class LegalDiscrete(spaces.Discrete):
    """``Discrete(116)`` whose ``sample()`` without a mask draws a legal action of the env's current decision.

    Gymnasium's and SB3's env checkers step with ``action_space.sample()``; with this space
    they (and any user) get a legal action, while an illegal one still raises. With a mask
    given, or once the episode is over, it samples like ``Discrete``. A copy or pickle of the
    space is a plain ``Discrete`` (it does not carry the env along).
    """

    def __init__(self, n: int, legal_mask: Any = None, seed: Any = None) -> None:
        super().__init__(n, seed=seed)
        self._legal_mask = legal_mask  # a callable returning the current int8 mask

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        """A legal action of the current decision when no mask/probability is given."""
        if mask is None and probability is None and self._legal_mask is not None:
            legal = self._legal_mask()
            if legal.any():
                mask = legal
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict:
        """Pickle without the env."""
        state = dict(self.__dict__)
        state["_legal_mask"] = None
        return state


def _fmt(x: float) -> str:
    """A bound for the docs table."""
    return "inf" if np.isinf(x) else f"{x:g}"


def _obs_table() -> str:
    """Markdown table of the observation vector (classic deck bounds), from OBS_FIELDS."""
    low, high = observation_bounds(UnoRules(), observation_size(True))
    rows = ["| index | field | size | min | max | meaning |", "|---|---|---:|---:|---:|---|"]
    for name, size, doc in OBS_FIELDS:
        at = OBS_OFFSETS[name]
        idx = f"{at}" if size == 1 else f"{at}-{at + size - 1}"
        sl = slice(at, at + size)
        rows.append(f"| {idx} | `{name}` | {size} | {_fmt(low[sl].min())} | {_fmt(high[sl].max())} | {doc} |")
    end = observation_size(True) - 1
    rows.append(
        f"| {_BASE_D}-{end} | `open_hands` | {end - _BASE_D + 1} | 0 | {_fmt(high[_BASE_D:].max())} | "
        f"only with `open_hands` (R11): the hands of relative seats 1..{MAX_PLAYERS - 1}, "
        f"{NUM_CARD_TYPES} counts each |"
    )
    return "\n".join(rows)


def _action_table() -> str:
    """Markdown table of the action ids (RULES.md R2), from ACTION_NAMES."""
    first_double = int(Action.PLAY_DOUBLE_FIRST)
    groups = [
        (0, NUM_CARD_TYPES - 1, "PLAY card type t (R1 ids: colour*13+rank for 0-51, then the wilds)"),
        (int(Action.DRAW), int(Action.DRAW), "DRAW one card (facing a stacked penalty: take it all)"),
        (int(Action.PASS), int(Action.PASS), "PASS: keep the drawn card / the only move when nothing can be done"),
        (int(Action.CHOOSE_RED), int(Action.CHOOSE_BLUE), "CHOOSE_COLOR " + ", ".join(COLOR_NAMES)),
        (int(Action.CHALLENGE), int(Action.CHALLENGE), "CHALLENGE a Wild Draw Four (R6)"),
        (int(Action.ACCEPT), int(Action.ACCEPT), "ACCEPT a Wild Draw Four (draw, lose the turn)"),
        (int(Action.CALL_UNO), int(Action.CALL_UNO), "CALL_UNO (R7)"),
        (int(Action.CATCH_UNO), int(Action.CATCH_UNO), "CATCH_UNO (R7)"),
        (int(Action.SWAP_WITH_FIRST), first_double - 1, "SWAP_WITH the player 1-9 seats further clockwise"),
        (first_double, NUM_ACTIONS - 1, "PLAY_DOUBLE of number card colour*13+rank: 76 + colour*10 + rank"),
    ]
    rows = ["| ids | action | e.g. |", "|---|---|---|"]
    for lo, hi, doc in groups:
        ids = f"{lo}" if lo == hi else f"{lo}-{hi}"
        rows.append(f"| {ids} | {doc} | `{lo}`: {ACTION_NAMES[lo]} |")
    return "\n".join(rows)


__doc__ = (
    __doc__.replace("@@SUMMARY@@", f"Id ``{ENV_ID}``; ``gymnasium.make`` gives ``UnoEnv``, "
                    "``gymnasium.make_vec`` gives ``UnoVectorEnv``.")
    .replace("@@ACTIONS@@", _action_table())
    .replace("@@OBSERVATIONS@@", _obs_table())
    .replace("@@D@@", str(observation_size(False)))
    .replace("@@D_OPEN@@", str(observation_size(True)))
)


def _seat_hash(seat_seed: np.ndarray, episode: np.ndarray, num_players: int) -> np.ndarray:
    """Learner seat per game for ``learner_seat="random"``: splitmix64(seed, episode) % players.

    A hash of the game's own seed and episode count (not a shared generator), so game i of a
    batch gets the seats a single game seeded the same way gets.
    """
    with np.errstate(over="ignore"):
        z = seat_seed.astype(_U64) + (episode.astype(_U64) + _U64(1)) * _GOLDEN
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        z = z ^ (z >> _U64(31))
    return (z % _U64(num_players)).astype(np.int64)


# --- the shared driver --------------------------------------------------------------------
# Row bookkeeping of the opponent loop as small kernels: the loop runs ~7 times per vector
# step, mostly on a handful of games, so a dozen numpy calls per pass would cost more than
# the engine work of those passes. Layout constants are passed as arguments, never read as
# globals: numba's on-disk cache bakes globals in and does not notice when another module
# (the engine's layout) changes them.


@njit(cache=True)
def _rows_to_act(current, seats, live, out_idx):
    """Write the indices of live games whose player to act is not the learner; return their count."""
    k = 0
    for b in range(current.shape[0]):
        if current[b] != seats[b] and live[b]:
            out_idx[k] = b
            k += 1
    return k


@njit(cache=True)
def _scatter_actions(actions, idx, chosen, hand_size, num_card_types, first_double, last_play):
    """actions[idx[j]] = chosen[j]; flag in ``last_play`` the games where it plays the actor's last card(s).

    A round ends only when a player plays their last card (R8, R12.13): a PLAY holding one
    card, or a PLAY_DOUBLE holding two. ``hand_size`` is the actor's own hand size (slot 0).
    Returns whether any game was flagged.
    """
    any_end = False
    for j in range(idx.shape[0]):
        a = chosen[j]
        b = idx[j]
        actions[b] = a
        if (a < num_card_types and hand_size[j] == 1) or (a >= first_double and hand_size[j] == 2):
            last_play[b] = True
            any_end = True
    return any_end


@njit(cache=True)
def _after_step(idx, terminated, truncated, turns, limit, done, round_before, round_after):
    """Count a turn for each stepped game; mark finished ones in ``done``; (any done, any at the limit).

    The turn limit counts per round (R8): a match that dealt its next round within the step
    (its public round counter moved) starts counting again.
    """
    any_done = False
    any_limit = False
    done[:] = False
    for j in range(idx.shape[0]):
        b = idx[j]
        turns[b] += 1
        if round_after[b] != round_before[b]:
            turns[b] = 0
        if terminated[b] or truncated[b]:
            done[b] = True
            any_done = True
        elif limit > 0 and turns[b] >= limit:
            any_limit = True
    return any_done, any_limit


class _StepLog:
    """What one learner step (or reset) collected, per game."""

    def __init__(self, n: int, track_final: bool) -> None:
        self.ended = np.zeros(n, bool)  # the learner's episode ended in this step
        self.terminated = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.reward = np.zeros(n, np.float32)
        self.track_final = track_final
        self.final_exact = np.zeros(n, bool)
        # (rows, views) chunks for the finished games only: a [n, D] buffer per step would
        # cost a large allocation every step for the few games that end.
        self.finals: list[tuple[np.ndarray, np.ndarray]] = []


class _BufferPool:
    """Output arrays that look fresh without fresh memory: a buffer is handed out again only
    once nothing but the pool references it (CPython reference counts).

    Why: a new ~1 MB array per step made the allocator return and re-fault pages every step
    (measured: about a fifth of a step), while the caller usually drops last step's array.
    """

    def __init__(self, shape: tuple[int, ...], dtype: Any, size: int = 4) -> None:
        self._shape, self._dtype, self._size = shape, dtype, size
        self._bufs: list[np.ndarray] = []

    def take(self) -> np.ndarray:
        """A buffer no one else holds (or a new one)."""
        for buf in self._bufs:
            # References: the list, the loop variable, getrefcount's argument. Any view a
            # caller kept refers to its base, so a kept buffer (or view) counts more.
            if sys.getrefcount(buf) == 3:
                return buf
        buf = np.empty(self._shape, self._dtype)
        if len(self._bufs) < self._size:
            self._bufs.append(buf)
        return buf


class _Driver:
    """One ``Engine`` plus the learner seats and the opponents: the loop both envs share.

    With ``autoreset`` (the vector env) the engine deals a finished game anew in the same step,
    so the learner's view of the finished game is rebuilt (``_final_view``); without it (the
    single env) a finished game stays in the engine and is observed directly.
    """

    def __init__(self, num_envs: int, num_players: int, rules: Any, learner_seat: Any,
                 opponents: Any, autoreset: bool) -> None:
        self.num_players = P = _check_int("num_players", num_players, 2, MAX_PLAYERS)
        self.rules = make_rules(rules)
        self.fixed_seat = _check_learner_seat(learner_seat, P)
        self.opponents = _check_opponents(opponents, P)
        self.autoreset = autoreset
        engine_rules = self.rules
        self.turn_limit = None
        if autoreset and self.rules.max_turns is not None and self.rules.turn_limit_rule == "truncate":
            # The layer truncates at max_turns itself so it can still observe the learner's seat,
            # then spends the engine's one extra turn to end the game (see _force_truncation).
            self.turn_limit = self.rules.max_turns
            engine_rules = self.rules.replace(max_turns=self.rules.max_turns + 1)
        self.engine = Engine(num_envs, P, engine_rules, autoreset=autoreset)
        self.num_envs = B = self.engine.num_envs
        self.obs_size = self.engine.observation_size
        self.rows = np.arange(B)
        # Distinct agents and, per relative seat (0 = learner), which one plays it.
        self.agents: list[Any] = []
        agent_of_rel = [-1]
        for agent in self.opponents:
            ids = [i for i, a in enumerate(self.agents) if a is agent]
            if not ids:
                self.agents.append(agent)
                ids = [len(self.agents) - 1]
            agent_of_rel.append(ids[0])
        self.agent_of_rel = np.array(agent_of_rel, np.int64)
        self.seats = np.full(B, self.fixed_seat or 0, np.int64)
        self.seat_seed = np.zeros(B, _U64)
        self.episode = np.zeros(B, np.int64)
        self.turns = np.zeros(B, np.int64)
        self._obs_buf = np.empty((B, self.obs_size), np.float32)  # gathers for the opponents
        self._mask_buf = np.empty((B, NUM_ACTIONS), bool)
        self._idx_buf = np.empty(B, np.int64)
        self._actions_buf = np.empty(B, np.int64)
        self._done_buf = np.zeros(B, bool)
        self._last_play = np.zeros(B, bool)  # the game's action this engine step plays a last card
        self._zeros = np.zeros(B, np.float32)
        # Matches deal rounds within a step; the turn limit is per round (see _after_step).
        track_rounds = self.turn_limit is not None and self.rules.episode == "match"
        self._round_col = OBS_OFFSETS["round"] if track_rounds and "round" in OBS_OFFSETS else None
        self._all = np.ones(B, bool)
        self.rng = np.random.default_rng()
        self.pre: np.ndarray | None = None  # learner views taken just before an engine step
        # Rules under which a round can end other than by a play or a turn-limit truncation;
        # only then is the learner's last view kept as the rebuild's fallback (it costs a copy).
        self.needs_fallback = autoreset and (
            self.rules.end_on_empty_deck
            or (self.rules.max_turns is not None and self.rules.turn_limit_rule != "truncate")
            or not _ALL_FIELDS_KNOWN
        )
        self.last_obs: np.ndarray | None = None  # the learner's views before its last action

    # --- seeding and seats ----------------------------------------------------------------

    def deal(self, seeds: list[int] | None) -> None:
        """Reset every game (reseeding it when seeds are given); the first episode's seats."""
        if seeds is not None:
            self.seat_seed[:] = np.array(seeds, _U64)
            self.episode[:] = 0
        else:
            if not self.seat_seed.any():
                self.seat_seed[:] = self.rng.integers(0, 2**63, self.num_envs, dtype=np.int64).astype(_U64)
            self.episode += 1
        self.engine.reset(seeds)
        self.turns[:] = 0
        if self.fixed_seat is None:
            self.seats[:] = _seat_hash(self.seat_seed, self.episode, self.num_players)

    def _next_episode(self, which: np.ndarray) -> None:
        """Games in ``which`` were dealt anew: count the episode, draw the learner seat."""
        self.episode[which] += 1
        self.turns[which] = 0
        if self.fixed_seat is None:
            rows = np.flatnonzero(which)
            self.seats[rows] = _seat_hash(self.seat_seed[rows], self.episode[rows], self.num_players)

    # --- stepping -------------------------------------------------------------------------

    def apply_learner(self, actions: np.ndarray, log: _StepLog) -> None:
        """Apply the learner's actions (one per game; the engine raises on an illegal one, unchanged)."""
        if self.final_tracking:
            self._last_play[:] = False
            _scatter_actions(self._actions_buf, self.rows, actions, self.engine.observation[:, _HS],
                             NUM_CARD_TYPES, _FIRST_DOUBLE, self._last_play)
        self._engine_step(actions, log, self.rows)

    def play_opponents(self, log: _StepLog) -> None:
        """Step every game where an opponent is to act until the learner is to act everywhere."""
        e, P = self.engine, self.num_players
        predict = self.final_tracking
        actions = self._actions_buf
        while True:
            live = self._all if self.autoreset else ~(e.terminated | e.truncated)
            k = _rows_to_act(e.current_player, self.seats, live, self._idx_buf)
            if k == 0:
                return
            idx = self._idx_buf[:k].copy()
            actions.fill(-1)
            self._last_play[:] = False
            if len(self.agents) == 1:
                any_end = self._act(0, idx, actions)
            else:
                owner = self.agent_of_rel[(e.current_player[idx] - self.seats[idx]) % P]
                any_end = False
                for i in range(len(self.agents)):
                    rows = idx[owner == i]
                    if rows.size:
                        any_end |= self._act(i, rows, actions)
            if predict and any_end:
                # An opponent is about to play its last card: keep the learner's view of the
                # game before that play (its hand), which the engine's final observation lacks.
                self.pre = e.observe(self.seats)
            self._engine_step(actions, log, idx)

    @property
    def final_tracking(self) -> bool:
        """Whether finished games' learner views must be rebuilt (only with autoreset)."""
        return self.autoreset

    def _act(self, i: int, idx: np.ndarray, actions: np.ndarray) -> bool:
        """Ask agent i for the actions of the games ``idx`` (one batched call); any may end the round."""
        e, agent = self.engine, self.agents[i]
        k = idx.size
        if k == self.num_envs:
            # The whole batch: hand the agent the engine's arrays (no gather).
            obs, mask = e.observation, e.legal_mask
        else:
            # Gather into buffers kept across steps: a fresh ~1 MB array per call page-faults
            # (measured: most of this layer's cost). mode="clip" lets take() skip buffering.
            obs = np.take(e.observation, idx, axis=0, out=self._obs_buf[:k], mode="clip")
            mask = np.take(e.legal_mask, idx, axis=0, out=self._mask_buf[:k], mode="clip")
        out = np.asarray(agent.act(obs, mask, self.rng))
        if out.shape != (k,) or out.dtype.kind not in "iu":
            raise ValueError(
                f"opponent {agent!r} returned {out.dtype} actions of shape {out.shape}; "
                f"act() must return {k} integer action ids (int64 [{k}])"
            )
        return _scatter_actions(actions, idx, out.astype(np.int64, copy=False), obs[:, _HS],
                                NUM_CARD_TYPES, _FIRST_DOUBLE, self._last_play)

    def _engine_step(self, actions: np.ndarray, log: _StepLog, idx: np.ndarray) -> None:
        """One engine step (``idx``: the games given an action), then the turn and end bookkeeping."""
        e = self.engine
        actors = e.current_player.astype(np.int64) if self.final_tracking else None
        if self._round_col is not None:
            round_before = e.observation[:, self._round_col].copy()
            round_after = e.observation[:, self._round_col]  # a view: read after the step
        else:
            round_before = round_after = self._zeros
        e.step(actions)
        # Flags of games left with -1 keep stale values: only the stepped games are read.
        any_done, any_limit = _after_step(idx, e.terminated, e.truncated, self.turns,
                                          self.turn_limit or 0, self._done_buf, round_before, round_after)
        if any_done:
            done = self._done_buf
            self._record_ends(done, actors, log)
            if self.autoreset:
                self._next_episode(done)
        self.pre = None
        if any_limit:
            self._force_truncation(self.turns >= self.turn_limit, log)

    def _record_ends(self, done: np.ndarray, actors: np.ndarray | None, log: _StepLog) -> None:
        """Log the learner's episode end for games that finished (first finish per step only).

        A game that finishes again in the same step ended before the learner's first decision:
        it was never the learner's episode, so its outcome is dropped (module docstring).
        """
        e = self.engine
        rows = np.flatnonzero(done & ~log.ended)
        if rows.size == 0:
            return
        seats = self.seats[rows]
        log.ended[rows] = True
        log.terminated[rows] = e.terminated[rows]
        log.truncated[rows] = e.truncated[rows]
        log.reward[rows] = e.rewards[rows, seats]
        if log.track_final:
            views, log.final_exact[rows] = self._final_view(rows, seats, actors[rows])
            log.finals.append((rows, views))

    def _force_truncation(self, at_limit: np.ndarray, log: _StepLog) -> None:
        """Truncate games at ``max_turns``: log the learner's view, then end them in the engine.

        The engine was built with one more turn than the rules allow, so the learner's view of
        the truncated position can still be observed; any legal action then ends the engine's
        game (its outcome is discarded) and the engine deals it anew.
        """
        e = self.engine
        rows = np.flatnonzero(at_limit)
        new = rows[~log.ended[rows]]
        if new.size:
            view = e.observe(self.seats)[new]  # (a copy of the rows)
            # What the engine shows once a round is over (R11): no phase but round_over, no
            # one to act, no drawn card, no pending Wild Draw Four colour.
            view[:, _PHASE_COLS] = 0.0
            view[:, _PHASE_OVER_COL] = 1.0
            view[:, _ZERO_COLS] = 0.0
            log.ended[new] = True
            log.truncated[new] = True
            log.terminated[new] = False
            log.reward[new] = 0.0
            log.finals.append((new, view))
            log.final_exact[new] = _ALL_FIELDS_KNOWN
        forced = np.full(self.num_envs, -1, np.int64)
        # Prefer an action that draws no card: a draw can reshuffle, which would advance the
        # game's generator and so change the next deal (a single UnoEnv never takes this action).
        forced[rows] = np.argmax(e.legal_mask[rows] * _FORCE_PRIORITY, axis=1)
        e.step(forced)
        self._next_episode(at_limit)

    def _final_view(self, rows: np.ndarray, seats: np.ndarray, actors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The learner's view of games that just finished, and whether it is exact (docstring)."""
        e = self.engine
        # The learner's last known view: just before the final play when it was predicted
        # (self.pre), else before its own last action (kept only under the rules that need it).
        base = self.pre if self.pre is not None else self.last_obs
        out = np.empty((rows.size, self.obs_size), np.float32)
        exact = np.zeros(rows.size, bool)
        _rebuild_final(e.final_observation, e.terminated, self._last_play, base if base is not None else out,
                       base is not None, rows, seats, actors, self.num_players, out, exact, *_LAYOUT)
        return out, exact & _ALL_FIELDS_KNOWN


@njit(cache=True)
def _rebuild_final(final_obs, terminated, last_play, base, has_base, rows, seats, actors, P, out, exact,
                   _HS, _HAND, _BASE_D, NUM_CARD_TYPES, _PER_SEAT_OFFSETS, _PUBLIC_COLS, _ZERO_COLS):
    """The learner's view of each finished game ``rows[j]`` into ``out[j]`` (module docstring).

    ``final_obs[b]`` is the view of the seat that was to act at the end: the actor
    ``actors[j]`` when its action played its last card (``last_play[b]``), which the engine
    leaves as the player to act. ``base[b]`` is the learner's last known view. The last seven
    arguments are the observation layout (``_LAYOUT``).
    """
    D = out.shape[1]
    for j in range(rows.shape[0]):
        b, seat, actor = rows[j], seats[j], actors[j]
        f = final_obs[b]
        by_play = terminated[b] and last_play[b] and f[_HS] == 0  # the actor went out
        if by_play and actor == seat:  # the learner did: the view is its own
            out[j, :] = f
            exact[j] = True
            continue
        if by_play:
            out[j, :] = f
            d = (seat - actor) % P  # the learner's slot k is the final player's slot (d + k) % P
            for off in _PER_SEAT_OFFSETS:
                for k in range(P):
                    out[j, off + k] = f[off + (d + k) % P]
            if D > _BASE_D:
                # open_hands: slot 0's hand is the hand field, slot m > 0's is open block m - 1.
                for k in range(P):
                    m = (d + k) % P
                    src = _HAND if m == 0 else _BASE_D + (m - 1) * NUM_CARD_TYPES
                    dst = _HAND if k == 0 else _BASE_D + (k - 1) * NUM_CARD_TYPES
                    for t in range(NUM_CARD_TYPES):
                        out[j, dst + t] = f[src + t]
                exact[j] = True
            elif has_base:
                total = 0.0
                for t in range(NUM_CARD_TYPES):
                    out[j, _HAND + t] = base[b, _HAND + t]
                    total += base[b, _HAND + t]
                # Exact unless the learner drew the penalty of that last Draw Two / Wild Draw
                # Four (R8): then its hand lacks those cards and no longer matches its size.
                exact[j] = total == out[j, _HS]
            else:
                out[j, _HAND:_HAND + NUM_CARD_TYPES] = 0.0  # never show the final player's hand
        else:
            # Another end (end_on_empty_deck, fewest_cards_wins): the public fields are known,
            # the learner's own and per-seat fields are its last known ones (not exact).
            if has_base:
                out[j, :] = base[b]
            else:
                out[j, :] = f
                out[j, _HAND:_HAND + NUM_CARD_TYPES] = 0.0
            for c in _PUBLIC_COLS:
                out[j, c] = f[c]
        for c in _ZERO_COLS:
            out[j, c] = 0.0


# --- single agent -------------------------------------------------------------------------


class UnoEnv(gym.Env):
    """One UNO game, one learning seat; the other seats are played by opponent agents (module doc)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4, "name": "uno_env/Uno-v0"}

    def __init__(self, num_players: int = 2, rules: Any = None, learner_seat: int | str = 0,
                 opponents: Any = None, render_mode: str | None = None, on_illegal: str = "raise") -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if on_illegal not in ("raise", "terminate"):
            raise ValueError(f"on_illegal must be 'raise' or 'terminate', got {on_illegal!r}")
        self.render_mode = render_mode
        self.on_illegal = on_illegal
        self._driver = _Driver(1, num_players, rules, learner_seat, opponents, autoreset=False)
        self.engine = self._driver.engine
        self.rules = self._driver.rules
        self.num_players = self._driver.num_players
        low, high = observation_bounds(self.rules, self.engine.observation_size)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = LegalDiscrete(NUM_ACTIONS, self._legal_int8)
        self._done = True

    @property
    def learner_seat(self) -> int:
        """The learner's seat in the current episode."""
        return int(self._driver.seats[0])

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal a round and play the opponents until the learner's first decision."""
        seeds = _seed_list(seed, 1) if seed is not None else None
        if options:
            raise ValueError(f"options are not used by {type(self).__name__}; got {options!r}")
        super().reset(seed=seed)
        d = self._driver
        d.rng = self.np_random
        d.deal(seeds)
        while True:
            d.play_opponents(_StepLog(1, False))
            if not (self.engine.terminated[0] or self.engine.truncated[0]):
                break
            # The round ended before the learner's first decision: not an episode, deal again.
            d.deal(None)
        self._done = False
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the learner's action, then the opponents' until the learner decides or the round ends."""
        if self._done:
            raise ValueError("the episode is over (or reset() was never called); call reset() before step()")
        a = _check_action(action)
        d, e = self._driver, self.engine
        log = _StepLog(1, False)
        try:
            d.apply_learner(np.array([a], np.int64), log)
        except ValueError:
            # The engine refused the learner's action before changing anything (R10).
            if self.on_illegal == "raise":
                raise
            # on_illegal="terminate": R10's PettingZoo convention, -1 and the episode ends.
            self._done = True
            return e.observe(d.seats)[0], -1.0, True, False, {**self._info(), "illegal_action": True}
        d.play_opponents(log)
        terminated, truncated = bool(e.terminated[0]), bool(e.truncated[0])
        self._done = terminated or truncated
        reward = float(e.rewards[0, d.seats[0]]) if self._done else 0.0
        return self._observation(), reward, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions, bool [116] (all False once the episode is over)."""
        if self._done:
            return np.zeros(NUM_ACTIONS, bool)
        return self.engine.legal_mask[0].copy()

    def _legal_int8(self) -> np.ndarray:
        """The learner's legal actions as int8 [116] (for ``LegalDiscrete.sample``)."""
        return self.action_masks().astype(np.int8)

    def game_state(self) -> dict[str, Any]:
        """The full game as a JSON-serialisable dict (hidden information included; not for agents)."""
        return self.engine.game_state(0)

    def render(self) -> str | None:
        """Text of the table from the learner's seat (``render_mode="ansi"``)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; create the env with render_mode='ansi'")
            return None
        s, me = self.engine.game_state(0), self.learner_seat
        color = COLOR_NAMES[s["current_color"]] if s["current_color"] is not None else "none"
        sizes = ", ".join(f"seat {p}{' (you)' if p == me else ''}: {len(h)}" for p, h in enumerate(s["hands"]))
        hand = ", ".join(card_name(c) for c in s["hands"][me])
        legal = ", ".join(ACTION_NAMES[a] for a in np.flatnonzero(self.engine.legal_mask[0]))
        return (
            f"turn {s['turn']}, phase {s['phase']}, seat {s['current_player']} to act, "
            f"direction {'clockwise' if s['direction'] == 1 else 'counter-clockwise'}\n"
            f"top card: {card_name(s['top_card'])}, colour: {color}, draw pile: {s['draw_pile_size']}\n"
            f"cards held: {sizes}\nyour hand: {hand}\nlegal: {legal or '-'}\n"
        )

    def _observation(self) -> np.ndarray:
        """The learner's view (the engine's current observation when it is the learner's turn)."""
        e = self.engine
        if self._done:
            return e.observe(self._driver.seats)[0]
        return e.observation[0].copy()

    def _info(self) -> dict[str, Any]:
        """``action_mask`` as int8, as PettingZoo and ``Discrete.sample(mask)`` expect."""
        return {"action_mask": self._legal_int8()}


def _check_action(action: Any) -> int:
    """A single action id, else a ValueError naming what was given."""
    a = action
    if isinstance(a, np.ndarray):
        if a.shape not in ((), (1,)):
            raise ValueError(f"action must be one action id (an integer 0..{NUM_ACTIONS - 1}), got an array of shape {a.shape}")
        a = a.reshape(-1)[0]
    if not isinstance(a, numbers.Integral) or isinstance(a, (bool, np.bool_)) or not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action must be an action id, an integer 0..{NUM_ACTIONS - 1}, got {action!r}")
    return int(a)


# --- batched ------------------------------------------------------------------------------


class UnoVectorEnv(VectorEnv):
    """``num_envs`` UNO games in one ``Engine``, one learning seat each; SAME_STEP autoreset (module doc)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP, "name": "uno_env/Uno-v0"}

    def __init__(self, num_envs: int = 1, num_players: int = 2, rules: Any = None,
                 learner_seat: int | str = 0, opponents: Any = None, copy: bool = True,
                 render_mode: str | None = None) -> None:
        _check_int("num_envs", num_envs, 1, 2**31 - 1)
        if render_mode is not None:
            raise ValueError(f"render_mode must be None for {type(self).__name__} (render one game with UnoEnv), got {render_mode!r}")
        if not isinstance(copy, bool):
            raise ValueError(f"copy must be True or False, got {copy!r}")
        self._driver = d = _Driver(num_envs, num_players, rules, learner_seat, opponents, autoreset=True)
        self.engine = d.engine
        self.rules = d.rules
        self.num_envs = d.num_envs
        self.num_players = d.num_players
        self.copy = copy
        low, high = observation_bounds(self.rules, self.engine.observation_size)
        self.single_observation_space = spaces.Box(low, high, dtype=np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self._all = np.ones(self.num_envs, bool)
        self._needs_reset = True
        self._obs_pool = _BufferPool((self.num_envs, self.engine.observation_size), np.float32)
        self._mask_pool = _BufferPool((self.num_envs, NUM_ACTIONS), bool)

    @property
    def learner_seats(self) -> np.ndarray:
        """The learner's seat in each game's current episode (int64 [num_envs])."""
        return self._driver.seats.copy()

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal every game anew (seed s: game i gets seed s + i) and play up to the learner's turn."""
        if options:
            raise ValueError(f"options are not used by {type(self).__name__}; got {options!r}")
        seeds = _seed_list(seed, self.num_envs) if seed is not None else None
        if isinstance(seed, numbers.Integral):
            super().reset(seed=int(seed))
        elif seeds is not None:
            self._np_random, self._np_random_seed = np.random.default_rng(seeds), -1
        d = self._driver
        d.rng = self.np_random
        d.deal(seeds)
        log = _StepLog(self.num_envs, True)
        d.play_opponents(log)  # games that end before the learner's first decision are re-dealt
        self._needs_reset = False
        return self._out(self.engine.observation, self._obs_pool), self._infos(None)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One learner action per game; opponents play until each game is at the learner's turn again."""
        if self._needs_reset:
            raise ValueError("call reset() before step()")
        acts = _check_actions(actions, self.num_envs)
        d = self._driver
        log = _StepLog(self.num_envs, True)
        if d.needs_fallback:
            # The learner's view before its action: the rebuild falls back on it (_final_view).
            d.last_obs = self.engine.observation.copy()
        d.apply_learner(acts, log)
        d.play_opponents(log)
        return (self._out(self.engine.observation, self._obs_pool), log.reward, log.terminated, log.truncated,
                self._infos(log))

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool [num_envs, 116]."""
        return self._out(self.engine.legal_mask, self._mask_pool)

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the engine is plain arrays."""

    def _out(self, arr: np.ndarray, pool: _BufferPool) -> np.ndarray:
        """A copy of an engine buffer (in a buffer no one holds), or the buffer itself with ``copy=False``."""
        if not self.copy:
            return arr
        out = pool.take()
        np.copyto(out, arr)
        return out

    def _infos(self, log: _StepLog | None) -> dict[str, Any]:
        """Vector infos in gymnasium's layout (``key`` plus its ``_key`` mask)."""
        infos: dict[str, Any] = {
            "action_mask": self.engine.legal_mask.astype(np.int8),
            "_action_mask": self._all.copy(),
        }
        if log is not None and log.ended.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            # An object array of per-game arrays, as gymnasium's SyncVectorEnv gives; filled
            # one finished game at a time (numpy cannot scatter arrays into object cells).
            for chunk_rows, views in log.finals:
                for j, r in enumerate(chunk_rows):
                    final_obs[r] = views[j]
            infos["final_obs"] = final_obs
            infos["_final_obs"] = log.ended
            infos["final_info"] = {
                "action_mask": np.zeros((self.num_envs, NUM_ACTIONS), np.int8),
                "_action_mask": log.ended,
            }
            infos["_final_info"] = log.ended
            infos["final_obs_exact"] = log.final_exact & log.ended
            infos["_final_obs_exact"] = log.ended
        return infos


def _check_actions(actions: Any, n: int) -> np.ndarray:
    """One action id per game as int64 [n], else a ValueError naming what was given."""
    arr = np.asarray(actions)
    if arr.shape != (n,):
        raise ValueError(f"actions must have shape ({n},) (one action id per game), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"actions must be integer action ids 0..{NUM_ACTIONS - 1}, got dtype {arr.dtype}")
    lo, hi = (int(arr.min()), int(arr.max())) if n else (0, 0)
    if lo < 0 or hi >= NUM_ACTIONS:
        bad = int(np.flatnonzero((arr < 0) | (arr >= NUM_ACTIONS))[0])
        raise ValueError(f"game {bad}: action {int(arr[bad])} is out of range; action ids are 0..{NUM_ACTIONS - 1}")
    return arr.astype(np.int64, copy=False)
