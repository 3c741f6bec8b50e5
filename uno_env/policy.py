"""The agent protocols, uniform legal sampling, and ``RandomAgent``.

| protocol | what an agent declares | who reads it |
|---|---|---|
| ``Agent`` | ``name``; ``act(observation, action_mask, rng) -> actions`` over a batch | every table (``uno_env.table``) |
| ``EngineAgent`` | an ``Agent`` with ``act_in(engine, i, rng) -> action`` (``uses_engine``): search agents | tables with ``engine_access`` |
| ``history_length`` | the events of public history its ``act`` reads (``history_length_of``): it then gets a dict observation | tables, the envs' opponents |
| ``history_form`` | the form of that history (``history_form_of``): ``"rows"`` (default: ``"history"`` and ``"history_counts"``, float32) or ``"tokens"`` (``"history_tokens"``, int8), as an env's ``history_form`` gives it | tables, the envs' opponents |
| ``fair_engine_access = True`` | its ``act_in`` reads only what its seat sees (``fair_engine_access``) | every table, which asks it with ``act_in`` |

They live in the library, not in ``agents``, because the envs need a default opponent and the
harness needs the protocols; ``agents`` re-exports ``Agent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numba import njit

from .checks import is_int
from .engine.history import HISTORY_FORMS

if TYPE_CHECKING:
    from .engine import Engine

__all__ = [
    "Agent",
    "EngineAgent",
    "RandomAgent",
    "agent_label",
    "as_batch",
    "fair_engine_access",
    "history_form_of",
    "history_length_of",
    "kth_legal",
    "pick_legal",
    "sample_legal",
    "uses_engine",
]


@runtime_checkable
class Agent(Protocol):
    """A policy over a batch: ``act(observation [B, D], action_mask [B, A], rng) -> actions [B]``.

    Agents see only the observation (R11) and the mask; nothing reads hidden state.
    ``rng`` is a ``numpy.random.Generator``; an agent is deterministic given it.
    """

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action id per row (int64 [B])."""
        ...


@runtime_checkable
class EngineAgent(Protocol):
    """An agent that may read the engine: ``act_in(engine, i, rng) -> action`` for game ``i``.

    It must act only on what the player to act in game ``i`` may know (R11): search agents copy
    the game and re-deal the hidden cards (``Engine.resample_hidden``) before looking ahead.
    """

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action id per row (int64 [B])."""
        ...

    def act_in(self, engine: Engine, i: int, rng: np.random.Generator) -> int:
        """One legal action id for the player to act in game ``i`` of ``engine``."""
        ...


def uses_engine(agent: Any) -> bool:
    """Whether ``agent`` follows ``EngineAgent`` (has a callable ``act_in``)."""
    return callable(getattr(agent, "act_in", None))


def history_length_of(agent: Any) -> int:
    """The events of public history ``agent`` reads: its ``history_length`` (0 when it has none)."""
    k = getattr(agent, "history_length", 0)
    return int(k) if is_int(k) and k > 0 else 0


def history_form_of(agent: Any) -> str:
    """The form of public history ``agent`` reads: its ``history_form`` (``"rows"`` when it has none),
    else a ValueError naming the agent and the forms allowed."""
    form = getattr(agent, "history_form", HISTORY_FORMS[0])
    if not isinstance(form, str) or form not in HISTORY_FORMS:
        raise ValueError(
            f"agent {agent_label(agent)!r} declares history_form={form!r}; an agent reads its history in one of "
            f"{HISTORY_FORMS} (float rows and counts, or int8 tokens: uno_env.engine.Engine.history_observation)"
        )
    return form


def fair_engine_access(agent: Any) -> bool:
    """Whether ``agent`` reads from the engine only what its seat sees (its class says
    ``fair_engine_access = True``: ``agents.llm.ChatAgent`` reads the round's events through
    ``Engine.history_events``), so every table asks it with ``act_in``, ``engine_access`` or not."""
    return getattr(agent, "fair_engine_access", False) is True


def agent_label(agent: Any) -> str:
    """The agent's ``name``, else its class name (for error messages and tables)."""
    return str(getattr(agent, "name", type(agent).__name__))


@njit(cache=True)
def kth_legal(mask_row, u):
    """The legal action of one mask row at ``k = floor(u * count)`` (u uniform in [0, 1) makes
    it uniformly random); -1 when nothing is legal."""
    count = 0
    for a in range(mask_row.shape[0]):
        if mask_row[a]:
            count += 1
    if count == 0:
        return -1
    k = min(int(u * count), count - 1)
    for a in range(mask_row.shape[0]):
        if mask_row[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def pick_legal(mask, u, out):
    """``kth_legal`` of every row of a mask [B, A] with its own ``u[b]``, into ``out`` [B]."""
    for b in range(mask.shape[0]):
        out[b] = kth_legal(mask[b], u[b])


def sample_legal(action_mask: np.ndarray, rng: np.random.Generator, out: np.ndarray | None = None) -> np.ndarray:
    """A uniformly random legal action per row (-1 for a row with no legal action); ``out``
    (int64 [B]) is filled and returned instead of a new array."""
    mask = np.asarray(action_mask)
    if out is None:
        out = np.empty(mask.shape[0], np.int64)
    elif not isinstance(out, np.ndarray) or out.dtype != np.int64 or out.shape != (mask.shape[0],):
        raise ValueError(f"out must be an int64 array of shape ({mask.shape[0]},), got {out!r}")
    pick_legal(mask.astype(bool, copy=False), rng.random(mask.shape[0]), out)
    return out


def as_batch(observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The batch as C-contiguous float32 observations and bool masks (masks may come as int8);
    a ``ValueError`` when the shapes do not form one batch."""
    obs = np.ascontiguousarray(observation, dtype=np.float32)
    mask = np.ascontiguousarray(action_mask).astype(bool, copy=False)
    if obs.ndim != 2 or mask.ndim != 2 or obs.shape[0] != mask.shape[0]:
        raise ValueError(
            f"expected observation [B, D] and action_mask [B, A] with the same B, got {obs.shape} and {mask.shape}"
        )
    return obs, mask


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row."""
        return sample_legal(action_mask, rng)
