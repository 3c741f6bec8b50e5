"""``PolicyNet``: a saved ``MaskablePPO`` policy's actor run in numpy, read from its ``.zip`` without torch.

The search's blueprint plays where only the base package is installed. ``policy.pth`` is read by an
unpickler that builds only an ordered dict and float tensors, so a file cannot run code. Models that
read history (a Dict observation) are refused.
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda h: np.maximum(h, 0.0),
    "tanh": np.tanh,
    "silu": lambda h: h / (1.0 + np.exp(-h)),
}
"""The trunk's and head's activations by ``train.py --activation`` name, in numpy."""


class _Float32:
    """What the pickle's ``torch FloatStorage`` stands for: a float32 buffer."""


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple, stride: tuple, *_: Any) -> np.ndarray:
    view = np.lib.stride_tricks.as_strided(
        storage[offset:], shape=tuple(size), strides=tuple(s * storage.itemsize for s in stride)
    )
    return np.array(view, np.float32)


class _StateDictUnpickler(pickle.Unpickler):
    """Reads a torch state dict of float tensors into numpy arrays; refuses every other object."""

    ALLOWED = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
        ("torch", "FloatStorage"): _Float32,
    }

    def __init__(self, data: bytes, archive: zipfile.ZipFile, prefix: str) -> None:
        super().__init__(io.BytesIO(data))
        self.archive, self.prefix = archive, prefix

    def find_class(self, module: str, name: str) -> Any:
        found = self.ALLOWED.get((module, name))
        if found is None:
            raise ValueError(f"the policy's weights hold a {module}.{name}: only float tensors are read")
        return found

    def persistent_load(self, pid: Any) -> np.ndarray:
        kind, storage_type, key, _location, numel = pid
        if kind != "storage" or storage_type is not _Float32:
            raise ValueError(f"the policy's weights hold a {kind} of {storage_type}: only float tensors are read")
        raw = self.archive.read(f"{self.prefix}/data/{key}")
        return np.frombuffer(raw, "<f4", count=int(numel))


def read_state_dict(model_zip: str | Path) -> dict[str, np.ndarray]:
    """The policy's weights (``policy.pth`` in a ``MaskablePPO`` zip) as float32 arrays by name."""
    with zipfile.ZipFile(model_zip) as outer:
        inner = zipfile.ZipFile(io.BytesIO(outer.read("policy.pth")))
    (pickled,) = [n for n in inner.namelist() if n.endswith("/data.pkl")]
    prefix = pickled[: -len("/data.pkl")]
    order = (
        inner.read(f"{prefix}/byteorder").decode().strip() if f"{prefix}/byteorder" in inner.namelist() else "little"
    )
    if order != "little":
        raise ValueError(f"{model_zip}: the weights are {order}-endian; only little-endian files are read")
    return dict(_StateDictUnpickler(inner.read(pickled), inner, prefix).load())


class PolicyNet:
    """A saved ``MaskablePPO`` policy's actor in numpy: ``logits(observation)``, ``act(observation, mask)``.

    ``activation``: the one it was trained with (its card's ``train_args``); the widths are read from the file.
    """

    def __init__(self, model_zip: str | Path, activation: str = "relu") -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.activation = ACTIVATIONS[activation]
        weights = read_state_dict(model_zip)
        if "pi_features_extractor.scale" not in weights:
            raise ValueError(f"{model_zip}: not a policy of train.py's (no pi_features_extractor.scale)")
        self.scale = weights["pi_features_extractor.scale"]
        self.obs_size = self.scale.size
        self.hidden = self._layers(weights, "pi_features_extractor.trunk.") + self._layers(
            weights, "mlp_extractor.policy_net."
        )
        self.out = (weights["action_net.weight"].T.copy(), weights["action_net.bias"])

    @staticmethod
    def _layers(weights: dict[str, np.ndarray], prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """The linear layers under ``prefix``, in order (each followed by the activation)."""
        index = sorted({int(k[len(prefix) :].split(".")[0]) for k in weights if k.startswith(prefix)})
        return [(weights[f"{prefix}{i}.weight"].T.copy(), weights[f"{prefix}{i}.bias"]) for i in index]

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Unmasked action logits, float32 [B, actions], for observations [B, obs_size]."""
        h = np.asarray(observation, np.float32)
        if h.ndim != 2 or h.shape[1] != self.obs_size:
            raise ValueError(f"observation must be [B, {self.obs_size}], got shape {h.shape}")
        h = h * self.scale
        for w, b in self.hidden:
            h = self.activation(h @ w + b)
        w, b = self.out
        return h @ w + b

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The most likely legal action per row, int64 [B] (-1 where no action is legal)."""
        mask = np.asarray(action_mask, bool)
        scores = np.where(mask, self.logits(observation), -np.inf)
        out = scores.argmax(1).astype(np.int64)
        out[~mask.any(1)] = -1
        return out
