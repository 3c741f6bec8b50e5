"""The argument checks of the public entries, one function per fact: "an integer" (``bool`` is not one),
the thread count, the history form and the reward."""

from __future__ import annotations

import numbers
from typing import Any, TypeGuard

import numpy as np

__all__ = [
    "is_int",
    "check_int",
    "MAX_THREADS",
    "check_threads",
    "HISTORY_FORMS",
    "check_history_form",
    "REWARDS",
    "check_reward",
]

MAX_THREADS = 64
"""the most threads a batch is stepped on"""

# How an env gives a seat's history (its ``history_form``): the float rows and counts
# (``Engine.history``) or the tokens (``Engine.history_tokens``).
HISTORY_FORMS = ("rows", "tokens")

REWARDS = ("win", "score", "rank")
"""what a finished round pays each seat (docs/spaces.md); a reward's code is its index"""


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


def check_threads(threads: Any) -> int:
    """``threads`` as an int in 1..MAX_THREADS, else a ValueError with the allowed range."""
    return check_int(
        "threads (the threads a batch is stepped on; 1: the calling thread alone)", threads, 1, MAX_THREADS
    )


def check_history_form(form: object, history: int | None = None) -> str:
    """``form`` if it is one of ``HISTORY_FORMS`` (and, given an env's ``history``, one it can
    shape: a form other than the default needs history=K), else a ValueError saying why."""
    if not isinstance(form, str) or form not in HISTORY_FORMS:
        raise ValueError(
            f"history_form must be one of {HISTORY_FORMS} (float rows and counts, or int8 tokens), got {form!r}"
        )
    if history == 0 and form != HISTORY_FORMS[0]:
        raise ValueError(f"history_form={form!r} needs history=K (events kept, 1..1024); history is 0")
    return form


def check_reward(reward: Any, episode: str) -> int:
    """The code of ``reward`` (one of ``REWARDS``) under rules whose ``episode`` is given, else a ValueError
    naming the allowed values."""
    if not isinstance(reward, str) or reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(repr(r) for r in REWARDS)}, got {reward!r}")
    if reward != "win" and episode == "match":
        raise ValueError(
            f"reward={reward!r} scores the end of one round and cannot be combined with episode='match' "
            "(a match's episode is rewarded by its winner); use reward='win' or episode='round'"
        )
    return REWARDS.index(reward)
