"""Argument checks shared by every layer: one definition of "an integer" (``bool`` is not one)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["is_int", "check_int"]


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (Python or numpy), not a ``bool``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, lo: int, hi: int) -> int:
    """``value`` as an int in lo..hi, else a ValueError naming it."""
    if not is_int(value) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return int(value)
