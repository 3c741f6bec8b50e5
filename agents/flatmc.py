"""``FlatMCAgent``: determinized flat Monte Carlo search with batched rollouts inside the engine."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from uno_env import Engine, UnoRules
from uno_env.checks import check_int

from .beliefs import Belief
from .determinized import Deal, DeterminizedSearch


class FlatMCAgent(DeterminizedSearch):
    """Determinized flat Monte Carlo: deal the hidden cards from a belief, play out every legal move.

    Every move is played out in the same deals with the same rollout random numbers; the best mean
    wins unless it beats the blueprint's move by less than ``confidence`` standard errors of their
    paired difference. Settings: docs/agents.md, "Search settings".
    """

    name = "flatmc"
    default_rollouts = {2: 640}
    """rollouts per decision by table size when none are given; ``more_players_rollouts`` at the others"""
    more_players_rollouts = 1024
    timed_round_rollouts = 128
    """rollouts per round under a time budget: small rounds let the search stop close to it"""

    @classmethod
    def budget(cls, iterations: int | None, time_ms: float | None) -> dict[str, Any]:
        """The settings of a spec's budget (``search:N``, ``search:Tms``): N rollouts, or rounds of
        play-outs repeated until the time is spent."""
        if time_ms is not None:
            return {"rollouts": cls.timed_round_rollouts, "time_ms": time_ms}
        return {} if iterations is None else {"rollouts": iterations}

    def __init__(
        self,
        rules: UnoRules | None = None,
        rollouts: int | None = None,
        time_ms: float | None = None,
        heuristic_plies: int = 2,
        confidence: float | None = 1.0,
        max_depth: int = 120,
        belief: str | Belief = "net",
        peek: bool = False,
        blueprint: str | Mapping[int, str] = "heuristic",
    ) -> None:
        """``rules`` of the games it will play (``act``; ``act_in`` uses the engine's own)."""
        if rollouts is not None:
            check_int("rollouts", rollouts, 1)
        super().__init__(
            rules,
            time_ms=time_ms,
            heuristic_plies=heuristic_plies,
            confidence=confidence,
            max_depth=max_depth,
            belief=belief,
            peek=peek,
            blueprint=blueprint,
        )
        self.rollouts = None if rollouts is None else int(rollouts)

    def _search(
        self,
        source: Engine,
        i: int,
        seat: int,
        deal: Deal,
        moves: np.ndarray,
        base: int,
        rng: np.random.Generator,
    ) -> int:
        start = time.perf_counter()
        rollouts = self.rollouts or self.default_rollouts.get(source.num_players, self.more_players_rollouts)
        per_move = max(rollouts // moves.size, 1)
        rounds = []
        while True:
            rounds.append(self._play_out(source, i, seat, deal, moves, per_move, rng))
            if self.time_ms is None or (time.perf_counter() - start) * 1e3 >= self.time_ms:
                break
        v = np.concatenate(rounds, axis=1)  # [moves, rollouts per move]
        best = int(np.argmax(v.mean(1)))
        h = int(np.flatnonzero(moves == base)[0]) if base in moves else best
        if self.confidence is not None and best != h:
            diff = v[best] - v[h]
            se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.inf
            if not diff.mean() > self.confidence * se:
                best = h
        self.last_searched = True
        return int(moves[best])

    def _play_out(
        self,
        source: Engine,
        i: int,
        seat: int,
        deal: Deal,
        moves: np.ndarray,
        per_move: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Values [moves, per_move] for ``seat``: each move played in the same per_move determinizations."""
        rules, n, k = source.rules, source.num_players, moves.size
        size = per_move * k
        root = self._engine(("root", rules, n), per_move, n, rules)
        play = self._engine(("play", rules, n), size, n, rules)
        root.copy_game(source, i, 0)
        root.copy_games(root, np.zeros(per_move - 1, np.int64), np.arange(1, per_move))
        self._determinize(root, np.arange(per_move), seat, deal, rng)
        # Slot m * per_move + d of the rollout batch plays move m in determinization d.
        play.copy_games(root, np.tile(np.arange(per_move), k), np.arange(size))
        B = play.num_envs
        actions = np.full(B, -1, np.int64)
        actions[:size] = np.repeat(moves, per_move)
        active = np.zeros(B, bool)
        active[:size] = True
        values = np.zeros((B, n))
        result = play.step(actions)
        done = (result.terminated | result.truncated) & active
        values[done] = result.rewards[done]
        active &= ~done
        # Common random numbers: the rollouts of every move in determinization d draw the same
        # uniforms, so the moves' values differ by less noise.
        self._rollouts(play, active, values, rng, crn_period=per_move)
        return values[:size, seat].reshape(k, per_move)
