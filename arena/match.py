"""The batched game loop (``play_games``) and ``play_match``: many games between agents, win rates with Wilson intervals.

``play_games`` is the one loop behind ``play_match`` and ``arena.tournament.play_table``.

| aspect | what ``play_games`` does |
|---|---|
| batching | ``min(num_games, batch_size)`` games side by side in one ``Engine``; each step calls every agent once, on the rows where its seat is to act; a finished row is dealt the next game (``reset(games=...)``) until ``num_games`` were started |
| seats | game g puts agent i in seat ``(i + g) % P`` with ``rotate_seats`` (over a multiple of P games every agent sits in every seat equally often), else seat i |
| seeds | ``SeedSequence(seed)`` spawns P + 1 streams: the engine's games, then one generator per agent; the games are a function of ``seed`` and ``batch_size`` |
| ``duplicate`` | duplicate deals (``DuplicateDeals``): game g replays deal ``g // P`` (same deck, same draws) with the seats rotated by ``g % P``; each seat's generator comes from the deal, so the games do not depend on ``batch_size``, and results get paired intervals over deals (``arena.ratings.paired_interval``) |
| agents | asked through one ``uno_env.table.Table`` (the engine keeps the public history the agents read, ``history_length``): ``engine_access`` lets an agent with ``act_in(engine, i, rng) -> action`` (``FlatMCAgent``) be asked game by game with the engine, so it can copy the game and re-deal what its seat cannot see; without it every agent acts on observations |
| ``on_finish(engine, rows, won, seats, games)`` | called when games end, before their rows are reset: ``won[r, i]`` whether agent i's seat was rewarded +1, ``seats[r, i]`` its seat, ``games[r]`` the game's number |
| ``seat_games[i, s]`` | games agent i played in seat s |
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from uno_env import Agent, Engine, UnoRules, parse_rules
from uno_env.checks import is_int
from uno_env.table import Table, agent_label, history_length_of, wanted_history

from .ratings import paired_interval, wilson_interval

__all__ = ["WinRates", "MatchResult", "agent_name", "play_games", "play_match"]

OnFinish = Callable[[Engine, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]


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
        """95% interval of each agent's win rate: paired over deals with duplicate deals, else Wilson."""
        deal_wins = getattr(self, "deal_wins", None)
        if deal_wins is not None:
            return [paired_interval(deal_wins[:, i] / self.rotations) for i in range(deal_wins.shape[1])]
        return [wilson_interval(float(w), self.games) for w in self.wins]

    @property
    def rotations(self) -> int:
        """Games per deal with duplicate deals (the number of seats)."""
        return len(self.wins)


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
    deal_wins: np.ndarray | None = field(default=None, repr=False)  # duplicate: int64 [deals, agents]

    def summary(self) -> str:
        """One line per agent: wins, rate and interval."""
        lines = []
        for name, w, r, (lo, hi) in zip(self.names, self.wins, self.win_rate, self.ci95, strict=True):
            lines.append(f"{name}: {w}/{self.games} = {r:.3f} (95% CI {lo:.3f}–{hi:.3f})")
        return "\n".join(lines)


agent_name = agent_label  # the agent's ``name``, else its class name


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
    duplicate: bool = False,
) -> tuple[int, np.ndarray]:
    """Play ``num_games`` games with one agent per seat (module table); returns (actions taken, seat_games).

    The agents are asked through one ``uno_env.table.Table`` (seat routing, the ``act_in``
    protocol, the answer checks). With ``record`` the engine records its games, so ``on_finish``
    can read ``engine.record(row)`` of each finished row before the row is dealt a new game.
    With ``duplicate`` (seats rotated; ``num_games`` a multiple of the players) game g replays
    deal ``g // P`` (``duplicate_deals``).
    """
    _check_positive("num_games", num_games)
    _check_positive("batch_size", batch_size)
    P = len(agents)
    if duplicate and (not rotate_seats or num_games % P):
        raise ValueError(
            f"duplicate deals play every deal once per seat rotation: rotate_seats must be True and num_games a "
            f"multiple of the {P} players, got num_games={num_games}, rotate_seats={rotate_seats}"
        )
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

    Every game of a deal gets the deal's engine seed (the same deck order and the same generator
    for every later draw) and, for each seat, the deal's own generator of that seat: an agent's
    randomness depends on the deal and the seat it sits in, not on who sits at the table, so
    two copies of one agent replay each other's games exactly (agents are then asked game by
    game, ``Table.seat_rngs``).
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


