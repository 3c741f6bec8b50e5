"""The masking RLModule: RLlib's default PPO network with the logits of illegal actions at the lowest float.

After RLlib's action-masking example: the network sees ``observations``, each index divided by its
bound (``uno_env.spaces.observation_bounds``; 1 where infinite or below 1), a buffer saved with the
module; ``log(mask)`` clamped at ``FLOAT_MIN`` is added to the logits."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN

__all__ = ["MaskedPPOTorchRLModule"]


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch module over ``observations``, logits masked by ``action_mask``."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space.spaces) != {
            "observations",
            "action_mask",
        }:
            raise ValueError(
                "MaskedPPOTorchRLModule needs a Dict observation space with keys 'observations' and "
                f"'action_mask', got {observation_space}"
            )
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observations"], **kwargs)

    def setup(self) -> None:
        super().setup()
        box = self.observation_space
        assert isinstance(box, gym.spaces.Box), box  # the "observations" entry, checked in __init__
        bound = np.maximum(np.abs(box.low), np.abs(box.high))
        scale = np.where(np.isfinite(bound) & (bound > 1.0), bound, 1.0).astype(np.float32)
        self.register_buffer("obs_scale", torch.from_numpy(scale), persistent=False)
        # RLlib's connectors read the module's space: the env's, mask included.
        self.observation_space = self.observation_space_with_mask

    def _split(self, batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        obs = batch[Columns.OBS]
        batch = dict(batch)
        batch[Columns.OBS] = obs["observations"] / self.obs_scale
        return obs["action_mask"], batch

    @staticmethod
    def _mask(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(torch.log(mask), min=FLOAT_MIN)
        return out

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._mask(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if isinstance(batch[Columns.OBS], dict):
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)
