"""Gymnasium environments ``uno_env/Uno-v0``: ``UnoEnv`` (one game) and ``UnoVectorEnv`` (a batch).

@@SUMMARY@@

## Description

UNO as a single-agent problem: one seat of the table is the *learner* (the agent being
trained); the other seats are played by fixed opponent agents (``uno_env.Agent``: anything with
``act(observation [B, D], action_mask [B, 116], rng) -> int64 [B]``; ``uno_env.RandomAgent`` by
default). Every rule is the engine's (``docs/rules.md``); ``step`` applies the learner's action, then
lets the opponents play until the learner must decide again or the episode ends.

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

``Discrete(116)``, the same ids for every rule set (docs/rules.md R2). Only the actions of the
learner's legal mask may be taken (``action_masks()`` / ``info["action_mask"]``); anything
else raises ``ValueError`` and leaves the game as it was (R10).

@@ACTIONS@@

## Observation Space

``Box(low, high, (D,), float32)`` with ``D = @@D@@`` (``D = @@D_OPEN@@`` with
``open_hands``): the learner's view (R11), from ``uno_env.observation.OBS_FIELDS``. Seats
are relative: slot ``k`` of a per-seat field is the seat ``k`` places clockwise from the
learner (slot 0 is the learner itself). The bounds are
``uno_env.spaces.observation_bounds(rules, num_players)``, shared with the PettingZoo env; the
table gives them for the classic deck and 10 players.

@@OBSERVATIONS@@

**History (``history=K``, opt-in).** With ``history=K`` (1..1024; 0, the default, is the Box
above, unchanged) the observation is a ``gymnasium.spaces.Dict``: ``"observation"`` (the Box
above), ``"history"`` ``Box [K, HISTORY_SIZE]`` (the round's last K public events as the
learner saw them, newest first, rows past the round's events zero) and ``"history_counts"``
``Box [10, HISTORY_COUNTS_SIZE]`` (per relative seat, counts over the whole round), from
``uno_env.spaces.history_spaces(K)``; the fields are ``uno_env.engine.history.HISTORY_FIELDS``
and ``HISTORY_COUNT_FIELDS`` (docs/spaces.md). The engine keeps the history
(``Engine(history=K)``) and the env reads it from the learner's seat (``Engine.history``):
nothing the learner could not see is in it (R11). The vector env returns a dict of batched
arrays (``[num_envs, K, HISTORY_SIZE]``...); ``infos`` are the same as without a history.
With ``history_form="tokens"`` the history is instead ``"history_tokens"``, int8
``Box [K, HISTORY_TOKEN_SIZE]`` (``Engine.history_tokens``: the same events as small integers
for embedding layers, oldest first, the latest in the last row; columns
``uno_env.engine.history.HISTORY_TOKEN_FIELDS``, vocabulary sizes ``HISTORY_TOKEN_VOCAB``).

## Rewards

| when | learner's reward |
|---|---|
| the round ends and the learner won (alone, or sharing the win: partners under ``teams``, R8; a tie on fewest points, R12.19) | ``+1`` |
| the round ends and another seat won | ``-1`` |
| a truncated round (``max_turns`` under ``turn_limit_rule="truncate"``) | ``0`` |
| every other step | ``0`` |

With ``episode="match"`` only the end of the match is rewarded (rounds inside it give 0).

``reward="score"`` or ``"rank"`` pays a terminated round by the points left in the hands (zero-sum,
divided by ``uno_env.rewards.SCORE_SCALE``) or by the learner's place (+1 first to -1 last)
instead; ``"win"`` (the default) is the table above; not with ``episode="match"``. Definitions:
docs/spaces.md. Under SAME_STEP ``infos["final_info"]["won"]`` says whether the learner won, whatever the reward.

## Starting State

A round is dealt (R3, R9) with the learner at ``learner_seat`` (a fixed seat, or
``"random"``: a seat drawn per episode from the reset seed), and the opponents play until the
learner's first decision. A round that ends before the learner's first decision (possible
only with ``hand_size=1`` or a tiny ``max_turns``) is not an episode: it is dealt anew.

## Episode End

One episode is one round (``episode="round"``, the default) or one match (``episode="match"``, R8).

| flag | when |
|---|---|
| ``terminated`` | a player plays their last card (R8; a last Draw Two or Wild Draw Four still makes the next player draw first) |
| ``terminated`` | ``end_on_empty_deck``: a draw finds both piles empty; fewest hand points win (R4, R12.19) |
| ``terminated`` | ``turn_limit_rule="fewest_cards_wins"``: the round reaches ``rules.max_turns`` actions; fewest cards win (R8) |
| ``truncated`` | ``turn_limit_rule="truncate"`` (default): the round reaches ``rules.max_turns`` actions (every seat's actions count; 5000 by default) |

``UnoEnv`` returns the learner's view of the finished round; ``step`` after the end raises
``ValueError`` until ``reset``.

## Vector environment and autoreset

``UnoVectorEnv`` supports gymnasium's two autoreset modes (``autoreset_mode=``, also a
keyword of ``gymnasium.make_vec``); ``env.metadata["autoreset_mode"]`` says which one runs.

* ``AutoresetMode.NEXT_STEP`` (the default, gymnasium's own default): the step in which a game
  ends returns its ``terminated``/``truncated`` flag, the learner's reward and the learner's
  view of the finished round; the game then waits, finished, and the NEXT ``step`` deals it
  anew, ignores its action (any action id is accepted: ``action_masks()`` and
  ``infos["action_mask"]`` are all ones for it) and returns reward 0, no flag and the first
  observation of the new round. Why the default: it is what ``gymnasium.make_vec`` users and
  every gymnasium vector wrapper (``NormalizeObservation``, ``FlattenObservation``,
  ``TransformObservation``, ``RescaleObservation``, ``RecordEpisodeStatistics``...) expect;
  several of them refuse any other mode.
* ``AutoresetMode.SAME_STEP`` (SB3-style, what ``UnoSB3VecEnv`` uses, and the CleanRL example):
  the step in which a game ends returns that game's flag and reward together with the FIRST
  observation of its next round; the finished round's last observation is in
  ``infos["final_obs"]`` (an object array, ``None`` for games that did not end;
  ``infos["_final_obs"]`` marks the ones that did), as gymnasium's ``SyncVectorEnv`` does. No
  step is spent on resets, so it is the faster mode for training loops that read
  ``final_obs``. (gymnasium 1.2.2's ``RecordEpisodeStatistics`` counts SAME_STEP episodes one
  step short; use NEXT_STEP with it there.)

``UnoVectorEnv.state()`` gives the critics' whole state (hidden cards included) of every game
in its learner's frame, ``float32 [num_envs, STATE_SIZE]`` (docs/spaces.md); never an input
for the policy.

With ``history=K`` a finished round's view (``final_obs[i]`` under SAME_STEP, the ending
step's observation under NEXT_STEP) is the dict with the finished round's history up to its
end (its last K events and its counts), as the learner saw it; the next round's first
observation holds only the new round's events (a deal clears the history).

``final_obs`` is always exactly the learner's view of the finished round, what ``UnoEnv``
returns from its last ``step`` (``Engine.observe`` from the learner's seat once the round is
over), whoever ended it and however: the learner's or an opponent's last card (including
the cards a last Draw Two or Wild Draw Four made the learner draw, R8), the turn limit,
``end_on_empty_deck`` or ``turn_limit_rule="fewest_cards_wins"``. The engine keeps a finished
game as it is until this layer has read that view; then the game is dealt anew from its own
generator (``Engine.reset(games=...)``) and its opponents play up to the learner's first
decision.

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
  the env's ``np_random`` (seeded by ``reset(seed=...)``). ``UnoVectorEnv`` also takes
  opponent groups, a list of ``(opponents, num_games)``: the games in order, each group with
  its own opponents (``group_of[i]`` is game i's group); ``set_opponents(opponents, group)``
  swaps a group's opponents between steps (e.g. a self-play snapshot).
* ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the learner's table as text),
  ``"human"`` (prints that text after each ``reset`` and ``step``) or
  ``"rgb_array"`` (``render()`` returns a ``uint8 [H, W, 3]`` image, ``uno_env.render``; needs
  Pillow, ``pip install uno_env[render]``): the render modes of the PettingZoo env.
  ``UnoVectorEnv.render()`` returns a tuple, one render per game, as gymnasium's
  ``SyncVectorEnv`` does (no ``"human"``). A missing Pillow is reported by ``render()``, not
  by the constructor: SB3's ``make_vec_env`` asks every env for ``"rgb_array"`` whether or
  not it will ever render.
* ``on_illegal`` (``UnoEnv`` only): ``"terminate"`` (default; R10's PettingZoo convention, as
  ``uno_env.env()``: reward -1, the episode ends, ``info["illegal_action"] = True``) or
  ``"raise"`` (``ValueError``, the game unchanged, R10: for debugging a masking bug).
  Why ``"terminate"`` by default: the env as registered must survive code that steps actions
  without a mask. Gymnasium's own ``check_env(gymnasium.make("uno_env/Uno-v0"))`` samples its
  action before its seeded ``reset``, i.e. for another position, where it is usually illegal;
  with ``"raise"`` the checker fails. A masked learner (``MaskablePPO``, ``action_masks()``)
  never sees the difference. ``action_space.sample()`` without a mask draws a legal action of
  the current decision (``LegalDiscrete``). ``UnoVectorEnv`` always raises (the game
  unchanged): it is the training fast path, always driven with masks.
* ``history``: 0 (default: the Box observation) or K in 1..1024: the learner's public history
  in a Dict observation (Observation Space above). Opponents that read a history (agents with
  ``history_length``, e.g. a ``PPOAgent`` trained with it) get theirs from the same engine,
  whatever K the learner has.
* ``history_form``: ``"rows"`` (default: ``"history"`` and ``"history_counts"``, float32) or
  ``"tokens"`` (``"history_tokens"``, int8); only with ``history=K``.
* ``reward``: ``"win"`` (default), ``"score"`` or ``"rank"`` (Rewards above).
* ``UnoVectorEnv`` also takes ``num_envs`` and ``copy`` (default True: returned arrays are
  fresh copies; False: views of engine buffers, valid until the next ``step``/``reset``; the
  history arrays of ``history=K`` are fresh either way) and ``threads`` (default 1; N in 1..64:
  the engine steps the games, and opponents with ``act_chunked`` decide, in N contiguous chunks
  on N threads, the same results bit for bit as on one).

## Version History

* v0: initial version (engine observation layout of ``uno_env`` 0.1.0).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces as gym_spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from ._vector_driver import Driver, StepLog, first_out_of_range, seed_list
from .actions import ACTION_NAMES, NUM_ACTIONS
from .checks import check_history_form, check_int, check_reward, is_int
from .docs import action_table, fill_doc, observation_table
from .observation import observation_size
from .render import render_rgb, table_text
from .rewards import round_rewards
from .rules import UnoRules, parse_rules
from .seat_view import state_view
from .spaces import action_space, history_spaces, observation_space

__all__ = ["UnoEnv", "UnoVectorEnv", "LegalDiscrete", "ENV_ID", "RENDER_MODES", "register_envs"]

# An observation: the Box's array, or with history=K the dict of it and the history.
Obs = np.ndarray | dict[str, np.ndarray]

ENV_ID = "uno_env/Uno-v0"
RENDER_MODES = ["ansi", "human", "rgb_array"]  # the PettingZoo env's, so every env renders alike


def register_envs() -> None:
    """Register ``uno_env/Uno-v0`` with gymnasium (``make`` and ``make_vec``); idempotent."""
    if ENV_ID not in gym.registry:
        gym.register(ENV_ID, entry_point="uno_env.gym_env:UnoEnv", vector_entry_point="uno_env.gym_env:UnoVectorEnv")


def _single_space(rules: UnoRules, num_players: int, history: int, form: str) -> gym_spaces.Space:
    """One game's observation space: the Box, or with ``history`` the Dict of it and ``history_spaces``."""
    box = observation_space(rules, num_players)
    if not history:
        return box
    return gym_spaces.Dict({"observation": box, **history_spaces(history, form)})


