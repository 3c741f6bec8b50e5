"""Playing agents against each other: ``play``, the one function, and its ``PlayResult``."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from uno_env import Agent, Engine, UnoRules
from uno_env.checks import check_int
from uno_env.policy import agent_label, history_length_of
from uno_env.rules import check_num_players
from uno_env.table import Table, wanted_history

from .ratings import paired_interval, wilson_interval

__all__ = ["PlayResult", "play", "unique_names"]

OnFinish = Callable[[Engine, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]


@dataclass
class PlayResult:
    """What ``play`` returns: per agent, in the order given, over ``games`` games."""

    names: list[str]
    games: int
    wins: np.ndarray  # int64 [n]: games in which the agent's seat was rewarded +1
    points: np.ndarray  # float64 [n]: sum over games of the agent's final score
    beat: np.ndarray  # int64 [n, n]: games where i won and j did not
    truncated: int  # games won by nobody: rounds cut at max_turns (R8) with no winner named
    steps: int  # engine actions taken over all games
    seconds: float
    seat_games: np.ndarray = field(repr=False)  # int64 [n, n]: games agent i played in seat s
    # Duplicate deals: wins and points per deal (summed over its seat rotations), [deals, n].
    deal_wins: np.ndarray | None = field(default=None, repr=False)
    deal_points: np.ndarray | None = field(default=None, repr=False)
    records: list[dict[str, Any]] | None = field(default=None, repr=False)  # ``record``: Engine.record of each game

    @property
    def win_rate(self) -> np.ndarray:
        """Fraction of games won per agent."""
        return self.wins / max(self.games, 1)

    @property
    def ci95(self) -> list[tuple[float, float]]:
        """95% interval of each agent's win rate: paired over deals with duplicate deals, else Wilson."""
        if self.deal_wins is not None:
            return [paired_interval(self.deal_wins[:, i] / self.rotations) for i in range(self.deal_wins.shape[1])]
        return [wilson_interval(float(w), self.games) for w in self.wins]

    @property
    def rotations(self) -> int:
        """Games per deal with duplicate deals (the number of seats)."""
        return len(self.wins)

    @property
    def mean_points(self) -> np.ndarray:
        """Each agent's mean final score per game."""
        return self.points / max(self.games, 1)

    def summary(self) -> str:
        """One line per agent: wins, rate and interval."""
        lines = []
        for name, w, r, (lo, hi) in zip(self.names, self.wins, self.win_rate, self.ci95, strict=True):
            lines.append(f"{name}: {w}/{self.games} = {r:.3f} (95% CI {lo:.3f}–{hi:.3f})")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "agents": self.names,
            "games": self.games,
            "wins": self.wins.tolist(),
            "win_rate": self.win_rate.tolist(),
            "ci95": [list(c) for c in self.ci95],
            "mean_points": self.mean_points.tolist(),
            "truncated": self.truncated,
            "steps": self.steps,
            "seconds": self.seconds,
            "duplicate_deals": None if self.deal_wins is None else int(self.deal_wins.shape[0]),
        }


