"""UNO for RLlib's new API stack: a ``MultiAgentEnv`` (every seat an agent) and a batched vector env
that steps all of an env runner's games in one ``Engine`` call (docs/sb3-rllib.md)."""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
from ray.rllib.utils.typing import MultiAgentDict

from ..actions import NUM_ACTIONS
from ..engine import Engine
from ..rules import UnoRules, parse_rules
from ..spaces import observation_space

__all__ = ["UnoMultiAgentEnv", "UnoVectorMultiAgentEnv", "UnoEnvRunner", "agent_id", "spaces"]


def agent_id(seat: int) -> str:
    """The RLlib agent id of a seat: ``player_<seat>``, the PettingZoo env's name for it."""
    return f"player_{seat}"


def spaces(rules: UnoRules, num_players: int) -> tuple[gym.spaces.Dict, gym.spaces.Discrete]:
    """``(observation space, action space)`` of one agent."""
    obs = gym.spaces.Dict(
        {
            "observations": observation_space(rules, num_players),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
        }
    )
    return obs, gym.spaces.Discrete(NUM_ACTIONS)


def _settings(config: Any) -> tuple[int, UnoRules, int]:
    worker = int(getattr(config, "worker_index", 0) or 0)
    config = dict(config or {})
    unknown = set(config) - {"num_players", "rules", "seed"}
    if unknown:
        raise ValueError(f"unknown env_config keys {sorted(unknown)}; allowed: num_players, rules, seed")
    seed = int(config.get("seed", 0)) + 1_000_003 * worker
    return int(config.get("num_players", 2)), parse_rules(config.get("rules", "classic")), seed


class _Games:
    """``num_envs`` games in one ``Engine``, as RLlib's per-game dicts."""

    def __init__(self, num_envs: int, num_players: int, rules: UnoRules, seed: int) -> None:
        self.engine = Engine(num_envs, num_players, rules, seed=seed)
        self.P = num_players
        self.aids = [agent_id(s) for s in range(num_players)]
        self.actions = np.full(num_envs, -1, np.int64)
        self.zero_mask = np.zeros(NUM_ACTIONS, np.float32)

    def _to_act(self, games: np.ndarray) -> list[dict[str, dict[str, np.ndarray]]]:
        obs = self.engine.observation.copy()  # the engine overwrites its buffers on the next call
        mask = self.engine.legal_mask.astype(np.float32)
        cur = self.engine.current_player
        return [{self.aids[cur[g]]: {"observations": obs[g], "action_mask": mask[g]}} for g in games]

    def reset(self, seed: int | None = None, games: np.ndarray | None = None) -> list[dict]:
        self.engine.reset(seed=seed, games=games)
        return self._to_act(np.arange(self.engine.num_envs) if games is None else games)

    def step(self, actions: list[MultiAgentDict], skip: np.ndarray) -> tuple[list, list, list, list]:
        """Step every game not in ``skip`` with its one action; per-game obs, rewards, terminateds, truncateds."""
        e = self.engine
        cur = e.current_player
        self.actions.fill(-1)
        for g, d in enumerate(actions):
            if skip[g] or not d:
                continue
            if len(d) != 1:
                raise ValueError(f"game {g}: one action per step, by {self.aids[cur[g]]} (the player to act), got {d}")
            ((aid, a),) = d.items()
            if aid != self.aids[cur[g]]:
                raise ValueError(f"game {g}: {aid} acted but {self.aids[cur[g]]} is to act")
            self.actions[g] = a
        acted = cur.copy()
        e.step(self.actions)
        live = np.flatnonzero(~skip)
        done = e.terminated | e.truncated
        obs: list[dict] = [{} for _ in actions]
        for g, o in zip(live[~done[live]], self._to_act(live[~done[live]]), strict=True):
            obs[g] = o
        rewards = [{self.aids[acted[g]]: 0.0} if self.actions[g] >= 0 else {} for g in range(len(actions))]
        terms = [{"__all__": False} for _ in actions]
        truncs = [{"__all__": False} for _ in actions]
        ended = np.flatnonzero(done & ~skip)
        if ended.size:
            finals = [e.observe(s)[ended] for s in range(self.P)]
            for k, g in enumerate(ended.tolist()):
                obs[g] = {
                    a: {"observations": finals[s][k], "action_mask": self.zero_mask} for s, a in enumerate(self.aids)
                }
                rewards[g] = {a: float(e.rewards[g, s]) for s, a in enumerate(self.aids)}
                flags = terms[g] if e.terminated[g] else truncs[g]
                flags.update({a: True for a in self.aids}, __all__=True)
        return obs, rewards, terms, truncs


