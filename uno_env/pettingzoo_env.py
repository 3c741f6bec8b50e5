"""PettingZoo AEC environment ``uno_v0``: ``raw_env``, and ``env()`` with the classic checks built in.

A game is an ``Engine`` batch of one; ``raw_env``'s docstring is the environment's doc page."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from .actions import NUM_ACTIONS
from .checks import check_history_form, is_int
from .docs import action_table, fill_doc, observation_table
from .engine import Engine
from .engine.batch import step_one as _step_one
from .engine.history import HISTORY_COUNTS_SIZE, HISTORY_SIZE, HISTORY_TOKEN_SIZE
from .engine.history import fold_history as _fold_history
from .observation import STATE_SIZE, observation_size
from .render import render_rgb, render_text, require_pillow
from .rules import UnoRules, parse_rules
from .spaces import history_spaces, observation_bounds, state_space

__all__ = ["raw_env", "env", "parallel_env", "CheckedEnv", "observation_bounds", "ILLEGAL_REWARD"]

ILLEGAL_REWARD = -1.0  # what env() gives an agent that plays an illegal move (R10)

# Attributes PettingZoo defines only from reset() on.
_SET_BY_RESET = frozenset(
    {"agents", "rewards", "terminations", "truncations", "infos", "agent_selection", "_cumulative_rewards"}
)
# What OrderEnforcingWrapper refuses to read before reset (its exact list).
_ORDER_ENFORCED = frozenset(
    {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}
)


class raw_env(AECEnv):
    """# UNO (``uno_v0``)

    | | |
    |---|---|
    | Import | ``from uno_env import env, raw_env, parallel_env`` |
    | Actions | Discrete |
    | Parallel API | Yes (``parallel_env``: turn-based, one decision per parallel step) |
    | Manual control | No |
    | Agents | ``agents = ['player_0', ..., 'player_{n-1}']`` |
    | Number of agents | 2–10 (``num_players``, default 2) |
    | Action space | ``Discrete(116)`` |
    | Observation space | ``Dict(observation=Box(float32, (D,)), action_mask=Box(0, 1, (116,), int8))`` |
    | Observation size D | @@D@@ (@@D_OPEN@@ with ``open_hands``) |
    | State shape | ``(@@S@@,)`` (``state()``, seat 0's frame) |

    UNO for 2 to 10 players under any rule set of ``UnoRules`` (docs/rules.md). Each game is an
    ``Engine`` batch of one, so this env plays exactly the rules of the batched engine.
    ``raw_env`` raises ``ValueError`` on an illegal action and changes nothing; ``env()`` gives
    the same game with PettingZoo's classic checks (see *Illegal moves and misuse*).

    ## Arguments

    | argument | default | meaning |
    |---|---|---|
    | ``num_players`` | 2 | seats, an integer in 2..10 (R3) |
    | ``rules`` | ``None`` | a ``UnoRules``, preset name, JSON text or dict of options (``None``: classic) |
    | ``render_mode`` | ``None`` | ``None``, ``"ansi"`` (returns text), ``"human"`` (prints coloured text after each step), ``"rgb_array"`` (returns an image, needs ``pip install uno_env[render]``) |
    | ``max_cycles`` | ``None`` | PettingZoo's episode cap: the round is truncated after ``max_cycles * num_players`` actions, i.e. ``rules.max_turns`` is set to that (a cycle: every seat acts once, on average); ``None`` keeps ``rules.max_turns`` |
    | ``history`` | 0 | K > 0 adds the round's history to every observation: ``"history"`` (the last K events) and ``"history_counts"`` (see *History*); 0: none |
    | ``history_form`` | ``"rows"`` | with ``history=K``: ``"rows"`` (the float rows and counts) or ``"tokens"`` (``"history_tokens"``, int8; see *History*) |

    ## Turn limit and truncation (R8)

    A round of naive (e.g. random) agents can last long: every action of every seat counts
    towards ``rules.max_turns`` (5000 by default), and a round that reaches it is truncated:
    every agent gets ``truncations[agent] = True`` and reward 0, and, as on termination, each
    must then be stepped with ``None``. A loop that ignores truncation keeps stepping actions
    for a finished round (PettingZoo: "when an agent is dead, the only valid action is None").
    To make rounds shorter, give ``max_cycles`` (or ``rules={"max_turns": ...}``); to have every
    round decided, ``rules={"turn_limit_rule": "fewest_cards_wins"}`` ends a round at the limit
    as a win for the fewest cards (a termination, rewards +1/-1).

    ## State (``state()``, ``state_space``)

    ``state()`` is the whole game (hidden cards included) as float32 ``[@@S@@]``, in seat 0's
    (``player_0``'s) frame: ``Engine.state(0)``, fields ``uno_env.observation.STATE_FIELDS``
    (docs/spaces.md). A fixed seat makes it one vector per position, whoever is to act (the
    ``to_act`` field says who). It is for centralised critics only, never an agent's observation.
    ``state_space`` is its ``Box`` (``uno_env.spaces.state_space``).

    ## Agents and turns

    Seat ``p`` is agent ``player_p``. ``agent_selection`` is always whoever must decide next,
    which is the engine's ``current_player``: a turn of several decisions (play a wild, then
    choose its colour; answer a Wild Draw Four; choose a swap target) keeps the same agent
    selected, and a Skip or a two-player Reverse selects the same agent again.

    ## Action space (docs/rules.md R2)

    @@ACTIONS@@

    ``uno_env.action_name(a)`` names an action; actions a rule set does not use are never legal.

    ## Observation space (docs/rules.md R11)

    ``observe(agent)`` returns ``{"observation": float32[D], "action_mask": int8[116]}`` from
    that agent's own seat; both arrays are new on every call (keeping them is safe). Seats in
    the vector are relative: slot k is the seat k places clockwise from the observer.
    ``last()`` returns the same fresh arrays. (PettingZoo does not ask for copies, but a loop that
    keeps an observation across ``step``, as a replay buffer does, would see a view of the
    engine's buffers change under it. The ``infos[agent]`` dicts, as in every PettingZoo env, are
    the env's own and returned as they are.)

    Min and max are the space's bounds (``observation_bounds``) for the classic rules and 10 players.

    @@OBSERVATIONS@@

    ## History (``history=K``, R11)

    With ``history=K`` every observation dict also holds what the agent's seat saw happen this
    round (``Engine.history``): ``"history"`` float32 ``[K, @@H@@]``, the last K events newest
    first (row 0 the latest; rows past the round's events are 0), and ``"history_counts"``
    float32 ``[10, @@HC@@]``, per relative seat, counts over the whole round however long.
    Others' drawn cards and the draw pile are never in it; the seat's own drawn cards are.
    The fields are ``uno_env.engine.history.HISTORY_FIELDS`` and ``HISTORY_COUNT_FIELDS``
    (docs/spaces.md). The spaces are ``uno_env.spaces.history_spaces(K)``.

    With ``history_form="tokens"`` the observation holds ``"history_tokens"`` int8
    ``[K, @@HT@@]`` instead (``Engine.history_tokens``): the same events as small integers for
    embedding layers, oldest first, the latest in the last row, zero rows before the round's
    first event; columns ``uno_env.engine.history.HISTORY_TOKEN_FIELDS``.

    ## Legal action mask

    ``action_mask[a] == 1`` when action a is legal for the agent; it is all zeros for every
    agent that is not to act, and for everybody once the round is over. It is ``int8`` so that
    ``env.action_space(agent).sample(mask)`` works.

    ## Rewards (R8)

    0 on every step until the round ends; then every agent gets its engine reward: +1 for the
    winner (each winner, with shared wins), -1 for every other agent; 0 for everybody on a
    truncated round (unless ``turn_limit_rule`` names a winner). ``last()`` gives the
    cumulative reward since the agent last acted.

    ## Episode end

    One round is one episode. When it ends every agent is terminated (``terminations`` all
    ``True``), or truncated (``truncations`` all ``True``) when the round reached
    ``rules.max_turns`` actions (R8). Then, as in every PettingZoo classic env, each agent in
    turn (from ``player_0``) must be stepped with ``None`` and is removed from ``agents``.

    ## Illegal moves and misuse (R10)

    | | ``raw_env`` | ``env()`` |
    |---|---|---|
    | illegal action | ``ValueError`` naming the action, phase and legal actions; nothing changes | the offender gets -1, every other agent 0, all agents terminated and truncated (PettingZoo convention) |
    | action outside 0..115 or not an integer | ``ValueError`` | ``AssertionError("action is not in action space")`` |
    | before the first ``reset`` | ``agents``, ``agent_selection``, ``rewards``… raise ``AttributeError``, so ``step`` and ``agent_iter`` do | ``AssertionError`` from ``step``, ``observe``, ``render``, ``state``, ``agent_iter``; ``AttributeError`` from those attributes |
    | ``agent_iter`` item not followed by ``step`` | nothing checked | ``AssertionError`` at the next item |
    | ``step`` after every agent was removed | ``ValueError`` | a warning, nothing happens |

    ``env()`` behaves exactly like ``raw_env`` under PettingZoo's ``TerminateIllegalWrapper(
    illegal_reward=-1)``, ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper`` (the
    classic-env stack), without their cost per step; ``env().unwrapped`` is the env itself.
    Under ``rules.illegal_action="penalty"`` the engine's penalty (R10) applies in ``raw_env``;
    ``env()`` ends the game before the engine sees the move, as the wrapper stack does.

    ## Version history

    * v0: initial release (``uno_env`` 0.1.0); the ``history`` argument (default off, which
      leaves every observation as it was) added after 0.1.0 (CHANGELOG, Unreleased).
    """

    metadata: dict[str, Any] = {
        "name": "uno_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }  # as PettingZoo's classic card envs

    def __init__(
        self,
        num_players: int = 2,
        rules: UnoRules | str | dict | None = None,
        render_mode: str | None = None,
        max_cycles: int | None = None,
        history: int = 0,
        history_form: str = "rows",
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if render_mode == "rgb_array":
            require_pillow()  # fail now rather than at the first render()
        # The engine checks num_players and rules and names what is allowed.
        self._engine = Engine(
            1, num_players, _with_max_cycles(parse_rules(rules), num_players, max_cycles), history=history
        )
        self.history = self._engine.history_length
        self.history_form = check_history_form(history_form, self.history)
        self.max_cycles = max_cycles
        self.render_mode = render_mode
        self._render_human = render_mode == "human"
        self.num_players = self._engine.num_players
        self.rules = self._engine.rules
        self.possible_agents = [f"player_{p}" for p in range(self.num_players)]
        self._names = tuple(self.possible_agents)
        self._seat_of = {name: p for p, name in enumerate(self.possible_agents)}
        low, high = observation_bounds(self.rules, self.num_players)
        # One space object per agent: api_test wants the same object on every call, and
        # seed_test seeds each agent's action space separately.
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
                    **(history_spaces(self.history, history_form) if self.history else {}),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces: dict[str, spaces.Space] = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.state_space = state_space(self.rules, self.num_players)
        self._bind()
        self._acting_seat = int(self._engine.current_player[0])

    def _bind(self) -> None:
        """Keep row views of the engine's outputs (overwritten in place every step) and its buffer."""
        e = self._engine
        self._buf = e.buf
        self._obs_row = e.observation[0]
        self._mask_row = e.legal_mask[0].view(np.int8)  # bool and int8 share a layout: 0/1
        self._rew_row = e.rewards[0]
        self._code = np.zeros(1, np.int64)  # the action of a one-game step, for the history fold

    _VIEWS = ("_buf", "_obs_row", "_mask_row", "_rew_row", "_code")

    def _with_history(self, obs: dict[str, np.ndarray], seat: int) -> dict[str, np.ndarray]:
        if self.history:
            for k, v in self._engine.history_observation(seat, self.history_form).items():
                obs[k] = v[0]
        return obs

    def __getstate__(self) -> dict[str, Any]:
        # Pickle and deepcopy would turn the row views into copies that no longer follow the
        # engine's buffers; drop them and bind afresh on load.
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEWS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind()

    # --- PettingZoo API ------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of an agent (the same object on every call)."""
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}") from None

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of an agent, ``Discrete(116)`` (the same object on every call)."""
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}") from None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new round; ``seed`` (0..2**64-1) reseeds the game, else its generator goes on."""
        # The engine checks the seed before changing anything, so a bad seed leaves the env as it was.
        self._engine.reset(seed)
        agents = self.possible_agents[:]
        self.agents = agents
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in agents}
        self._skip_agent_selection = None  # a reset during the end-of-game steps must not leak it
        seat = int(self._engine.current_player[0])
        self._acting_seat = seat
        self.agent_selection = self._names[seat]
        if self._render_human:
            self.render()

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` for ``agent_selection``, with the acting agent's view read directly."""
        agent = self.agent_selection
        if not observe:
            obs = None
        elif agent is self._names[self._acting_seat]:
            obs = {"observation": self._obs_row.copy(), "action_mask": self._mask_row.copy()}
            if self.history:
                obs = self._with_history(obs, self._acting_seat)
        else:
            obs = self.observe(agent)
        return (
            obs,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s view: its observation vector and its legal-action mask (fresh arrays)."""
        try:
            seat = self._seat_of.get(agent, -1)
        except TypeError:  # unhashable
            seat = -1
        if seat == self._acting_seat:
            # The engine already wrote the acting seat's view during the step.
            obs = {"observation": self._obs_row.copy(), "action_mask": self._mask_row.copy()}
        elif seat < 0:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        else:
            obs = {"observation": self._engine.observe(seat)[0], "action_mask": np.zeros(NUM_ACTIONS, np.int8)}
        return self._with_history(obs, seat)

    def step(self, action: int | None) -> None:
        """Apply ``agent_selection``'s action (``None`` for an agent that is terminated/truncated)."""
        agent = self.agent_selection
        try:
            dead = self.terminations[agent] or self.truncations[agent]
        except KeyError:  # every agent has been stepped with None and removed
            raise ValueError(
                "step() called after every agent was terminated or truncated and removed; call reset()"
            ) from None
        if dead:
            self._was_dead_step(action)
            return
        self._play(agent, action)

    def _play(self, agent: str, action: Any) -> None:
        """One decision of the live agent ``agent`` (the engine's current player)."""
        if type(action) is not int:
            action = _as_action(agent, action)
        if not 0 <= action < NUM_ACTIONS:
            # The engine would take -1 as "leave this game alone"; here it is a mistake.
            raise ValueError(f"{agent}: action must be an action id in 0..{NUM_ACTIONS - 1}, got {action}")
        # The engine's one-game step: an int in, current_player + 256 * done out (batch.step_one).
        r = _step_one(self._buf, action)
        if r < 0:
            try:
                self._engine.raise_step_error(-r, np.array([action], np.int64))
            except ValueError as err:
                raise ValueError(f"{agent}: {err}") from None
        if self.history:
            self._code[0] = action
            _fold_history(self._buf, self._code)
        self._cumulative_rewards[agent] = 0.0
        seat = r & 255
        self._acting_seat = seat
        self.agent_selection = self._names[seat]
        if r >= 256:
            self._end_round(r < 512)
        if self._render_human:
            self.render()

    def _end_round(self, terminated: bool) -> None:
        rewards = self._rew_row
        for agent in self.agents:
            self.rewards[agent] = float(rewards[self._seat_of[agent]])
        done = dict.fromkeys(self.agents, True)
        if terminated:
            self.terminations = done
        else:
            self.truncations = done
        self._accumulate_rewards()
        self._deads_step_first()

    def render(self) -> str | np.ndarray | None:
        """Draw the table for ``render_mode``, showing only what the acting player may see."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        state = self._engine.game_state(0)
        if self.render_mode == "ansi":
            return render_text(state, self._names)
        if self.render_mode == "human":
            print(render_text(state, self._names, ansi_colors=True), end="\n\n")
            return None
        return render_rgb(state, self._names)

    def close(self) -> None:
        """Nothing to release: rendering keeps no window open."""

    # --- beyond PettingZoo ---------------------------------------------------------------------

    def state(self) -> np.ndarray:
        """The whole game in seat 0's frame, float32 [STATE_SIZE] (hidden information; class doc, *State*)."""
        return self._engine.state(0)[0]

    def game_state(self) -> dict[str, Any]:
        """The game as the engine's JSON-serialisable dict (schema: ``Engine.game_state``); holds every hand."""
        return self._engine.game_state(0)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes that do not exist, e.g. `agents` before reset().
        if name in _SET_BY_RESET:
            raise AttributeError(f"{name} cannot be accessed before reset; call reset() first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


raw_env.__doc__ = fill_doc(
    raw_env.__doc__ or "",
    S=STATE_SIZE,
    ACTIONS=action_table(),
    OBSERVATIONS=observation_table(),
    D=observation_size(False),
    D_OPEN=observation_size(True),
    H=HISTORY_SIZE,
    HC=HISTORY_COUNTS_SIZE,
    HT=HISTORY_TOKEN_SIZE,
)


def _as_action(agent: str, action: Any) -> int:
    """An action id from a NumPy integer or 0-d integer array; a clear ValueError otherwise."""
    if is_int(action):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return int(action)
    if action is None:
        raise ValueError(
            f"{agent} is not terminated or truncated, so its action cannot be None; "
            f"give an action id in 0..{NUM_ACTIONS - 1}"
        )
    raise ValueError(
        f"{agent}: action must be an integer action id in 0..{NUM_ACTIONS - 1}, got {action!r} "
        f"({type(action).__name__})"
    )


class CheckedEnv(raw_env):
    """What ``env()`` returns: ``raw_env`` behaving exactly as under PettingZoo's classic wrapper stack.

    Unlike the wrappers: ``unwrapped`` is the env itself, there is no ``.env``, private attributes are not blocked."""

    _has_reset = False  # OrderEnforcingWrapper: reset() was called (set on the instance by reset)
    _has_updated = False  # OrderEnforcingWrapper: step() or reset() since the last agent_iter item

    def __getattr__(self, name: str) -> Any:
        if name in _ORDER_ENFORCED and not self.__dict__.get("_has_reset", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        return raw_env.__getattr__(self, name)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new round (see ``raw_env.reset``)."""
        # Same order as the wrappers: flags first, so a bad seed still counts as a reset call.
        self._has_reset = True
        self._has_updated = True
        raw_env.reset(self, seed=seed, options=options)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s view (see ``raw_env.observe``); ``AssertionError`` before reset."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return raw_env.observe(self, agent)

    def render(self) -> str | np.ndarray | None:
        """Draw the table (see ``raw_env.render``); ``AssertionError`` before reset."""
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return raw_env.render(self)

    def state(self) -> np.ndarray:
        """The whole game in seat 0's frame (see ``raw_env.state``); ``AssertionError`` before reset."""
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return raw_env.state(self)

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """Iterate over ``agent_selection``; each item must be followed by ``step()``."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderEnforcingIterable(self, max_iter)

    def step(self, action: int | None) -> None:
        """Apply ``agent_selection``'s action, with the three wrappers' checks in their order."""
        # OrderEnforcingWrapper.step
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        # AssertOutOfBoundsWrapper.step. For a plain int, Discrete(116).contains is exactly
        # the range test; anything else takes the space's own (slower) verdict.
        assert (action is None and dead) or (
            (0 <= action < NUM_ACTIONS) if type(action) is int else self.action_spaces[agent].contains(action)
        ), "action is not in action space"
        # TerminateIllegalWrapper.step. Its mask is observe(agent_selection)["action_mask"],
        # i.e. a copy of _mask_row; indexing the same int8 values gives the same verdicts and
        # the same errors for odd actions (a bool indexes as a boolean mask and raises).
        if dead:
            # The wrapper calls _was_dead_step itself after an illegal move and leaves it to
            # raw_env.step otherwise, which does the same; so its "terminated by an illegal
            # move" flag changes nothing and is not kept here.
            self._was_dead_step(action)
            return
        if not self._mask_row[action]:
            EnvLogger.warn_on_illegal_move()
            self._cumulative_rewards[agent] = 0
            self.terminations = dict.fromkeys(self.agents, True)
            self.truncations = dict.fromkeys(self.agents, True)
            self.rewards = dict.fromkeys(self.truncations, 0)
            self.rewards[agent] = float(ILLEGAL_REWARD)
            self._accumulate_rewards()
            self._deads_step_first()
            return
        self._play(agent, action)


class _OrderEnforcingIterable(AECIterable):
    def __iter__(self) -> _OrderEnforcingIterator:
        return _OrderEnforcingIterator(self.env, self.max_iter)


class _OrderEnforcingIterator(AECIterator):
    """``AECOrderEnforcingIterator``: every item must be followed by ``step()`` (or ``reset()``)."""

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        agent = env.agent_selection
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return agent


def _with_max_cycles(rules: UnoRules, num_players: Any, max_cycles: Any) -> UnoRules:
    """``rules`` with ``max_turns = max_cycles * num_players`` (PettingZoo's keyword), or as they are."""
    if max_cycles is None:
        return rules
    if not is_int(max_cycles) or max_cycles < 1:
        raise ValueError(
            f"max_cycles must be None or an integer >= 1 (cycles of every seat acting), got {max_cycles!r}"
        )
    if not is_int(num_players):
        return rules  # the engine reports the bad num_players
    return rules.replace(max_turns=int(max_cycles) * int(num_players))


def env(*args: Any, **kwargs: Any) -> CheckedEnv:
    """The ``uno_v0`` AEC env with PettingZoo's classic checks built in: ``CheckedEnv`` of ``raw_env``'s arguments."""
    return CheckedEnv(*args, **kwargs)


def parallel_env(*args: Any, **kwargs: Any) -> turn_based_aec_to_parallel_wrapper:
    """The ``uno_v0`` game under PettingZoo's Parallel API (``turn_based_aec_to_parallel`` over ``env()``), of
    ``raw_env``'s arguments."""
    return turn_based_aec_to_parallel_wrapper(CheckedEnv(*args, **kwargs))
