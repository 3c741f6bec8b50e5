"""The single-learner envs' ``reward`` option: what a finished round pays each seat (docs/spaces.md).

``win`` is the engine's own reward; ``score`` and ``rank`` are read from the finished round's hands
(R8 ``card_points``) before the driver deals the game anew."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .checks import check_reward
from .engine.layout import G_WINNERS
from .rules import MAX_PLAYERS

__all__ = ["SCORE_SCALE", "round_rewards"]

WIN, SCORE, RANK = 0, 1, 2  # the kernels' codes, REWARDS' indices

# Points per unit of the "score" reward: a round's points run to a few hundred, so the rewards stay
# within a few units of the +-1 of "win" and the same PPO settings apply.
SCORE_SCALE = 100.0


@njit(cache=True)
def seat_rewards(mode, g, hands, points, n, teams, b, out):
    """Every seat's reward (a ``REWARDS`` code) of game b's terminated round, into ``out[:n]``.

    A side is a seat, or under ``teams`` a pair of partners (seat i and i + n/2), who share its reward."""
    sides = n // 2 if teams else n
    winners = g[b, G_WINNERS]
    side_points = np.zeros(MAX_PLAYERS, np.int64)
    side_won = np.zeros(MAX_PLAYERS, np.bool_)
    for p in range(n):
        s = p % sides
        for t in range(points.shape[0]):
            side_points[s] += hands[b, p, t] * points[t]
        if (winners >> p) & 1:
            side_won[s] = True
    won = 0
    lost_points = 0
    for s in range(sides):
        if side_won[s]:
            won += 1
        else:
            lost_points += side_points[s]
    for p in range(n):
        s = p % sides
        if mode == WIN:
            out[p] = 1.0 if (winners >> p) & 1 else -1.0  # the engine's own (kernels.finish)
        elif mode == SCORE:
            if side_won[s]:
                out[p] = lost_points / (won * SCORE_SCALE)
            else:
                out[p] = -side_points[s] / SCORE_SCALE
        elif sides == 2:
            out[p] = 1.0 if side_won[s] else -1.0  # rank at two sides is the win reward
        else:
            if side_won[s]:
                place = (won - 1) / 2.0  # tied winners share the first places
            else:
                fewer = 0
                tied = 0
                for o in range(sides):
                    if not side_won[o]:
                        if side_points[o] < side_points[s]:
                            fewer += 1
                        elif side_points[o] == side_points[s]:
                            tied += 1
                place = won + fewer + (tied - 1) / 2.0
            out[p] = 1.0 - 2.0 * place / (sides - 1)


@njit(cache=True)
def rewards_of(mode, g, hands, points, n, teams, terminated, rows, out):
    """``seat_rewards`` of the games ``rows`` into ``out[j, :n]``; rows not terminated stay 0."""
    row = np.zeros(MAX_PLAYERS, np.float64)
    for j in range(rows.shape[0]):
        b = rows[j]
        if terminated[b]:
            seat_rewards(mode, g, hands, points, n, teams, b, row)
            for p in range(n):
                out[j, p] = row[p]


def round_rewards(engine: Any, reward: str, games: Any = None) -> np.ndarray:
    """Every seat's ``reward`` of the finished rounds of ``games`` (indices; default all), float32 [G, num_players].

    Read from the rounds' hands and winners, so valid as long as a finished game is not dealt anew (the
    engine's ``rewards`` only in the step that ended it); a game not terminated (a truncated round, or
    one still in play) gives 0 to every seat, as ``win`` does."""
    mode = check_reward(reward, engine.rules.episode)
    rows = np.arange(engine.num_envs) if games is None else np.atleast_1d(np.asarray(games, np.int64))
    out = np.zeros((rows.size, engine.num_players), np.float32)
    g, _pl, hands = engine.state_arrays[:3]
    points = np.array(engine.rules.points, np.int64)
    rewards_of(mode, g, hands, points, engine.num_players, engine.rules.teams, engine.terminated, rows, out)
    return out
