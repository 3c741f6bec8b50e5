"""Agents and RLlib: a checkpoint as an ``Agent`` (``RLlibAgent``), baselines as RLlib modules
(``AgentRLModule``) and the self-play policy mapping of ``train.py --backend rllib`` (``SelfPlayMapping``).

Needs ``ray[rllib]`` and torch (the ``distributed`` extra).
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from uno_env.rules import parse_rules

from .baselines import BASELINES

__all__ = ["RLlibAgent", "AgentRLModule", "SelfPlayMapping", "LEARNER", "SNAPSHOT", "module_path"]

LEARNER = "learner"
"""module id of the policy being trained"""
SNAPSHOT = "snapshot"
"""module id of the frozen copy of the learner (self-play opponent, refreshed during training)"""


def module_path(path: str, module_id: str = LEARNER) -> str:
    """The directory of module ``module_id`` inside an algorithm checkpoint (or ``path`` itself
    when it already is a module directory)."""
    inside = os.path.join(path, "learner_group", "learner", "rl_module", module_id)
    if os.path.isdir(inside):
        return inside
    if os.path.isfile(os.path.join(path, "class_and_ctor_args.pkl")) and not os.path.isdir(
        os.path.join(path, "learner_group")
    ):
        return path
    raise ValueError(
        f"no RLlib checkpoint of module {module_id!r} at {path!r}: expected a directory written by "
        f"'train.py --backend rllib' (<run>/checkpoint) or its learner_group/learner/rl_module/{module_id}"
    )


def _numpy(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


class RLlibAgent:
    """The ``learner`` module of a ``train.py --backend rllib`` checkpoint as an ``Agent``.

    ``path``: a checkpoint or module directory; ``module`` instead: a live module. ``deterministic``:
    the most likely legal action, else sampled with ``act``'s ``rng``.
    """

    def __init__(
        self, path: str | None = None, deterministic: bool = True, name: str | None = None, module: Any = None
    ) -> None:
        if (path is None) == (module is None):
            raise ValueError("RLlibAgent needs exactly one of path (a checkpoint directory) or module")
        if module is None:
            assert path is not None  # one of the two, checked above
            module = RLModule.from_checkpoint(module_path(path))
            if name is None:
                # runs/<run>/checkpoint is named after its run.
                parent, leaf = os.path.split(os.path.abspath(path))
                name = os.path.basename(parent) if leaf == "checkpoint" else leaf
        self.module = module
        self.deterministic = bool(deterministic)
        self.name = name or "rllib"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action id per row (int64 [B])."""
        mask = np.asarray(action_mask, bool)
        if mask.ndim != 2 or observation.shape[0] != mask.shape[0] or not mask.any(1).all():
            raise ValueError(
                f"RLlibAgent needs observation [B, D] and action_mask [B, A] with a legal action per row, "
                f"got {np.shape(observation)} and {mask.shape}"
            )
        batch = {
            Columns.OBS: {
                "observations": torch.as_tensor(np.asarray(observation, np.float32)),
                "action_mask": torch.as_tensor(mask.astype(np.float32)),
            }
        }
        with torch.no_grad():
            logits: np.ndarray = _numpy(self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]).astype(
                np.float64
            )
        logits = np.where(mask, logits, -np.inf)
        if self.deterministic:
            return logits.argmax(1).astype(np.int64)
        # Inverse-CDF sampling with the caller's generator: reproducible from the rng.
        p = np.exp(logits - logits.max(1, keepdims=True))
        cdf = np.cumsum(p, 1)
        u = np.asarray(rng.random(mask.shape[0]))[:, None] * cdf[:, -1:]
        return np.minimum((cdf <= u).sum(1), mask.shape[1] - 1).astype(np.int64)


class AgentRLModule(RLModule):
    """A baseline agent as a (non-learning) RLlib module: ``model_config={"agent", "rules", "seed"}``."""

    def setup(self) -> None:
        config: dict[str, Any] = dict(self.model_config or {})  # type: ignore[arg-type]
        name = config.get("agent", "random")
        if name not in BASELINES:
            raise ValueError(f"AgentRLModule plays a baseline, one of {sorted(BASELINES)}; got {name!r}")
        self.agent = BASELINES[name](parse_rules(config.get("rules", {})))
        self.rng = np.random.default_rng(config.get("seed", 0))

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        actions = self.agent.act(_numpy(obs["observations"]), _numpy(obs["action_mask"]) > 0, self.rng)
        return {Columns.ACTIONS: np.asarray(actions, np.int64)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.agent.name} is a fixed agent: leave it out of policies_to_train")


class SelfPlayMapping:
    """Agent id -> module id per episode: seat ``crc(episode, seed) % P`` is the ``learner``, the
    others play one opponent module drawn by ``mix`` (``{module_id: weight}``) from the same hash.
    A function of the episode id only, so every seat of a game agrees."""

    def __init__(self, num_players: int, mix: dict[str, float], seed: int = 0) -> None:
        total = float(sum(mix.values()))
        if not mix or total <= 0 or min(mix.values()) < 0:
            raise ValueError(f"the opponent mix needs non-negative weights with a positive sum, got {mix}")
        self.num_players, self.seed = int(num_players), int(seed)
        self.ids = list(mix)
        self.cdf = np.cumsum([mix[k] / total for k in self.ids])

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        h = zlib.crc32(f"{self.seed}:{episode.id_}".encode())
        seat = int(str(agent_id).rsplit("_", 1)[1])
        if seat == h % self.num_players:
            return LEARNER
        u = (h // self.num_players % 10_007) / 10_007
        return self.ids[min(int(np.searchsorted(self.cdf, u, side="right")), len(self.ids) - 1)]
