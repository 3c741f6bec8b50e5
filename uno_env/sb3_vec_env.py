"""``UnoSB3VecEnv``: the batched env behind stable-baselines3's ``VecEnv`` API, for MaskablePPO (docs/sb3-rllib.md)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs

from .cards import NUM_CARD_TYPES
from .checks import is_int
from .gym_env import UnoVectorEnv
from .observation import STATE_DRAW_PILE, STATE_OTHER_HANDS, STATE_TO_ACT
from .spaces import state_bounds

__all__ = ["UnoSB3VecEnv"]


def hidden_columns(num_players: int) -> np.ndarray:
    """The columns of ``Engine.state`` a privileged critic gets beside the observation, for the seats at the table."""
    return np.concatenate(
        [
            np.arange(STATE_OTHER_HANDS, STATE_OTHER_HANDS + (num_players - 1) * NUM_CARD_TYPES),
            np.arange(STATE_DRAW_PILE, STATE_DRAW_PILE + NUM_CARD_TYPES),
            np.arange(STATE_TO_ACT, STATE_TO_ACT + num_players),
        ]
    )


def _game_indices(indices: None | int | Iterable[int], num_envs: int) -> list[int]:
    """SB3's ``indices`` argument as a list of game indices, else a ValueError naming what was given."""
    if indices is None:
        return list(range(num_envs))
    idx = [indices] if is_int(indices) else list(cast("Iterable[int]", indices))
    for i in idx:
        if not is_int(i) or not 0 <= i < num_envs:
            raise ValueError(f"indices must be game indices in 0..{num_envs - 1}, got {indices!r}")
    return [int(i) for i in idx]


