"""uno_env: a fast, faithful, batched UNO environment for reinforcement learning research.

Layers: ``cards``/``actions``/``rules`` (pure data, RULES.md R1, R2 and options), ``engine``
(numba kernels over batch-first arrays).
"""

from .actions import ACTION_NAMES, NUM_ACTIONS, Action, action_name
from .cards import CARD_NAMES, NUM_CARD_TYPES, card_name, parse_card
from .engine import Engine, StepResult, replay
from .pettingzoo_env import env, raw_env
from .rules import PRESETS, UnoRules

__version__ = "0.1.0"

__all__ = [
    "ACTION_NAMES", "NUM_ACTIONS", "Action", "action_name", "CARD_NAMES", "NUM_CARD_TYPES",
    "card_name", "parse_card", "Engine", "StepResult", "replay", "PRESETS", "UnoRules",
    "env", "raw_env",
]
