"""The batched rules engine: state arrays, numba kernels, and the ``Engine`` driver.

Inside the package each module imports only those below it: ``layout``/``rng``/``borrow`` <- ``kernels``,
``deal`` <- ``batch``/``invariants``; ``events`` (the event table) <- ``layout`` and
``record`` (no engine) <- ``engine`` <- ``replay``.
"""

from .deal import deal_constrained
from .engine import Engine, StepResult, game_seeds
from .events import UNREPLAYABLE_EVENTS, describe_event, hands_from_events, redact
from .replay import record_start, replay

__all__ = [
    "Engine",
    "StepResult",
    "UNREPLAYABLE_EVENTS",
    "deal_constrained",
    "describe_event",
    "game_seeds",
    "hands_from_events",
    "record_start",
    "redact",
    "replay",
]