def play_recorded(
    agents: Sequence[Agent], num_games: int, rules: UnoRules, seed: int = 0, batch_size: int = 1024
) -> list[dict[str, Any]]:
    """Records (``Engine.record``) of ``num_games`` games with agent k in seat k (no rotation)."""
    records: list[dict[str, Any]] = []

    def keep(engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray, games: np.ndarray) -> None:
        records.extend(engine.record(int(r)) for r in rows)

    play_games(agents, num_games, rules, seed, batch_size, keep, rotate_seats=False, record=True)
    return records


def _check_positive(name: str, value: Any) -> None:
    if not is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _seats(game_ids: np.ndarray, num_players: int, rotate: bool) -> np.ndarray:
    """``[game, agent] -> seat``: agent i sits in seat ``(i + g) % P`` in game g when rotating."""
    shift = game_ids % num_players if rotate else np.zeros_like(game_ids)
    return (np.arange(num_players)[None, :] + shift[:, None]) % num_players


def _count_seats(seat_games: np.ndarray, seat_of: np.ndarray) -> None:
    """Add the seats of ``seat_of`` ([rows, agent]) to ``seat_games[agent, seat]``."""
    P = seat_games.shape[0]
    np.add.at(seat_games, (np.tile(np.arange(P), seat_of.shape[0]), seat_of.reshape(-1)), 1)


def play_match(
    agents: Sequence[Agent],
    num_games: int,
    num_players: int = 2,
    rules: Any = None,
    seed: int = 0,
    rotate_seats: bool = True,
    batch_size: int = 1024,
    engine_access: bool = False,
    duplicate: bool = False,
) -> MatchResult:
    """Play ``num_games`` games (episodes) with ``agents[i]`` in seat i, rotated, and count wins.

    The games run through ``play_games`` (seats, seeds, batching, ``engine_access`` and
    ``duplicate`` are described there): with ``rotate_seats`` game g puts agent i in seat
    ``(i + g) % num_players``. A match is reproducible for a given ``seed`` and ``batch_size``
    (with ``duplicate``, for a given ``seed``). ``rules``: anything ``uno_env.parse_rules``
    takes (default classic). With ``duplicate`` the result's ``deal_wins`` holds each deal's
    wins and ``ci95`` is paired over the deals.
    """
    P = int(num_players)
    if len(agents) != P:
        raise ValueError(f"need one agent per seat: {P} players but {len(agents)} agents")
    start = time.perf_counter()
    wins = np.zeros(P, np.int64)
    no_winner = 0
    deal_wins = np.zeros((num_games // P, P), np.int64) if duplicate else None

    def count(engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray, games: np.ndarray) -> None:
        nonlocal no_winner
        wins[:] += won.sum(0)
        no_winner += int((~won.any(1)).sum())
        if deal_wins is not None:
            np.add.at(deal_wins, games // P, won.astype(np.int64))

    steps, seat_games = play_games(
        agents, num_games, parse_rules(rules), seed, batch_size, count, rotate_seats, engine_access, duplicate=duplicate
    )
    return MatchResult(
        names=[agent_name(a) for a in agents],
        games=int(num_games),
        wins=wins,
        no_winner=no_winner,
        steps=steps,
        seconds=time.perf_counter() - start,
        seat_games=seat_games,
        deal_wins=deal_wins,
    )
