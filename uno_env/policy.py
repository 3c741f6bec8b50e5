"""The agent protocols, uniform legal sampling, and ``RandomAgent`` (the protocols: docs/api/policy.md).

They live in the library, not in ``agents``, because the envs need a default opponent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numba import njit

from .checks import HISTORY_FORMS, is_int

if TYPE_CHECKING:
    from .engine import Engine
    from .threads import Chunks

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

    It sees only the observation (R11) and the mask, and is deterministic given ``rng``."""

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action id per row (int64 [B])."""
        ...


@runtime_checkable
class EngineAgent(Protocol):
    """An agent that may read the engine: ``act_in(engine, i, rng) -> action`` for game ``i``.

    It must act only on what the player to act may know (R11), e.g. by ``Engine.resample_hidden`` on a copy."""

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
    """The form of public history ``agent`` reads (``"rows"`` by default); a ValueError for an unknown one."""
    form = getattr(agent, "history_form", HISTORY_FORMS[0])
    if not isinstance(form, str) or form not in HISTORY_FORMS:
        raise ValueError(
            f"agent {agent_label(agent)!r} declares history_form={form!r}; an agent reads its history in one of "
            f"{HISTORY_FORMS} (float rows and counts, or int8 tokens: uno_env.engine.Engine.history_observation)"
        )
    return form


def fair_engine_access(agent: Any) -> bool:
    """Whether ``agent`` declares ``fair_engine_access = True``: its ``act_in`` reads only what its seat sees."""
    return getattr(agent, "fair_engine_access", False) is True


def agent_label(agent: Any) -> str:
    """The agent's ``name``, else its class name (for error messages and tables)."""
    return str(getattr(agent, "name", type(agent).__name__))


@njit(cache=True)
def kth_legal(mask_row, u):
    """The legal action of a mask row at ``k = floor(u * count)`` (uniform for u in [0, 1)); -1 when none is legal."""
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


@njit(cache=True, nogil=True)
def _pick_legal_rows(mask, u, out, lo, hi):
    """``pick_legal``'s rows lo..hi-1, without the GIL (one chunk of ``RandomAgent.act_chunked``)."""
    for b in range(lo, hi):
        out[b] = kth_legal(mask[b], u[b])


def sample_legal(action_mask: np.ndarray, rng: np.random.Generator, out: np.ndarray | None = None) -> np.ndarray:
    """A uniformly random legal action per row (-1 where none is legal); ``out`` int64 [B] is filled if given."""
    mask = np.asarray(action_mask)
    if out is None:
        out = np.empty(mask.shape[0], np.int64)
    elif not isinstance(out, np.ndarray) or out.dtype != np.int64 or out.shape != (mask.shape[0],):
        raise ValueError(f"out must be an int64 array of shape ({mask.shape[0]},), got {out!r}")
    pick_legal(mask.astype(bool, copy=False), rng.random(mask.shape[0]), out)
    return out


def as_batch(observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The batch as C-contiguous float32 observations and bool masks; a ValueError if the shapes disagree."""
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

    def act_chunked(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator, chunks: Chunks
    ) -> np.ndarray:
        """``act``'s actions from the same draws, its rows in the contiguous chunks of ``chunks`` (one per thread)."""
        mask = np.ascontiguousarray(action_mask).astype(bool, copy=False)
        out = np.empty(mask.shape[0], np.int64)
        chunks.run(mask.shape[0], _pick_legal_rows, mask, rng.random(mask.shape[0]), out)
        return out
