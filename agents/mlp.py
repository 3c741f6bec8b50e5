"""``NumpyMLP``: a small trained MLP run in numpy (no torch at play time), and its file format.

The shipped networks (the belief network, the opponent model) are saved by ``save_mlp`` as an
``.npz`` of float16 arrays: the input standardisation (``mean``, ``scale``) and each layer's
weight and bias; ``NumpyMLP`` loads one and runs it with ReLU between layers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class NumpyMLP:
    """A network written by ``save_mlp``, run in float32 numpy."""

    def __init__(self, path: str | Path, what: str, trained_by: str) -> None:
        """Load ``path``; ``what`` it is and ``trained_by``, the command that writes it, are for
        the error when it is missing."""
        if not Path(path).is_file():
            raise ValueError(f"no {what} at {str(path)!r}: give the .npz that `{trained_by}` writes")
        with np.load(path) as f:
            self.mean, self.scale = f["mean"].astype(np.float32), f["scale"].astype(np.float32)
            self.layers = [
                (f[f"w{i}"].astype(np.float32), f[f"b{i}"].astype(np.float32)) for i in range(int(f["depth"]))
            ]
        self.num_features = self.mean.size

    def forward(self, x: np.ndarray) -> np.ndarray:
        """The last layer's output [N, out] for inputs ``x`` [N, num_features]."""
        h = (np.asarray(x, np.float32) - self.mean) * self.scale
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                np.maximum(h, 0.0, out=h)
        return h


def save_mlp(path: str | Path, mean: np.ndarray, scale: np.ndarray, layers: list[tuple[Any, Any]]) -> None:
    """Write a network ``NumpyMLP`` loads (float16: the shipped files stay small)."""
    arrays = {"mean": mean.astype(np.float16), "scale": scale.astype(np.float16), "depth": np.int64(len(layers))}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = np.asarray(w, np.float16), np.asarray(b, np.float16)
    np.savez_compressed(path, **arrays)
