"""The batched game loop (``play_games``) and ``play_match``: many games between agents, win rates with Wilson intervals.

``play_games`` is the one loop behind ``play_match`` and ``arena.tournament.play_table``.

| aspect | what ``play_games`` does |
|---|---|
| batching | ``min(num_games, batch_size)`` games side by side in one ``Engine``; each step calls every agent once, on the rows where its seat is to act; a finished row is dealt the next game (``reset(games=...)``) until ``num_games`` were started |
| seats | game g puts agent i in seat ``(i + g) % P`` with ``rotate_seats`` (over a multiple of P games every agent sits in every seat equally often), else seat i |
| seeds | ``SeedSequence(seed)`` spawns P + 1 streams: the engine's games, then one generator per agent; the games are a function of ``seed`` and ``batch_size`` |
| ``engine_access`` | an agent with ``act_in(engine, i, rng) -> action`` (``SearchAgent``) is asked game by game with the engine, so it can copy the game and re-deal what its seat cannot see; without it every agent acts on observations |
| ``on_finish(engine, rows, won, seats)`` | called when games end, before their rows are reset: ``won[r, i]`` whether agent i's seat was rewarded +1, ``seats[r, i]`` its seat |
| ``seat_games[i, s]`` | games agent i played in seat s |
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from uno_env import Agent, Engine, UnoRules, parse_rules

from .ratings import wilson_interval

__all__ = ["WinRates", "MatchResult", "agent_name", "play_games", "play_match"]

OnFinish = Callable[[Engine, np.ndarray, np.ndarray, np.ndarray], None]


class WinRates:
    """``win_rate`` and ``ci95`` of a result with ``wins`` (per agent) out of ``games``."""

    wins: np.ndarray
    games: int

    @property
    def win_rate(self) -> np.ndarray:
        """Fraction of games won per agent."""
        return self.wins / max(self.games, 1)

    @property
    def ci95(self) -> list[tuple[float, float]]:
        """95% Wilson interval of each agent's win rate."""
        return [wilson_interval(float(w), self.games) for w in self.wins]


@dataclass
class MatchResult(WinRates):
    """Outcome of ``play_match``: wins per agent (in the order given) over ``games`` games."""

    names: list[str]
    games: int
    wins: np.ndarray  # int64 [num_agents]: games in which the agent's seat was rewarded +1
    no_winner: int  # truncated games (R8 max_turns), counted as a loss for every agent
    steps: int  # engine actions taken over all games
    seconds: float
    seat_games: np.ndarray = field(repr=False)  # int64 [num_agents, num_players]

    def summary(self) -> str:
        """One line per agent: wins, rate and interval."""
        lines = []
        for name, w, r, (lo, hi) in zip(self.names, self.wins, self.win_rate, self.ci95, strict=True):
            lines.append(f"{name}: {w}/{self.games} = {r:.3f} (95% CI {lo:.3f}–{hi:.3f})")
        return "\n".join(lines)


def agent_name(agent: Any) -> str:
    """The agent's ``name``, else its class name."""
    return str(getattr(agent, "name", type(agent).__name__))


def play_games(
    agents: Sequence[Agent],
    num_games: int,
    rules: UnoRules,
    seed: int,
    batch_size: int,
    on_finish: OnFinish,
    rotate_seats: bool = True,
    engine_access: bool = False,
    record: bool = False,
) -> tuple[int, np.ndarray]:
    """Play ``num_games`` games with one agent per seat (module table); returns (actions taken, seat_games).

    With ``record`` the engine records its games, so ``on_finish`` can read ``engine.record(row)``
    of each finished row before the row is dealt a new game.

    An agent must return one action id >= 0 per row (-1 would leave a game untouched forever).
    """
    _check_positive("num_games", num_games)
    _check_positive("batch_size", batch_size)
    P = len(agents)
    B = int(min(num_games, batch_size))
    game_ss, *agent_ss = np.random.SeedSequence(seed).spawn(P + 1)
    engine = Engine(B, P, rules, seed=int(game_ss.generate_state(1, np.uint64)[0]), record=record)
    rngs = [np.random.default_rng(s) for s in agent_ss]
    searching = [engine_access and callable(getattr(a, "act_in", None)) for a in agents]
    seat_of = _seats(np.arange(B), P, rotate_seats)  # [row, agent] -> seat
    seat_games = np.zeros((P, P), np.int64)
    _count_seats(seat_games, seat_of)
    next_game = B
    active = np.ones(B, bool)
    steps = 0
    actions = np.empty(B, np.int64)
    while active.any():
        _ask_agents(agents, engine, active, seat_of, rngs, searching, actions)
        steps += int((actions >= 0).sum())
        engine.step(actions)
        done = np.flatnonzero(active & (engine.terminated | engine.truncated))
        if done.size == 0:
            continue
        won = np.take_along_axis(engine.rewards[done], seat_of[done], axis=1) > 0  # [rows, agent]
        on_finish(engine, done, won, seat_of[done])
        # Every started game is played to its end; rows are reused while games remain.
        restart = done[: max(0, min(done.size, num_games - next_game))]
        active[done[restart.size :]] = False
        if restart.size:
            seat_of[restart] = _seats(np.arange(next_game, next_game + restart.size), P, rotate_seats)
            _count_seats(seat_games, seat_of[restart])
            next_game += restart.size
            engine.reset(games=restart)
    return steps, seat_games


