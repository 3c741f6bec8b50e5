"""Training-pipeline throughput: PettingZoo's SB3 action-masking tutorial setup vs our batched vector env."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks._timing import interleave, summarize

# Two PPO settings, each run by both pipelines (same network: MaskableActorCriticPolicy's default).
# "tutorial defaults": what the tutorial gets (MaskablePPO's defaults: rollout 2048, minibatch 64,
# 10 epochs). "large batch": minibatches and epochs a batched env is trained with (train.py
# uses minibatch 4096 and 4 epochs), scaled to a rollout the one-env tutorial setup can fill in
# a few seconds. Ours fills the rollout with ``num_envs`` games x ``n_steps``.
SETTINGS: dict[str, dict[str, Any]] = {
    "tutorial defaults": dict(rollout=2048, batch_size=64, n_epochs=10, learning_rate=3e-4, num_envs=64),
    "large batch": dict(rollout=4096, batch_size=1024, n_epochs=4, learning_rate=3e-4, num_envs=256),
}


def _tutorial_wrapper_class():
    """The wrapper class (built on first use: pettingzoo and gymnasium import only then)."""
    import gymnasium
    import pettingzoo.utils

    class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
        """The tutorial's wrapper: an AEC env seen as one gymnasium env whose agent is whoever acts next."""

        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            # SB3 wants one observation and action space: every agent's are the same here.
            self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
            self.action_space = super().action_space(self.possible_agents[0])
            return self.observe(self.agent_selection), {}

        def step(self, action):
            # Observation of the next agent; reward and ends of the agent that just acted.
            current = self.agent_selection
            super().step(action)
            return (
                self.observe(self.agent_selection),
                self._cumulative_rewards[current],
                self.terminations[current],
                self.truncations[current],
                self.infos[current],
            )

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self):
            return super().observe(self.agent_selection)["action_mask"]

    return SB3ActionMaskWrapper


def tutorial_env(num_players: int = 2, seed: int = 0):
    """One ``uno_env.env()`` in the tutorial's wrappers, ready for ``MaskablePPO``."""
    from sb3_contrib.common.wrappers import ActionMasker

    import uno_env

    env = _tutorial_wrapper_class()(uno_env.env(num_players=num_players))
    env.reset(seed=seed)  # the tutorial resets once so that the spaces exist
    return ActionMasker(env, lambda e: e.action_mask())


class PipelineBench:
    """One MaskablePPO model on its env; ``run(timesteps)`` times one ``learn``."""

    def __init__(self, label: str, make_env: Callable[[], Any], ppo: dict[str, Any], seed: int) -> None:
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        self.impl, self.ppo = label, ppo
        self.env = make_env()
        self.model = MaskablePPO(MaskableActorCriticPolicy, self.env, seed=seed, verbose=0, device="cpu", **ppo)
        self.train_seconds = 0.0
        self.rollouts = 1
        self.update_seconds: list[float] = []
        train = self.model.train

        def timed_train() -> None:
            t = time.perf_counter()
            train()
            self.train_seconds += time.perf_counter() - t

        self.model.train = timed_train

    @property
    def rollout_size(self) -> int:
        return self.model.n_steps * self.model.n_envs

    def chunk(self) -> int:
        """One ``learn`` of ``rollouts`` rollouts (a bench of ``benchmarks._timing``); its seconds in PPO
        updates are appended to ``update_seconds``."""
        self.train_seconds = 0.0
        self.model.learn(self.rollouts * self.rollout_size, reset_num_timesteps=True)
        self.update_seconds.append(self.train_seconds)
        return int(self.model.num_timesteps)


def make_benches(settings: dict[str, dict[str, Any]], seed: int) -> list[PipelineBench]:
    """For each setting: the tutorial pipeline, then ours (its ``num_envs`` games share the rollout)."""
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    benches = []
    for name, s in settings.items():
        n = s["num_envs"]
        if s["rollout"] % n:
            raise ValueError(f"num_envs must divide the rollout size {s['rollout']} (setting {name!r}), got {n}")
        ppo = {k: v for k, v in s.items() if k not in ("rollout", "num_envs")}
        benches.append(
            PipelineBench(
                f"tutorial: 1 AEC env, {name}", lambda: tutorial_env(2, seed), dict(ppo, n_steps=s["rollout"]), seed
            )
        )
        benches.append(
            PipelineBench(
                f"uno_env: UnoSB3VecEnv {n} games, {name}",
                lambda n=n: UnoSB3VecEnv(n, 2, seed=seed),
                dict(ppo, n_steps=s["rollout"] // n),
                seed,
            )
        )
        benches[-2].setting = benches[-1].setting = name
    return benches


def measure_pipeline(
    benches: list[PipelineBench], runs: int, rollouts: int, log: Callable[[str], None] | None = None
) -> list[dict[str, Any]]:
    """Interleaved runs of ``rollouts`` rollouts+updates each (one warm-up learn first); one row per bench."""
    for b in benches:
        b.chunk()  # warm-up (one rollout): numba cache, torch kernels, first allocations
        b.rollouts, b.update_seconds = rollouts, []
    rows = []
    for b, m in zip(benches, interleave(benches, runs, 0.0, log=log), strict=True):
        t = b.update_seconds
        row = {
            "impl": b.impl,
            "setting": b.setting,
            "ppo": dict(b.ppo),
            "num_envs": b.model.n_envs,
            "rollout_size": b.rollout_size,
            "timesteps_per_run": m[0].steps,
            **summarize(m),
        }
        rollout_rates = [x.steps / max(x.seconds - u, 1e-9) for x, u in zip(m, t, strict=True)]
        row["rollout_steps_per_s"] = float(np.median(rollout_rates))
        row["update_share"] = float(np.median([u / x.seconds for x, u in zip(m, t, strict=True)]))
        rows.append(row)
    return rows
