"""Argument checks shared by every layer: one definition of "an integer" (``bool`` is not one)."""

from __future__ import annotations

import numbers
from typing import Any, TypeGuard

import numpy as np

__all__ = ["is_int", "check_int"]


def is_int(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is an integer (Python or numpy), not a ``bool``. (For type checkers a numpy
    integer passes as an ``int``: it takes part in the same arithmetic and comparisons.)"""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in lo..hi (at least ``lo`` when ``hi`` is None), else a ValueError naming it."""
    if not is_int(value) or value < lo or (hi is not None and value > hi):
        if hi is not None:
            allowed = f"an integer in {lo}..{hi}"
        else:
            allowed = "a positive integer" if lo == 1 else f"an integer >= {lo}"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return int(value)