class UnoMultiAgentEnv(MultiAgentEnv):
    """One UNO game for RLlib, every seat an agent: ``register_env("uno", UnoMultiAgentEnv)``."""

    def __init__(self, config: Any = None) -> None:
        super().__init__()
        num_players, self.rules, seed = _settings(config)
        self.agents = self.possible_agents = [agent_id(s) for s in range(num_players)]
        obs_space, act_space = spaces(self.rules, num_players)
        self.observation_spaces = {a: obs_space for a in self.agents}
        self.action_spaces = {a: act_space for a in self.agents}
        self._games = _Games(1, num_players, self.rules, seed)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        return self._games.reset(seed)[0], {}

    # RLlib's MultiAgentEnv.step returns five dicts where its base, gymnasium's Env, types a
    # single agent's tuple: RLlib's own signature, which mypy cannot reconcile with gymnasium's.
    def step(  # type: ignore[override]
        self, action_dict: MultiAgentDict
    ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
        obs, rewards, terms, truncs = self._games.step([action_dict], np.zeros(1, bool))
        return obs[0], rewards[0], terms[0], truncs[0], {}


class UnoVectorMultiAgentEnv(VectorMultiAgentEnv):
    """``num_envs`` games stepped by one ``Engine`` call, with ``next_step`` autoreset."""

    def __init__(self, num_envs: int, config: Any = None) -> None:
        super().__init__()
        self.spec_env = UnoMultiAgentEnv(config)
        num_players, rules, seed = _settings(config)
        self.num_envs = int(num_envs)
        # RLlib reads the agents and spaces of each game from `envs`; all games share them.
        self.envs = [self.spec_env] * self.num_envs
        self.metadata = {"autoreset_mode": "next_step"}
        # The spaces of one game, keyed by agent id (str; RLlib's MultiAgentEnv types them Hashable).
        self.single_observation_spaces = cast(dict[str, gym.Space], self.spec_env.observation_spaces)
        self.single_action_spaces = cast(dict[str, gym.Space], self.spec_env.action_spaces)
        self.single_observation_space = gym.spaces.Dict(self.single_observation_spaces)
        self.single_action_space = gym.spaces.Dict(self.single_action_spaces)
        self._games = _Games(self.num_envs, num_players, rules, seed)
        self._autoreset = np.zeros(self.num_envs, bool)

    # VectorMultiAgentEnv types reset and step with a free TypeVar, which no concrete type matches.
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[list, list]:  # type: ignore[override]
        self._autoreset[:] = False
        return self._games.reset(seed), [{} for _ in range(self.num_envs)]

    def step(self, actions: list[MultiAgentDict]) -> tuple[list, list, list, list, list]:  # type: ignore[override]
        obs, rewards, terms, truncs = self._games.step(actions, self._autoreset)
        restart = np.flatnonzero(self._autoreset)
        if restart.size:
            for g, o in zip(restart, self._games.reset(games=restart), strict=True):
                obs[g] = o
        self._autoreset = np.array([t["__all__"] for t in terms]) | np.array([t["__all__"] for t in truncs])
        return obs, rewards, terms, truncs, [{} for _ in range(self.num_envs)]

    def close_extras(self, **kwargs: Any) -> None:
        pass


class UnoEnvRunner(MultiAgentEnvRunner):
    """RLlib's ``MultiAgentEnvRunner`` over one ``UnoVectorMultiAgentEnv``."""

    def make_env(self) -> None:
        from ray.rllib.env.env_context import EnvContext

        if self.env is not None:
            self.env.close()
        ctx = EnvContext(
            self.config.env_config, worker_index=self.worker_index, num_workers=self.config.num_env_runners
        )
        self.env = UnoVectorMultiAgentEnv(self.config.num_envs_per_env_runner, ctx)
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
