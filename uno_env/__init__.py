"""uno_env: a fast, faithful, batched UNO environment for reinforcement learning research.

Layers: ``cards``/``actions``/``rules``/``observation`` (pure data and the rules' shared
pieces: ids, options, the observation schema), ``engine`` (numba kernels over batch-first
arrays), then the envs and the policy protocol over the engine.
"""

from importlib import metadata as _metadata

from .actions import ACTION_NAMES, NUM_ACTIONS, Action, action_name
from .cards import CARD_NAMES, NUM_CARD_TYPES, card_name, parse_card
from .engine import (
    UNREPLAYABLE_EVENTS,
    Engine,
    StepResult,
    describe_event,
    hands_from_events,
    record_start,
    redact,
    replay,
)
from .gym_env import UnoEnv, UnoVectorEnv, register_envs
from .pettingzoo_env import env, parallel_env, raw_env
from .policy import Agent, EngineAgent, RandomAgent, sample_legal
from .rules import PRESETS, UnoRules, parse_rules

PETTINGZOO_ID = "uno_env/uno_v0"  # pettingzoo.make("aec" or "parallel", PETTINGZOO_ID); stored as uno_env/uno-v0


def register_pettingzoo() -> None:
    """Register ``uno_env/uno_v0`` with PettingZoo's registries when it has them (``"aec"``: ``env()``,
    ``"parallel"``: ``parallel_env()``); idempotent."""
    try:
        import pettingzoo
    except ImportError:  # pragma: no cover - a hard dependency, but never fail the import on it
        return
    # PettingZoo's registry (pettingzoo.make / register) is new in 1.27; older releases have none.
    if not hasattr(pettingzoo, "register"):
        return
    for api, entry in (("aec", "env"), ("parallel", "parallel_env")):
        try:
            pettingzoo.spec(api, PETTINGZOO_ID)
        except Exception:  # not registered yet (PettingZoo raises its own NameNotFound family)
            pettingzoo.register(api, PETTINGZOO_ID, entry_point=f"uno_env.pettingzoo_env:{entry}")


register_envs()  # gymnasium ids: uno_env/Uno-v0 (gymnasium.make / gymnasium.make_vec)
register_pettingzoo()  # pettingzoo.make("aec" / "parallel", "uno_env/uno_v0") (PettingZoo >= 1.27)

try:  # the version is written once, in pyproject.toml; the installed metadata carries it
    __version__ = _metadata.version("uno_env")
except _metadata.PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"

__all__ = [
    "ACTION_NAMES",
    "NUM_ACTIONS",
    "Action",
    "action_name",
    "CARD_NAMES",
    "NUM_CARD_TYPES",
    "card_name",
    "parse_card",
    "Engine",
    "StepResult",
    "describe_event",
    "redact",
    "hands_from_events",
    "UNREPLAYABLE_EVENTS",
    "record_start",
    "replay",
    "PRESETS",
    "UnoRules",
    "parse_rules",
    "Agent",
    "EngineAgent",
    "RandomAgent",
    "sample_legal",
    "env",
    "parallel_env",
    "raw_env",
    "UnoEnv",
    "UnoVectorEnv",
    "PETTINGZOO_ID",
    "register_pettingzoo",
]
