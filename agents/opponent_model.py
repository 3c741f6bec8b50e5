"""``OpponentModel``: what a seat of the ladder does, learned by behaviour cloning (the ``replay`` belief's model).

An MLP over the seat's observation (2 players, classic) gives logits over the 116 actions; its
softmax over the legal ones is the chance the seat takes each. It is trained by
``python -m training.opponent_model`` on the decisions of the ladder's agents (``heuristic``,
``rlcard_rule``, ``greedy``) in their games against each other and ``random``, and ships in
``agents/pretrained/opponent_model.npz`` with its card ``opponent_model.json`` (the agents it
saw, its held-out agreement and log-loss per agent). It is a model of a population, not of any
one agent's code: ``agents.replay_belief`` weighs deals by it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .mlp import NumpyMLP

MODEL_PATH = Path(__file__).resolve().parent / "pretrained" / "opponent_model.npz"


class OpponentModel:
    """The learned model of a seat (module docs), loaded from ``MODEL_PATH`` or a given ``.npz``."""

    name = "opponent_model"
    num_players = 2
    """the table size it was trained at (``training.opponent_model`` plays 2-player games)"""

    def __init__(self, path: str | Path = MODEL_PATH) -> None:
        self.net = NumpyMLP(path, "opponent model", "python -m training.opponent_model")

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Unmasked action logits [B, 116] for observations [B, D]."""
        return self.net.forward(observation)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The most likely legal action per row (the model as a player, for checks)."""
        z = np.where(np.asarray(action_mask, bool), self.logits(observation), -np.inf)
        return z.argmax(1).astype(np.int64)