class UnoSB3VecEnv(VecEnv):
    """stable-baselines3 ``VecEnv`` over one ``UnoVectorEnv``: ``num_envs`` games of one engine."""

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int = 2,
        rules: Any = None,
        learner_seat: int | str = 0,
        opponents: Any = None,
        seed: int | None = None,
        privileged: bool = False,
        history: int = 0,
        history_form: str = "rows",
        threads: int = 1,
        reward: str = "win",
    ) -> None:
        if not isinstance(privileged, bool):
            raise ValueError(f"privileged must be True or False, got {privileged!r}")
        if privileged and history:
            raise ValueError(
                f"privileged=True and history={history!r} cannot be combined (the privileged critic reads one "
                "flat observation); use one of them"
            )
        self.venv = UnoVectorEnv(
            num_envs,
            num_players,
            rules=rules,
            learner_seat=learner_seat,
            opponents=opponents,
            copy=True,
            autoreset_mode="same_step",  # SB3's VecEnv convention: reset in the step, terminal obs in infos
            history=history,
            history_form=history_form,
            threads=threads,
            reward=reward,
        )
        self.render_mode = None  # read by VecEnv.__init__ through get_attr
        self.privileged = privileged
        self.actor_inputs = self.venv.engine.observation_size
        obs_space = self.venv.single_observation_space
        assert isinstance(obs_space, (spaces.Box, spaces.Dict))
        self._hidden = hidden_columns(self.venv.num_players)
        if privileged:
            assert isinstance(obs_space, spaces.Box)
            low, high = state_bounds(self.venv.rules, self.venv.num_players)
            obs_space = spaces.Box(
                np.concatenate([obs_space.low, low[self._hidden]]),
                np.concatenate([obs_space.high, high[self._hidden]]),
                dtype=np.float32,
            )
            self.venv.driver.keep_final_states = True
        super().__init__(self.venv.num_envs, obs_space, self.venv.single_action_space)
        if seed is not None:
            self.seed(seed)
        self._actions: np.ndarray | None = None
        self._ep_return = np.zeros(self.num_envs, np.float64)
        self._ep_length = np.zeros(self.num_envs, np.int64)
        self._t0 = time.time()
        self._reset_done = False

    # --- stepping -------------------------------------------------------------------------

    def reset(self) -> VecEnvObs:
        """Deal every game (with the seeds given to ``seed()``, if any) and return the observations."""
        seeds = [int(s) for s in self._seeds if s is not None] or None  # SB3 sets all seeds or none
        obs, infos = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._ep_return[:] = 0.0
        self._ep_length[:] = 0
        self._reset_done = True
        return self._with_state(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Store the learner's actions (one per game) for ``step_wait``."""
        self._actions = actions

    def step_wait(self) -> tuple[VecEnvObs, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every game; finished games are dealt anew (``terminal_observation`` in infos)."""
        if self._actions is None:
            raise ValueError("step_wait() needs step_async(actions) first")
        if not self._reset_done:
            raise ValueError("call reset() before step()")
        actions = np.asarray(self._actions)
        if actions.ndim == 2 and actions.shape[1] == 1:
            actions = actions[:, 0]  # SB3 may hand Discrete actions as a column
        self._actions = None
        obs, rewards, terminated, truncated, vinfos = self.venv.step(actions)
        dones = terminated | truncated
        self._ep_return += rewards
        self._ep_length += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final_obs = vinfos["final_obs"]
            elapsed = round(time.time() - self._t0, 6)
            # Only the finished games get entries: a loop over them, not over the batch.
            finals = self.venv.driver.final_states if self.privileged else None
            won = vinfos["final_info"]["won"]
            for i in np.flatnonzero(dones):
                terminal = final_obs[i]
                if finals is not None:
                    terminal = np.concatenate([terminal, finals[i, self._hidden]])
                infos[i] = {
                    "terminal_observation": terminal,
                    "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                    "is_success": bool(won[i]),  # SB3's key; the learner won, whatever the reward
                    "episode": {"r": float(self._ep_return[i]), "l": int(self._ep_length[i]), "t": elapsed},
                }
            self._ep_return[dones] = 0.0
            self._ep_length[dones] = 0
        return self._with_state(obs), rewards, dones, infos  # rewards: a fresh float32 array of the vector env

    def _with_state(self, obs: Any) -> VecEnvObs:
        """The observations, followed with ``privileged`` by the hidden part of each learner's state."""
        if not self.privileged:
            return obs
        return np.concatenate([obs, self.venv.state()[:, self._hidden]], axis=1)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions per game, bool [num_envs, 116]."""
        return self.venv.action_masks()

    @property
    def group_of(self) -> np.ndarray:
        """Each game's opponent group (int64 [num_envs]; all 0 without groups)."""
        return self.venv.group_of

    def set_opponents(self, opponents: Any, group: int = 0) -> None:
        """Replace the opponents of one group (one agent or ``num_players - 1``); they play from the next step."""
        self.venv.set_opponents(opponents, group)

    def close(self) -> None:
        """Close the vector env."""
        self.venv.close()

    # --- attributes shared by the games --------------------------------------------------

    def _indices(self, indices: None | int | Iterable[int]) -> list[int]:
        return _game_indices(indices, self.num_envs)

    def get_attr(self, attr_name: str, indices: None | int | Iterable[int] = None) -> list[Any]:
        """The vector env's attribute, once per requested game (the games share it)."""
        if attr_name == "render_mode":
            value = self.render_mode
        elif attr_name == "action_masks":
            value = self.action_masks
        else:
            value = getattr(self.venv, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: None | int | Iterable[int] = None) -> None:
        """Set an attribute of the vector env (every game shares it; a subset is refused)."""
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError(
                f"set_attr({attr_name!r}) applies to all {self.num_envs} games at once (they share one "
                f"engine); got indices={indices!r}"
            )
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: None | int | Iterable[int] = None, **method_kwargs: Any
    ) -> list[Any]:
        """``action_masks``: one mask per game; any other method: called once, repeated per game."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return list(masks[idx]) if indices is not None else list(masks)
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class: type, indices: None | int | Iterable[int] = None) -> list[bool]:
        """False per game: no gymnasium wrapper can sit on a game of the shared engine."""
        return [False] * len(self._indices(indices))

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds for the next ``reset``: game i gets ``seed + i`` (a random base when None)."""
        if seed is not None and (not is_int(seed) or seed < 0):
            raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")
        return super().seed(None if seed is None else int(seed))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No images: render one game with ``UnoEnv(render_mode="ansi")``."""
        return [None] * self.num_envs
