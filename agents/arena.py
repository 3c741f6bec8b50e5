"""The batched game loop (``play_games``) and ``play_match``: many games between agents, win rates with Wilson intervals.

``play_games`` is the one loop behind ``play_match`` and ``agents.tournament.play_table``."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from uno_env import Engine, UnoRules

from .base import Agent


def wilson_interval(wins: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    The bounds are exactly 0 at 0 wins and exactly 1 at ``n`` wins (the formula gives them up
    to rounding, e.g. 5.6e-17 for 0 of 3)."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    lo = 0.0 if wins <= 0 else max(0.0, center - half)
    hi = 1.0 if wins >= n else min(1.0, center + half)
    return (lo, hi)


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
        for name, w, r, (lo, hi) in zip(self.names, self.wins, self.win_rate, self.ci95):
            lines.append(f"{name}: {w}/{self.games} = {r:.3f} (95% CI {lo:.3f}–{hi:.3f})")
        return "\n".join(lines)


def _agent_name(agent: Agent) -> str:
    """The agent's ``name``, else its class name."""
    return str(getattr(agent, "name", type(agent).__name__))


def play_games(
    agents: Sequence[Agent],
    num_games: int,
    rules: UnoRules,
    seed: int,
    batch_size: int,
    on_finish: Callable[[Engine, np.ndarray, np.ndarray, np.ndarray], None],
    rotate_seats: bool = True,
    engine_access: bool = False,
) -> tuple[int, np.ndarray]:
    """Play ``num_games`` games with one agent per seat; returns (actions taken, seat_games).

    | aspect | what it does |
    |---|---|
    | batching | ``min(num_games, batch_size)`` games side by side in one ``Engine``; each step calls every agent once, on the rows where its seat is to act; a finished row is dealt the next game (``reset(games=...)``) until ``num_games`` were started |
    | seats | game g puts agent i in seat ``(i + g) % P`` with ``rotate_seats`` (over a multiple of P games every agent sits in every seat equally often), else seat i |
    | seeds | ``SeedSequence(seed)`` spawns P + 1 streams: the engine's games, then one generator per agent; the games are a function of ``seed`` and ``batch_size`` |
    | ``engine_access`` | an agent with ``act_in(engine, i, rng) -> action`` (``SearchAgent``) is asked game by game with the engine, so it can copy the game and re-deal what its seat cannot see; without it every agent acts on observations |
    | ``on_finish(engine, rows, won, seats)`` | called when games end, before their rows are reset: ``won[r, i]`` whether agent i's seat was rewarded +1, ``seats[r, i]`` its seat |
    | ``seat_games[i, s]`` | games agent i played in seat s |

    An agent must return one action id >= 0 per row (-1 would leave a game untouched forever).
    """
    if not isinstance(num_games, (int, np.integer)) or isinstance(num_games, bool) or num_games < 1:
        raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
    if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    P = len(agents)
    B = int(min(num_games, batch_size))
    game_ss, *agent_ss = np.random.SeedSequence(seed).spawn(P + 1)
    engine = Engine(B, P, rules, seed=int(game_ss.generate_state(1, np.uint64)[0]))
    rngs = [np.random.default_rng(s) for s in agent_ss]
    searching = [engine_access and callable(getattr(a, "act_in", None)) for a in agents]

    def seats_for(game_ids: np.ndarray) -> np.ndarray:
        shift = game_ids % P if rotate_seats else np.zeros_like(game_ids)
        return (np.arange(P)[None, :] + shift[:, None]) % P  # [rows, agent] -> seat

    seat_of = seats_for(np.arange(B))
    seat_games = np.zeros((P, P), np.int64)
    np.add.at(seat_games, (np.tile(np.arange(P), B), seat_of.reshape(-1)), 1)
    next_game = B
    active = np.ones(B, bool)
    steps = 0
    actions = np.empty(B, np.int64)
    while active.any():
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
                    f"agent {i} ({_agent_name(agent)}) must return one action id >= 0 per row; "
                    f"got {chosen!r} for {rows.size} rows"
                )
            actions[rows] = chosen
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
            seat_of[restart] = seats_for(np.arange(next_game, next_game + restart.size))
            np.add.at(seat_games, (np.tile(np.arange(P), restart.size), seat_of[restart].reshape(-1)), 1)
            next_game += restart.size
            engine.reset(games=restart)
    return steps, seat_games


def play_match(
    agents: Sequence[Agent],
    num_games: int,
    num_players: int = 2,
    rules: UnoRules | None = None,
    seed: int = 0,
    rotate_seats: bool = True,
    batch_size: int = 1024,
    engine_access: bool = False,
) -> MatchResult:
    """Play ``num_games`` games (episodes) with ``agents[i]`` in seat i, rotated, and count wins.

    The games run through ``play_games`` (seats, seeds, batching and ``engine_access`` are
    described there): with ``rotate_seats`` game g puts agent i in seat
    ``(i + g) % num_players``. A match is reproducible for a given ``seed`` and ``batch_size``.
    """
    P = int(num_players)
    if len(agents) != P:
        raise ValueError(f"need one agent per seat: {P} players but {len(agents)} agents")
    rules = UnoRules() if rules is None else rules
    start = time.perf_counter()
    wins = np.zeros(P, np.int64)
    no_winner = 0

    def count(engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray) -> None:
        nonlocal no_winner
        wins[:] += won.sum(0)
        no_winner += int((~won.any(1)).sum())

    steps, seat_games = play_games(agents, num_games, rules, seed, batch_size, count, rotate_seats, engine_access)
    return MatchResult(
        names=[_agent_name(a) for a in agents],
        games=int(num_games),
        wins=wins,
        no_winner=no_winner,
        steps=steps,
        seconds=time.perf_counter() - start,
        seat_games=seat_games,
    )