class LegalDiscrete(gym_spaces.Discrete):
    """``Discrete(116)`` whose ``sample()`` without a mask draws a legal action of the env's current decision.

    A copy or pickle of it is a plain ``Discrete`` (it does not carry the env along)."""

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


__doc__ = fill_doc(
    __doc__,
    SUMMARY=f"Id ``{ENV_ID}``; ``gymnasium.make`` gives ``UnoEnv``, ``gymnasium.make_vec`` gives ``UnoVectorEnv``.",
    ACTIONS=action_table(),
    OBSERVATIONS=observation_table(),
    D=observation_size(False),
    D_OPEN=observation_size(True),
)


# --- single agent -------------------------------------------------------------------------


class UnoEnv(gym.Env):
    """One UNO game, one learning seat; the other seats are played by opponent agents (module doc)."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4, "name": "uno_env/Uno-v0"}

    def __init__(
        self,
        num_players: int = 2,
        rules: Any = None,
        learner_seat: int | str = 0,
        opponents: Any = None,
        render_mode: str | None = None,
        on_illegal: str = "terminate",
        history: int = 0,
        history_form: str = "rows",
        reward: str = "win",
    ) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
        if on_illegal not in ("raise", "terminate"):
            raise ValueError(f"on_illegal must be 'raise' or 'terminate', got {on_illegal!r}")
        self.render_mode = render_mode
        self.on_illegal = on_illegal
        check_history_form(history_form, history)
        parsed = parse_rules(rules)
        code = check_reward(reward, parsed.episode)
        self._driver = Driver(1, num_players, parsed, learner_seat, opponents, history, history_form, reward=code)
        self.reward = reward
        self.engine = self._driver.engine
        self.rules = self._driver.rules
        self.num_players = self._driver.num_players
        self.history = self._driver.history
        self.history_form = history_form
        self.observation_space = _single_space(self.rules, self.num_players, self.history, history_form)
        self.action_space = LegalDiscrete(NUM_ACTIONS, self._legal_int8)
        self._no_log = StepLog.dropping(1)  # this env reads the end of a round from the engine
        self._done = True

    @property
    def learner_seat(self) -> int:
        """The learner's seat in the current episode."""
        return int(self._driver.seats[0])

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Obs, dict]:
        """Deal a round and play the opponents until the learner's first decision."""
        seeds = seed_list(seed, 1) if seed is not None else None
        if options:
            raise ValueError(f"options are not used by {type(self).__name__}; got {options!r}")
        super().reset(seed=seed)
        d = self._driver
        d.rng = self.np_random
        d.deal(seeds)
        while d.play_opponents(self._no_log):
            # The round ended before the learner's first decision: not an episode, deal again.
            d.deal(None)
        self._done = False
        self._render_human()
        return self._with_history(self.engine.observation[0].copy()), self._info()

    def step(self, action: Any) -> tuple[Obs, float, bool, bool, dict]:
        """Apply the learner's action, then the opponents' until the learner decides or the round ends."""
        if self._done:
            raise ValueError("the episode is over (or reset() was never called); call reset() before step()")
        a = _check_action(action)
        d, e = self._driver, self.engine
        try:
            d.step_learner(np.array([a], np.int64))
        except ValueError:
            # The engine refused the learner's action before changing anything (R10).
            if self.on_illegal == "raise":
                raise
            # on_illegal="terminate": R10's PettingZoo convention, -1 and the episode ends.
            self._done = True
            return self._view(), -1.0, True, False, {**self._info(), "illegal_action": True}
        d.play_opponents(self._no_log)  # (nothing to play in a round that is over)
        terminated, truncated = bool(e.terminated[0]), bool(e.truncated[0])
        self._done = terminated or truncated
        self._render_human()
        if not self._done:
            return self._with_history(e.observation[0].copy()), 0.0, False, False, self._info()
        # The engine step that ended the round was the last one, so its rewards and hands are still there.
        reward = float(round_rewards(e, self.reward, 0)[0, d.seats[0]])
        return self._view(), reward, terminated, truncated, self._info()

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

    def state(self) -> np.ndarray:
        """Hidden information for critics: the whole state in the learner's frame, float32 [STATE_SIZE]
        (fields ``uno_env.observation.STATE_FIELDS``; never a policy's input)."""
        return self._driver.state()[0]

    # gymnasium types Env.render with a free TypeVar, which no concrete return type matches.
    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """The table from the learner's seat: text (``ansi``), an RGB image (``rgb_array``), or printed (``human``)."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; create the env with render_mode='ansi' or 'rgb_array'"
            )
            return None
        if self.render_mode == "human":
            print(_render_text(self.engine, 0, self.learner_seat, self.action_masks()))
            return None
        return _render_game(self.engine, 0, self.learner_seat, self.action_masks(), self.render_mode)

    def _render_human(self) -> None:
        """``render_mode="human"`` draws after every reset and step (Gymnasium's convention)."""
        if self.render_mode == "human":
            self.render()

    def _view(self) -> Obs:
        """The learner's view from its seat, in any phase (also once the round is over)."""
        return self._with_history(self.engine.observe(self.learner_seat)[0])

    def _with_history(self, obs: np.ndarray) -> Obs:
        """``obs``, or with ``history`` the dict of it and the learner's history."""
        if not self.history:
            return obs
        return {"observation": obs, **{k: v[0] for k, v in self._driver.histories().items()}}

    def _info(self) -> dict[str, Any]:
        """``action_mask`` as int8, as PettingZoo and ``Discrete.sample(mask)`` expect."""
        return {"action_mask": self._legal_int8()}


def _render_text(engine: Any, game: int, seat: int, legal_mask: np.ndarray) -> str:
    """One game's table as text from the learner's seat (``uno_env.render.table_text``) and its legal actions."""
    s = engine.game_state(game)
    acting = None if s["phase"] == "round_over" else s["current_player"]
    table = table_text(state_view(s, seat), turn=s["turn"], acting=acting, viewer=seat)
    legal = ", ".join(ACTION_NAMES[a] for a in np.flatnonzero(legal_mask))
    return f"{table}\nlegal: {legal or '-'}\n"


def _render_game(engine: Any, game: int, seat: int, legal_mask: np.ndarray, mode: str) -> str | np.ndarray:
    """One game rendered for ``mode`` ``"ansi"`` (text) or ``"rgb_array"`` (``uno_env.render.render_rgb``)."""
    if mode == "ansi":
        return _render_text(engine, game, seat, legal_mask)
    # render_rgb shows the acting seat's hand only; between steps that is the learner (R11).
    names = [f"seat {p}{' (learner)' if p == seat else ''}" for p in range(engine.num_players)]
    return render_rgb(engine.game_state(game), names)


def _check_action(action: Any) -> int:
    """A single action id, else a ValueError naming what was given."""
    a = action
    if isinstance(a, np.ndarray):
        if a.shape not in ((), (1,)):
            raise ValueError(
                f"action must be one action id (an integer 0..{NUM_ACTIONS - 1}), got an array of shape {a.shape}"
            )
        a = a.reshape(-1)[0]
    if not is_int(a) or not 0 <= int(a) < NUM_ACTIONS:
        raise ValueError(f"action must be an action id, an integer 0..{NUM_ACTIONS - 1}, got {action!r}")
    return int(a)


# --- batched ------------------------------------------------------------------------------


def _copy_rows(out: np.ndarray, arr: np.ndarray, lo: int, hi: int) -> None:
    """Rows lo..hi-1 of ``arr`` into ``out`` (numpy copies without the GIL): a piece of ``Chunks.run``."""
    np.copyto(out[lo:hi], arr[lo:hi])


class _BufferPool:
    """Output arrays that look fresh without fresh memory: a buffer is reused once only the pool references it.

    A new large array per step made the allocator re-fault pages every step."""

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


class UnoVectorEnv(VectorEnv):
    """``num_envs`` UNO games in one ``Engine``, one learning seat each; NEXT_STEP (default) or
    SAME_STEP autoreset (module doc)."""

    metadata = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,  # the class default; each instance holds its own
        "name": "uno_env/Uno-v0",
    }

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int = 2,
        rules: Any = None,
        learner_seat: int | str = 0,
        opponents: Any = None,
        copy: bool = True,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        history: int = 0,
        history_form: str = "rows",
        threads: int = 1,
        reward: str = "win",
    ) -> None:
        check_int("num_envs", num_envs, 1, 2**31 - 1)
        check_history_form(history_form, history)
        mode = _check_autoreset_mode(autoreset_mode)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']} for "
                f"{type(self).__name__} ('human': render one game with UnoEnv), got {render_mode!r}"
            )
        if not isinstance(copy, bool):
            raise ValueError(f"copy must be True or False, got {copy!r}")
        parsed = parse_rules(rules)
        code = check_reward(reward, parsed.episode)
        self._driver = d = Driver(
            num_envs, num_players, parsed, learner_seat, opponents, history, history_form, threads, code
        )
        self.reward = reward
        self.threads = d.engine.threads
        self.history = d.history
        self.history_form = history_form
        self.engine = d.engine
        self.rules = d.rules
        self.num_envs = d.num_envs
        self.num_players = d.num_players
        self.copy = copy
        self.render_mode = render_mode
        self.autoreset_mode = mode
        # Per instance: gymnasium's wrappers read the mode from env.metadata.
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.single_observation_space = _single_space(self.rules, self.num_players, self.history, history_form)
        self.single_action_space = action_space()
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self._all = np.ones(self.num_envs, bool)
        self._needs_reset = True
        self._obs_pool = _BufferPool((self.num_envs, self.engine.observation_size), np.float32)
        self._mask_pool = _BufferPool((self.num_envs, NUM_ACTIONS), bool)
        # NEXT_STEP: the games that ended in the last step (frozen; dealt anew by the next step).
        self._pending = np.zeros(self.num_envs, bool)
        self._view_buf: np.ndarray | None = None  # copy=False under NEXT_STEP: obs with final views

    @property
    def driver(self) -> Driver:
        """The driver that deals these games, seats the learner and plays the opponents (shared, not a copy)."""
        return self._driver

    @property
    def learner_seats(self) -> np.ndarray:
        """The learner's seat in each game's current episode (int64 [num_envs])."""
        return self._driver.seats.copy()

    @property
    def group_of(self) -> np.ndarray:
        """Each game's opponent group (int64 [num_envs]; all 0 without groups)."""
        return self._driver.group_of.copy()

    def set_opponents(self, opponents: Any, group: int = 0) -> None:
        """Replace the opponents of one group (one agent or ``num_players - 1``); they play from the next step."""
        self._driver.set_opponents(opponents, group)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None) -> tuple[Obs, dict]:
        """Deal every game anew (seed s: game i gets seed s + i) and play up to the learner's turn."""
        if options:
            raise ValueError(f"options are not used by {type(self).__name__}; got {options!r}")
        seeds = seed_list(seed, self.num_envs) if seed is not None else None
        if is_int(seed):
            super().reset(seed=int(seed))
        elif seeds is not None:
            self._np_random, self._np_random_seed = np.random.default_rng(seeds), -1
        d = self._driver
        d.rng = self.np_random
        d.deal(seeds)
        d.advance(StepLog.dropping(self.num_envs))  # rounds over before the learner's turn are dealt anew
        self._needs_reset = False
        self._pending[:] = False
        return self._with_history(self._out(self.engine.observation, self._obs_pool)), self._infos(None)

    def step(self, actions: Any) -> tuple[Obs, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One learner action per game; opponents play until each game is at the learner's turn again."""
        if self._needs_reset:
            raise ValueError("call reset() before step()")
        acts = _check_actions(actions, self.num_envs)
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            return self._step_next(acts)
        d = self._driver
        log = StepLog(self.num_envs)
        d.step_learner(acts)
        d.advance(log)
        return (
            self._with_history(self._out(self.engine.observation, self._obs_pool)),
            log.reward,
            log.terminated,
            log.truncated,
            self._infos(log),
        )

    def _step_next(self, acts: np.ndarray) -> tuple[Obs, np.ndarray, np.ndarray, np.ndarray, dict]:
        """NEXT_STEP: games that ended last step are dealt anew (their action ignored); games that
        end now stay finished and return the learner's final view."""
        d, e = self._driver, self.engine
        pending = self._pending
        log = StepLog(self.num_envs)
        if pending.any():
            acts = acts.copy()
            acts[pending] = -1  # the engine leaves those (finished) games alone
            # Their new rounds: one that ends before the learner's first decision is no episode.
            log.ended[pending] = True
        d.step_learner(acts)
        if pending.any():
            d.redeal(pending)
        while d.play_opponents(log):
            # Rounds that ended in this step wait (fresh) for the next step; any other finished
            # game is a round dealt above that ended before the learner's turn: deal it again.
            again = (e.terminated | e.truncated) & ~log.fresh
            if not again.any():
                break
            d.redeal(again)
        ended = log.fresh
        self._pending = ended.copy()
        if self.copy:
            obs = self._obs_pool.take()
        else:
            if self._view_buf is None:
                self._view_buf = np.empty_like(e.observation)
            obs = self._view_buf
        np.copyto(obs, e.observation)
        if ended.any():
            d.observe_learners(obs, ended)  # the learner's view of each finished round
        infos = self._infos(None)
        # A finished game waits, frozen, until the next step: its history is its finished round's.
        return self._with_history(obs), log.reward, log.terminated, log.truncated, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool [num_envs, 116] (all True while a game awaits its deal)."""
        if not self._pending.any():
            return self._out(self.engine.legal_mask, self._mask_pool)
        out = self._mask_pool.take()
        np.copyto(out, self.engine.legal_mask)
        out[self._pending] = True
        return out

    def state(self, out: np.ndarray | None = None) -> np.ndarray:
        """Hidden information for critics: each game's whole state in its learner's frame, float32 [B, STATE_SIZE].

        Under NEXT_STEP a game that just ended gives its finished round's state; under SAME_STEP the next round's."""
        return self._driver.state(out=out)

    def render(self) -> tuple | None:
        """One render per game (text or RGB image, as ``UnoEnv.render``), in a tuple like ``SyncVectorEnv``."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; create the env with render_mode='ansi' or 'rgb_array'"
            )
            return None
        mask, seats = self.engine.legal_mask, self._driver.seats
        return tuple(
            _render_game(self.engine, i, int(seats[i]), mask[i], self.render_mode) for i in range(self.num_envs)
        )

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the engine is plain arrays."""

    def _with_history(self, obs: np.ndarray) -> Obs:
        """``obs``, or with ``history`` the dict of it and each learner's history (fresh arrays)."""
        if not self.history:
            return obs
        return {"observation": obs, **self._driver.histories()}

    def _out(self, arr: np.ndarray, pool: _BufferPool) -> np.ndarray:
        """A copy of an engine buffer (in a buffer no one holds), or the buffer itself with ``copy=False``."""
        if not self.copy:
            return arr
        out = pool.take()
        if self.engine.chunks is not None:
            self.engine.chunks.run(self.num_envs, _copy_rows, out, arr)
        else:
            np.copyto(out, arr)
        return out

    def _infos(self, log: StepLog | None) -> dict[str, Any]:
        """Vector infos in gymnasium's layout (``key`` plus its ``_key`` mask)."""
        mask = self.engine.legal_mask.view(np.int8).copy()
        mask[self._pending] = 1  # NEXT_STEP: a finished game takes (and ignores) any action
        infos: dict[str, Any] = {"action_mask": mask, "_action_mask": self._all.copy()}
        if log is not None and log.finals:
            final_obs = np.full(self.num_envs, None, dtype=object)
            # An object array of per-game arrays, as gymnasium's SyncVectorEnv gives; filled
            # one finished game at a time (numpy cannot scatter arrays into object cells).
            for k, (rows, views) in enumerate(log.finals):
                for j, r in enumerate(rows.tolist()):
                    final_obs[r] = views[j]
                if self.history:
                    entries = log.final_histories[k]
                    for j, r in enumerate(rows.tolist()):
                        final_obs[r] = {"observation": views[j], **{key: v[j] for key, v in entries.items()}}
            infos["final_obs"] = final_obs
            infos["_final_obs"] = log.ended
            infos["final_info"] = {
                "action_mask": np.zeros((self.num_envs, NUM_ACTIONS), np.int8),
                "_action_mask": log.ended,
                "won": log.won,  # whatever the reward, for win rates
                "_won": log.ended,
            }
            infos["_final_info"] = log.ended
        return infos


