"""``play_engine_match``: like ``play_match``, but agents with ``act_in`` get the engine itself."""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from uno_env import Engine, UnoRules

from .arena import MatchResult
from .base import Agent


def play_engine_match(
    agents: Sequence[Agent],
    num_games: int,
    num_players: int = 2,
    rules: UnoRules | None = None,
    seed: int = 0,
    rotate_seats: bool = True,
    batch_size: int = 256,
) -> MatchResult:
    """Play ``num_games`` rounds with ``agents[i]`` in seat i (rotated per game) and count wins.

    The same seat rotation, seeding and counting as ``agents.play_match``; the difference is
    that an agent with a method ``act_in(engine, i, rng) -> action`` (``SearchAgent``) is asked
    game by game with the engine and the game index, so it can copy the game and re-deal what
    its seat cannot see (see ``SearchAgent``); every other agent acts on the batch of its rows.
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
    searching = [callable(getattr(a, "act_in", None)) for a in agents]

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
            if rows.size == 0:
                continue
            if searching[i]:
                for r in rows:
                    actions[r] = agent.act_in(engine, int(r), agent_rngs[i])
            else:
                actions[rows] = agent.act(obs[rows], mask[rows], agent_rngs[i])
        steps += int((actions >= 0).sum())
        result = engine.step(actions)
        done = np.flatnonzero(active & (result.terminated | result.truncated))
        if done.size == 0:
            continue
        rewards = np.take_along_axis(result.rewards[done], seat_of[done], axis=1)
        wins += (rewards > 0).sum(0)
        no_winner += int((~(result.rewards[done] > 0).any(1)).sum())
        for row in done:
            if next_game < num_games:
                seat_of[row] = seats_for(np.array([next_game]))[0]
                seat_games[np.arange(P), seat_of[row]] += 1
                next_game += 1
            else:
                active[row] = False
    return MatchResult(
        names=[str(getattr(a, "name", type(a).__name__)) for a in agents],
        games=int(num_games),
        wins=wins,
        no_winner=no_winner,
        steps=steps,
        seconds=time.perf_counter() - start,
        seat_games=seat_games,
    )
