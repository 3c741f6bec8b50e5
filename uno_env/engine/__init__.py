"""The batched rules engine: state arrays, numba kernels, and the ``Engine`` driver.

Inside the package each module imports only those below it: ``layout``/``rng``/``borrow`` <- ``kernels``
<- ``batch``/``invariants`` <- ``record`` (no engine) <- ``engine`` <- ``replay``.
"""

from .engine import Engine, StepResult, game_seeds
from .record import describe_event
from .replay import replay

__all__ = ["Engine", "StepResult", "describe_event", "game_seeds", "replay"]