def unique_names(agents: Sequence[Any]) -> list[str]:
    """Agent names, with ``#2``, ``#3``... appended to repeats (``random``, ``random#2``)."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for a in agents:
        base = agent_label(a)
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return names


def play(
    agents: Sequence[Agent],
    num_games: int,
    rules: UnoRules | None = None,
    seed: int = 0,
    *,
    batch_size: int = 1024,
    rotate_seats: bool = True,
    duplicate: bool = False,
    engine_access: bool = False,
    names: Sequence[str] | None = None,
    record: bool = False,
    on_finish: OnFinish | None = None,
) -> PlayResult:
    """Play ``num_games`` games with ``agents[i]`` in seat i, rotated, and count them.

    The player count is ``len(agents)`` (2..10); ``rules``: a ``UnoRules`` (default classic). The
    result is a function of ``seed`` and ``batch_size`` (with ``duplicate``, of ``seed`` alone).
    """
    P = check_num_players(len(agents), "the number of agents (one per seat)")
    check_int("num_games", num_games, 1)
    check_int("batch_size", batch_size, 1)
    if duplicate and (not rotate_seats or num_games % P):
        raise ValueError(
            f"duplicate deals play every deal once per seat rotation: rotate_seats must be True and num_games a "
            f"multiple of the {P} players, got num_games={num_games}, rotate_seats={rotate_seats}"
        )
    rules = UnoRules() if rules is None else rules
    names = list(names) if names is not None else unique_names(agents)
    if len(names) != P:
        raise ValueError(f"names: one per agent, got {len(names)} names for {P} agents")
    start = time.perf_counter()
    wins = np.zeros(P, np.int64)
    points = np.zeros(P, np.float64)
    beat = np.zeros((P, P), np.int64)
    truncated = 0
    deals = num_games // P if duplicate else 0
    deal_wins = np.zeros((deals, P), np.int64) if duplicate else None
    deal_points = np.zeros((deals, P), np.float64) if duplicate else None
    records: list[dict[str, Any]] | None = [] if record else None

    def count(engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray, games: np.ndarray) -> None:
        nonlocal truncated
        wins[:] += won.sum(0)
        beat[:] += np.einsum("ri,rj->ij", won.astype(np.int64), (~won).astype(np.int64))
        truncated += int((~won.any(1)).sum())
        scored = np.take_along_axis(engine.scores[rows], seats, axis=1)
        points[:] += scored.sum(0)
        if deal_wins is not None and deal_points is not None:
            np.add.at(deal_wins, games // P, won.astype(np.int64))
            np.add.at(deal_points, games // P, scored)
        if records is not None:
            records.extend(engine.record(int(r)) for r in rows)
        if on_finish is not None:
            on_finish(engine, rows, won, seats, games)

    steps, seat_games = _play_games(
        agents, num_games, rules, seed, batch_size, count, rotate_seats, engine_access, record, duplicate
    )
    return PlayResult(
        names=names,
        games=int(num_games),
        wins=wins,
        points=points,
        beat=beat,
        truncated=truncated,
        steps=steps,
        seconds=time.perf_counter() - start,
        seat_games=seat_games,
        deal_wins=deal_wins,
        deal_points=deal_points,
        records=records,
    )


def _play_games(
    agents: Sequence[Agent],
    num_games: int,
    rules: UnoRules,
    seed: int,
    batch_size: int,
    on_finish: OnFinish,
    rotate_seats: bool = True,
    engine_access: bool = False,
    record: bool = False,
    duplicate: bool = False,
) -> tuple[int, np.ndarray]:
    """``play``'s loop through one ``uno_env.table.Table``; returns (actions taken, seat_games).

    ``on_finish`` sees each finished row (with ``record``, ``engine.record(row)``) before it is dealt anew.
    """
    P = len(agents)
    B = int(min(num_games, batch_size))
    game_ss, *agent_ss = np.random.SeedSequence(seed).spawn(P + 1)
    # An agent that reads the public history (a PPOAgent trained with history=K, a search with the
    # history belief, a chat agent) needs the engine to keep it.
    history = max([wanted_history(agents), *(history_length_of(a) for a in agents)])
    engine = Engine(B, P, rules, seed=int(game_ss.generate_state(1, np.uint64)[0]), record=record, history=history)
    table = Table(engine, agents, [np.random.default_rng(s) for s in agent_ss], engine_access=engine_access)
    deals = DuplicateDeals(seed, P) if duplicate else None
    game_of = np.arange(B)
    seat_of = _seats(game_of, P, rotate_seats)  # [row, agent] -> seat
    _seat_table(table, np.arange(B), seat_of)
    if deals is not None:
        deals.deal(engine, table, np.arange(B), game_of)
    seat_games = np.zeros((P, P), np.int64)
    _count_seats(seat_games, seat_of)
    next_game = B
    active = np.ones(B, bool)
    steps = 0
    while active.any():
        steps += table.step(active)
        done = np.flatnonzero(active & (engine.terminated | engine.truncated))
        if done.size == 0:
            continue
        won = np.take_along_axis(engine.rewards[done], seat_of[done], axis=1) > 0  # [rows, agent]
        on_finish(engine, done, won, seat_of[done], game_of[done])
        # Every started game is played to its end; rows are reused while games remain.
        restart = done[: max(0, min(done.size, num_games - next_game))]
        active[done[restart.size :]] = False
        if restart.size:
            game_of[restart] = np.arange(next_game, next_game + restart.size)
            seat_of[restart] = _seats(game_of[restart], P, rotate_seats)
            _seat_table(table, restart, seat_of[restart])
            _count_seats(seat_games, seat_of[restart])
            next_game += restart.size
            if deals is not None:
                deals.deal(engine, table, restart, game_of[restart])
            else:
                engine.reset(games=restart)
    return steps, seat_games


class DuplicateDeals:
    """Duplicate play: game g replays deal ``g // P`` with the seats rotated by ``g % P``.

    Each seat draws from a generator of the deal and the seat (``Table.seat_rngs``), not of the
    agent, so two copies of one agent replay each other's games exactly.
    """

    def __init__(self, seed: int, num_players: int) -> None:
        self.root = np.random.SeedSequence([int(seed), 0x0D0D])
        self.num_players = num_players

    def deal(self, engine: Engine, table: Table, rows: np.ndarray, games: np.ndarray) -> None:
        """Deal the games ``games`` (one per row of ``rows``) and give their seats their generators."""
        P = self.num_players
        seeds = np.zeros(engine.num_envs, np.uint64)
        if table.seat_rngs is None:
            table.seat_rngs = [[] for _ in range(engine.num_envs)]
        for r, g in zip(rows.tolist(), games.tolist(), strict=True):
            deal_ss = np.random.SeedSequence(self.root.entropy, spawn_key=(g // P,))
            game_ss, *seat_ss = deal_ss.spawn(P + 1)
            seeds[r] = game_ss.generate_state(1, np.uint64)[0]
            table.seat_rngs[r] = [np.random.default_rng(s) for s in seat_ss]
        engine.reset(seed=seeds, games=rows)


def _seat_table(table: Table, rows: np.ndarray, seat_of: np.ndarray) -> None:
    """The table's agent per seat of the games ``rows`` from ``seat_of`` ([rows, agent] -> seat)."""
    table.seat_agent[rows[:, None], seat_of] = np.arange(seat_of.shape[1])[None, :]


def _seats(game_ids: np.ndarray, num_players: int, rotate: bool) -> np.ndarray:
    """``[game, agent] -> seat``: agent i sits in seat ``(i + g) % P`` in game g when rotating."""
    shift = game_ids % num_players if rotate else np.zeros_like(game_ids)
    return (np.arange(num_players)[None, :] + shift[:, None]) % num_players


def _count_seats(seat_games: np.ndarray, seat_of: np.ndarray) -> None:
    """Add the seats of ``seat_of`` ([rows, agent]) to ``seat_games[agent, seat]``."""
    P = seat_games.shape[0]
    np.add.at(seat_games, (np.tile(np.arange(P), seat_of.shape[0]), seat_of.reshape(-1)), 1)