def play_recorded(
    agents: Sequence[Agent], num_games: int, rules: UnoRules, seed: int = 0, batch_size: int = 1024
) -> list[dict[str, Any]]:
    """Records (``Engine.record``) of ``num_games`` games with agent k in seat k (no rotation)."""
    records: list[dict[str, Any]] = []

    def keep(engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray) -> None:
        records.extend(engine.record(int(r)) for r in rows)

    play_games(agents, num_games, rules, seed, batch_size, keep, rotate_seats=False, record=True)
    return records


def _check_positive(name: str, value: Any) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _seats(game_ids: np.ndarray, num_players: int, rotate: bool) -> np.ndarray:
    """``[game, agent] -> seat``: agent i sits in seat ``(i + g) % P`` in game g when rotating."""
    shift = game_ids % num_players if rotate else np.zeros_like(game_ids)
    return (np.arange(num_players)[None, :] + shift[:, None]) % num_players


def _count_seats(seat_games: np.ndarray, seat_of: np.ndarray) -> None:
    """Add the seats of ``seat_of`` ([rows, agent]) to ``seat_games[agent, seat]``."""
    P = seat_games.shape[0]
    np.add.at(seat_games, (np.tile(np.arange(P), seat_of.shape[0]), seat_of.reshape(-1)), 1)


def _ask_agents(
    agents: Sequence[Agent],
    engine: Engine,
    active: np.ndarray,
    seat_of: np.ndarray,
    rngs: list[np.random.Generator],
    searching: list[bool],
    actions: np.ndarray,
) -> None:
    """Fill ``actions``: each agent once, on the active rows where its seat is to act; -1 elsewhere."""
    current = engine.current_player
    actions.fill(-1)
    for i, agent in enumerate(agents):
        rows = np.flatnonzero(active & (seat_of[:, i] == current))
        if rows.size == 0:
            continue
        if searching[i]:
            chosen = np.array([agent.act_in(engine, int(r), rngs[i]) for r in rows], np.int64)
        else:
            chosen = np.asarray(agent.act(engine.observation[rows], engine.legal_mask[rows], rngs[i]))
        if chosen.shape != rows.shape or (chosen < 0).any():
            raise ValueError(
                f"agent {i} ({agent_name(agent)}) must return one action id >= 0 per row; "
                f"got {chosen!r} for {rows.size} rows"
            )
        actions[rows] = chosen


def play_match(
    agents: Sequence[Agent],
    num_games: int,
    num_players: int = 2,
    rules: Any = None,
    seed: int = 0,
    rotate_seats: bool = True,
    batch_size: int = 1024,
    engine_access: bool = False,
) -> MatchResult:
    """Play ``num_games`` games (episodes) with ``agents[i]`` in seat i, rotated, and count wins.

    The games run through ``play_games`` (seats, seeds, batching and ``engine_access`` are
    described there): with ``rotate_seats`` game g puts agent i in seat
    ``(i + g) % num_players``. A match is reproducible for a given ``seed`` and ``batch_size``.
    ``rules``: anything ``uno_env.parse_rules`` takes (default classic).
    """
    P = int(num_players)
    if len(agents) != P:
        raise ValueError(f"need one agent per seat: {P} players but {len(agents)} agents")
    start = time.perf_counter()
    wins = np.zeros(P, np.int64)
    no_winner = 0

    def count(engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray) -> None:
        nonlocal no_winner
        wins[:] += won.sum(0)
        no_winner += int((~won.any(1)).sum())

    steps, seat_games = play_games(
        agents, num_games, parse_rules(rules), seed, batch_size, count, rotate_seats, engine_access
    )
    return MatchResult(
        names=[agent_name(a) for a in agents],
        games=int(num_games),
        wins=wins,
        no_winner=no_winner,
        steps=steps,
        seconds=time.perf_counter() - start,
        seat_games=seat_games,
    )