def _check_autoreset_mode(mode: Any) -> AutoresetMode:
    """``AutoresetMode.NEXT_STEP`` or ``SAME_STEP`` (or their names), else a ValueError."""
    names = {m.name.lower(): m for m in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)}
    if isinstance(mode, AutoresetMode) and mode in names.values():
        return mode
    if isinstance(mode, str) and mode.lower() in names:
        return names[mode.lower()]
    raise ValueError(
        "autoreset_mode must be AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP (or 'next_step' / "
        f"'same_step'), got {mode!r}"
    )


def _check_actions(actions: Any, n: int) -> np.ndarray:
    """One action id per game as int64 [n], else a ValueError naming what was given."""
    arr = np.asarray(actions)
    if arr.shape != (n,):
        raise ValueError(f"actions must have shape ({n},) (one action id per game), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"actions must be integer action ids 0..{NUM_ACTIONS - 1}, got dtype {arr.dtype}")
    given = arr
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:
        arr = np.minimum(arr, NUM_ACTIONS)  # uint64 ids above 2**63 would wrap to negative int64
    arr = arr.astype(np.int64, copy=False)
    bad = first_out_of_range(arr, NUM_ACTIONS)
    if bad >= 0:
        raise ValueError(f"game {bad}: action {int(given[bad])} is out of range; action ids are 0..{NUM_ACTIONS - 1}")
    return arr
