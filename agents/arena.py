"""``play_match``: many games between agents, batched through one auto-resetting Engine."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from uno_env import Engine, UnoRules

from .base import Agent


def wilson_interval(wins: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    return (max(0.0, center - half), min(1.0, center + half))


@dataclass
class MatchResult:
    """Outcome of ``play_match``: wins per agent (in the order given) over ``games`` games."""

    names: list[str]
    games: int
    wins: np.ndarray  # int64 [num_agents]: games in which the agent's seat was rewarded +1
    no_winner: int  # truncated games (R8 max_turns), counted as a loss for every agent
    steps: int  # engine actions taken over all games
    seconds: float
    seat_games: np.ndarray = field(repr=False)  # int64 [num_agents, num_players]

    @property
    def win_rate(self) -> np.ndarray:
        """Fraction of games won per agent."""
        return self.wins / max(self.games, 1)

    @property
    def ci95(self) -> list[tuple[float, float]]:
        """95% Wilson interval of each agent's win rate."""
        return [wilson_interval(float(w), self.games) for w in self.wins]

    def summary(self) -> str:
        """One line per agent: wins, rate and interval."""
        lines = []
        for name, w, r, (lo, hi) in zip(self.names, self.wins, self.win_rate, self.ci95):
            lines.append(f"{name}: {w}/{self.games} = {r:.3f} (95% CI {lo:.3f}–{hi:.3f})")
        return "\n".join(lines)


def _agent_name(agent: Agent) -> str:
    """The agent's ``name``, else its class name."""
    return str(getattr(agent, "name", type(agent).__name__))


def play_match(
    agents: Sequence[Agent],
    num_games: int,
    num_players: int = 2,
    rules: UnoRules | None = None,
    seed: int = 0,
    rotate_seats: bool = True,
    batch_size: int = 1024,
) -> MatchResult:
    """Play ``num_games`` games (episodes) with ``agents[i]`` in seat i, rotated, and count wins.

    All games run in one ``Engine(autoreset=True)``; each step calls every agent once, on the
    rows where its seat is to act. With ``rotate_seats`` game g puts agent i in seat
    ``(i + g) % num_players``, so over a multiple of ``num_players`` games every agent sits in
    every seat equally often. Each agent draws its randomness from its own generator spawned
    from ``seed``, so a match is reproducible for a given ``seed`` and ``batch_size``.
    """
    P = int(num_players)
    if len(agents) != P:
        raise ValueError(f"need one agent per seat: {P} players but {len(agents)} agents")
    if not isinstance(num_games, (int, np.integer)) or num_games < 1:
        raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
    rules = UnoRules() if rules is None else rules
    B = int(min(num_games, batch_size))
    start = time.perf_counter()
    engine = Engine(B, P, rules, seed=seed, autoreset=True)
    agent_rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(P)]

    def seats_for(game_ids: np.ndarray) -> np.ndarray:
        shift = game_ids % P if rotate_seats else np.zeros_like(game_ids)
        return (np.arange(P)[None, :] + shift[:, None]) % P  # [rows, agent] -> seat

    seat_of = seats_for(np.arange(B))
    seat_games = np.zeros((P, P), np.int64)
    np.add.at(seat_games, (np.tile(np.arange(P), B), seat_of.reshape(-1)), 1)
    next_game = B
    active = np.ones(B, bool)
    wins = np.zeros(P, np.int64)
    no_winner = 0
    steps = 0
    actions = np.empty(B, np.int64)
    obs, mask, current = engine.observation, engine.legal_mask, engine.current_player
    while active.any():
        actions.fill(-1)
        for i, agent in enumerate(agents):
            rows = np.flatnonzero(active & (seat_of[:, i] == current))
            if rows.size:
                chosen = np.asarray(agent.act(obs[rows], mask[rows], agent_rngs[i]))
                # -1 would leave the game untouched and the match would never end.
                if chosen.shape != rows.shape or (chosen < 0).any():
                    raise ValueError(
                        f"agent {i} ({_agent_name(agent)}) must return one action id >= 0 per row; "
                        f"got {chosen!r} for {rows.size} rows"
                    )
                actions[rows] = chosen
        steps += int((actions >= 0).sum())
        result = engine.step(actions)
        obs, mask, current = result.observation, result.legal_mask, result.current_player
        done = np.flatnonzero(active & (result.terminated | result.truncated))
        if done.size == 0:
            continue
        # Reward of each agent in each finished game: the engine's rewards are per seat.
        rewards = np.take_along_axis(result.rewards[done], seat_of[done], axis=1)
        wins += (rewards > 0).sum(0)
        no_winner += int((~(result.rewards[done] > 0).any(1)).sum())
        # The engine has already dealt a new game in each finished row; keep it only while
        # games remain to be started, so every started game is played to its end.
        for row in done:
            if next_game < num_games:
                seat_of[row] = seats_for(np.array([next_game]))[0]
                seat_games[np.arange(P), seat_of[row]] += 1
                next_game += 1
            else:
                active[row] = False
    return MatchResult(
        names=[_agent_name(a) for a in agents],
        games=int(num_games),
        wins=wins,
        no_winner=no_winner,
        steps=steps,
        seconds=time.perf_counter() - start,
        seat_games=seat_games,
    )
