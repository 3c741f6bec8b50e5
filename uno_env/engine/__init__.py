"""The batched rules engine: state arrays, numba kernels, and the ``Engine`` driver."""

from .engine import Engine, StepResult, game_seeds
from .record import replay

__all__ = ["Engine", "StepResult", "game_seeds", "replay"]
