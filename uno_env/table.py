"""The table: the one place where a batch of games meets its agents (docs/api/policy.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from .actions import NUM_ACTIONS
from .checks import is_int
from .engine import Engine
from .engine.layout import MAX_HISTORY
from .policy import Agent, agent_label, fair_engine_access, history_form_of, history_length_of, uses_engine

__all__ = ["Table", "ask_one", "wanted_history"]


def check_history(agent: Any, engine: Engine) -> int:
    """``history_length_of(agent)``, else a ValueError when ``engine`` keeps fewer events than it reads
    or its ``history_form`` is not one the engine gives (``history_form_of``)."""
    history_form_of(agent)
    k = history_length_of(agent)
    if k > engine.history_length:
        raise ValueError(
            f"agent {agent_label(agent)!r} reads the last {k} events of public history, but the engine keeps "
            f"{engine.history_length}: create the engine with Engine(..., history=K), K >= {k} "
            "(arena.play_games and the Gymnasium envs do so for their agents)"
        )
    return k


def history_observation(
    engine: Engine, observation: np.ndarray, rows: np.ndarray, k: int, form: str = "rows"
) -> dict[str, np.ndarray]:
    """The dict observation of an agent reading ``k`` events in ``form`` for the games ``rows``, from the
    seat to act in each (``Engine.history_observation``)."""
    games = None if rows.size == engine.num_envs else rows
    entries = engine.history_observation(engine.current_player, form, k, games)
    return {"observation": observation, **{key: v[rows] for key, v in entries.items()}}


def wanted_history(agents: Sequence[Any]) -> int:
    """The longest round history (events per game) that ``agents`` with fair engine access ask
    for in their ``history``; the engine of their table keeps that many."""
    wanted = [getattr(a, "history", 0) for a in agents if fair_engine_access(a)]
    return max((min(int(h), MAX_HISTORY) for h in wanted if is_int(h) and h > 0), default=0)


@njit(cache=True)
def _scatter(actions, idx, chosen, num_actions):
    """actions[idx[j]] = chosen[j]; the position j of the first id outside 0..num_actions-1, or -1."""
    for j in range(idx.shape[0]):
        a = chosen[j]
        if a < 0 or a >= num_actions:
            return j
        actions[idx[j]] = a
    return -1


def _gather(obs, mask, rows, obs_out, mask_out, lo, hi):
    """Rows lo..hi-1 of the asked games' observations and masks (numpy's take runs without the GIL)."""
    np.take(obs, rows[lo:hi], axis=0, out=obs_out[lo:hi], mode="clip")
    np.take(mask, rows[lo:hi], axis=0, out=mask_out[lo:hi], mode="clip")


class RowStreams:
    """One numpy generator per row, as one generator: a draw of shape ``(k, ...)`` takes row j from generator j.

    Offers ``random``, ``uniform``, ``gumbel`` and ``integers``; any other draw, or one whose first
    dimension is not the number of rows, raises ``NotRowShaped``."""

    def __init__(self, generators: Sequence[np.random.Generator]) -> None:
        self.generators = list(generators)

    def _rows(self, size: Any, draw: Any) -> np.ndarray:
        shape = (size,) if is_int(size) else tuple(size or ())
        if not shape or shape[0] != len(self.generators):
            raise NotRowShaped(f"a draw of shape {shape} from a batch of {len(self.generators)} rows")
        return np.stack([draw(g, shape[1:]) for g in self.generators])

    def random(self, size: Any = None) -> np.ndarray:
        """Uniforms in [0, 1), row j from generator j."""
        return self._rows(size, lambda g, rest: g.random(rest))

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> np.ndarray:
        """Uniforms in [low, high), row j from generator j."""
        return self._rows(size, lambda g, rest: g.uniform(low, high, rest))

    def gumbel(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> np.ndarray:
        """Gumbel draws, row j from generator j."""
        return self._rows(size, lambda g, rest: g.gumbel(loc, scale, rest))

    def integers(self, low: int, high: int | None = None, size: Any = None) -> np.ndarray:
        """Integers in [low, high), row j from generator j."""
        return self._rows(size, lambda g, rest: g.integers(low, high, rest))

    def __getattr__(self, name: str) -> Any:
        raise NotRowShaped(f"the draw {name!r} has no per-row form")


class NotRowShaped(Exception):
    """An agent drew from ``RowStreams`` in a way that has no per-row form."""


def _bad_answer(agent: Any, what: str, rows: int) -> ValueError:
    return ValueError(
        f"agent {agent_label(agent)!r} returned {what}; act() must return {rows} integer action ids "
        f"(int64 [{rows}]) in 0..{NUM_ACTIONS - 1}, one per row asked, and act_in() one such id"
    )


def _checked_one(agent: Any, a: Any) -> int:
    if not is_int(a) or not 0 <= a < NUM_ACTIONS:
        raise _bad_answer(agent, f"{a!r} from act_in()", 1)
    return int(a)


def ask_one(agent: Any, engine: Engine, i: int, rng: np.random.Generator, engine_access: bool = True) -> int:
    """The checked action of ``agent`` for the player to act in game ``i`` (``act_in`` with engine access)."""
    if engine_access and uses_engine(agent):
        return _checked_one(agent, agent.act_in(engine, i, rng))
    obs: Any = engine.observation[i : i + 1]
    k = check_history(agent, engine)
    if k:
        obs = history_observation(engine, obs, np.array([i]), k, history_form_of(agent))
    out = np.asarray(agent.act(obs, engine.legal_mask[i : i + 1], rng))
    if out.shape != (1,) or out.dtype.kind not in "iu":
        raise _bad_answer(agent, f"{out.dtype} actions of shape {out.shape}", 1)
    return _checked_one(agent, out[0])


class Table:
    """A batch of games (one ``Engine``) and the agents at its seats.

    ``seat_agent`` int64 [B, P] indexes ``agents`` per seat (-1: a seat the table does not play), set by
    the loop that owns the table; ``rngs`` is one generator for every agent or one per agent."""

    def __init__(
        self,
        engine: Engine,
        agents: Sequence[Agent],
        rngs: np.random.Generator | Sequence[np.random.Generator],
        engine_access: bool = False,
    ) -> None:
        self.engine = engine
        B, P = engine.num_envs, engine.num_players
        self.seat_agent = np.full((B, P), -1, np.int64)
        self.seat_rngs: list[list[np.random.Generator]] | None = None
        self.engine_access = bool(engine_access)
        self.set_agents(agents, rngs)
        # Buffers kept across calls: a fresh array per call page-faults at large batches.
        self._obs_buf = np.empty((B, engine.observation_size), np.float32)
        self._mask_buf = np.empty((B, NUM_ACTIONS), bool)
        self.actions = np.empty(B, np.int64)

    def set_agents(
        self, agents: Sequence[Agent], rngs: np.random.Generator | Sequence[np.random.Generator] | None = None
    ) -> None:
        """Replace the agent list (``seat_agent`` indexes it) and, when given, the generators."""
        for agent in agents:
            if not callable(getattr(agent, "act", None)):
                raise ValueError(
                    "agents must have act(observation, action_mask, rng) -> actions (see uno_env.policy.Agent), "
                    f"got {type(agent).__name__} {agent!r}"
                )
        histories = [check_history(agent, self.engine) for agent in agents]
        self.agents = list(agents)
        self.histories = histories
        self.history_forms = [history_form_of(agent) for agent in agents]
        if rngs is not None:
            self.rngs = [rngs] * len(self.agents) if isinstance(rngs, np.random.Generator) else list(rngs)
        if len(self.rngs) != len(self.agents):
            raise ValueError(f"need one generator or one per agent ({len(self.agents)}), got {len(self.rngs)}")
        self.searching = [(self.engine_access or fair_engine_access(a)) and uses_engine(a) for a in self.agents]
        self._per_row: set[int] = set()  # agents whose draws have no per-row form (asked game by game)

    # --- asking -----------------------------------------------------------------------------

    def owners(self, rows: np.ndarray) -> np.ndarray:
        """The agent index of the player to act in each game of ``rows`` (-1: not the table's)."""
        return self.seat_agent[rows, self.engine.current_player[rows]]

    def ask(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """``actions[rows]``: each game's action from the agent whose seat is to act (all the table's)."""
        if len(self.agents) == 1 and self.seat_rngs is None:
            self._ask_agent(0, rows, actions)
            return
        owner = self.owners(rows)
        for i in range(len(self.agents)):
            mine = rows[owner == i]
            if mine.size:
                self._ask_agent(i, mine, actions)

    def step(self, active: np.ndarray | None = None) -> int:
        """Ask for every game (of ``active``, bool [B]) whose player to act is the table's and is not
        finished, then step the engine once (-1 elsewhere); returns how many actions were taken."""
        e = self.engine
        live = ~(e.terminated | e.truncated)
        if active is not None:
            live &= active
        rows = np.flatnonzero(live)
        rows = rows[self.owners(rows) >= 0]
        actions = self.actions
        actions.fill(-1)
        if rows.size:
            self.ask(rows, actions)
        try:
            e.step(actions)
        except ValueError as exc:  # the engine refused (state unchanged): name the agent that chose it
            illegal = rows[~e.legal_mask[rows, actions[rows]]]
            if not illegal.size:
                raise
            agent = self.agents[int(self.owners(illegal[:1])[0])]
            raise ValueError(f"agent {agent_label(agent)!r} returned an illegal action: {exc}") from exc
        return int(rows.size)

    def _ask_agent(self, i: int, rows: np.ndarray, actions: np.ndarray) -> None:
        """Agent i's actions for the games ``rows`` (one batched call, or game by game)."""
        e, agent = self.engine, self.agents[i]
        per_row = self.seat_rngs is not None and i in self._per_row
        act_in_rows = getattr(agent, "act_in_rows", None)
        if self.searching[i] and callable(act_in_rows):
            # act_in for many games in one call (ChatAgent: their requests run in parallel).
            cur = e.current_player
            rngs = [self.rngs[i] if self.seat_rngs is None else self.seat_rngs[r][int(cur[r])] for r in rows.tolist()]
            chosen = list(act_in_rows(e, rows.tolist(), rngs))
            if len(chosen) != rows.size:
                raise _bad_answer(agent, f"{len(chosen)} actions from act_in_rows()", int(rows.size))
            for r, a in zip(rows.tolist(), chosen, strict=True):
                actions[r] = _checked_one(agent, a)
            return
        if self.searching[i] or per_row:
            cur = e.current_player
            for r in rows.tolist():
                rng = self.rngs[i] if self.seat_rngs is None else self.seat_rngs[r][int(cur[r])]
                actions[r] = ask_one(agent, e, r, rng, self.searching[i])
            return
        if self.seat_rngs is None:
            self._ask_batch(i, agent, rows, actions, self.rngs[i])
            return
        cur = e.current_player
        streams = RowStreams([self.seat_rngs[r][int(cur[r])] for r in rows.tolist()])
        saved = [g.bit_generator.state for g in streams.generators]
        try:
            self._ask_batch(i, agent, rows, actions, streams)
        except NotRowShaped:
            for g, st in zip(streams.generators, saved, strict=True):
                g.bit_generator.state = st  # undo the draws made before the failing one
            self._per_row.add(i)
            self._ask_agent(i, rows, actions)

    def _ask_batch(
        self, i: int, agent: Any, rows: np.ndarray, actions: np.ndarray, rng: np.random.Generator | RowStreams
    ) -> None:
        """Agent i's actions for the games ``rows`` in one ``act`` call on their gathered rows."""
        e = self.engine
        k = rows.size
        if k == e.num_envs:
            obs, mask = e.observation, e.legal_mask  # the whole batch: no gather
        elif e.chunks is not None:
            obs, mask = self._obs_buf[:k], self._mask_buf[:k]
            e.chunks.run(k, _gather, e.observation, e.legal_mask, rows, obs, mask)
        else:
            # mode="clip" lets take() write straight into the buffer (indices are valid).
            obs = np.take(e.observation, rows, axis=0, out=self._obs_buf[:k], mode="clip")
            mask = np.take(e.legal_mask, rows, axis=0, out=self._mask_buf[:k], mode="clip")
        given: Any = obs
        if self.histories[i]:
            given = history_observation(e, obs, rows, self.histories[i], self.history_forms[i])
        chunked = getattr(agent, "act_chunked", None) if e.chunks is not None else None
        if callable(chunked):
            out = np.asarray(chunked(given, mask, rng, e.chunks))  # act's actions, its rows on the engine's threads
        else:
            out = np.asarray(agent.act(given, mask, rng))
        if out.shape != (k,) or out.dtype.kind not in "iu":
            raise _bad_answer(agent, f"{out.dtype} actions of shape {out.shape}", k)
        bad = _scatter(actions, rows, out.astype(np.int64, copy=False), NUM_ACTIONS)
        if bad >= 0:
            raise _bad_answer(agent, f"action {int(out[bad])} for game {int(rows[bad])}", k)
