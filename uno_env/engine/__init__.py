"""The batched rules engine: state arrays, numba kernels, and the ``Engine`` driver."""

from .engine import Engine, StepResult, game_seeds
from .layout import OBS_FIELDS, OBS_OFFSETS, PHASE_NAMES, observation_size
from .record import replay

__all__ = ["Engine", "StepResult", "game_seeds", "replay", "OBS_FIELDS", "OBS_OFFSETS", "PHASE_NAMES", "observation_size"]
