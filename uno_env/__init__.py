"""uno_env: a fast, faithful, batched UNO environment for reinforcement learning research.

Layers: ``cards``/``actions``/``rules`` (pure data, RULES.md R1, R2 and options), ``engine``
(numba kernels over batch-first arrays).
"""

from .actions import ACTION_NAMES, NUM_ACTIONS, Action, action_name
from .cards import CARD_NAMES, NUM_CARD_TYPES, card_name, parse_card
from .engine import Engine, StepResult, replay
from .gym_env import UnoEnv, UnoVectorEnv, register_envs
from .pettingzoo_env import env, raw_env
from .rules import PRESETS, UnoRules

register_envs()  # gymnasium ids: uno_env/Uno-v0 (gymnasium.make / gymnasium.make_vec)

__version__ = "0.1.0"

__all__ = [
    "ACTION_NAMES", "NUM_ACTIONS", "Action", "action_name", "CARD_NAMES", "NUM_CARD_TYPES",
    "card_name", "parse_card", "Engine", "StepResult", "replay", "PRESETS", "UnoRules",
    "env", "raw_env", "UnoEnv", "UnoVectorEnv",
]
