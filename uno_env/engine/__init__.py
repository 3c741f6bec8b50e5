"""The batched rules engine: state arrays, numba kernels, and the ``Engine`` driver.

Inside the package each module imports only those below it: ``layout``/``rng``/``borrow`` <- ``kernels``,
``deal`` <- ``batch``/``invariants`` <- ``record`` (no engine) <- ``engine`` <- ``replay``.
"""

from .deal import deal_constrained
from .engine import Engine, StepResult, game_seeds
from .record import describe_event
from .replay import replay

__all__ = ["Engine", "StepResult", "deal_constrained", "describe_event", "game_seeds", "replay"]
