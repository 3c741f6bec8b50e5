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

    For one decision of seat ``s``:

    1. **Determinize.** ``D`` copies of the game are made in which everything ``s`` cannot see
       is dealt anew (``DeterminizedSearch``): the other hands (their sizes kept) and the order
       of the draw pile, from the cards ``s`` has not seen (deck − own hand − discard pile),
       uniformly among the deals its ``belief`` allows (``agents.beliefs``: ``public`` deals a
       seat that last ended its turn drawing on colour c no card of c and no wild), or in
       proportion to the belief's soft evidence (``net``, the default: the learned belief
       network's reading of the whole round, at 2 and 4 players); the engine's generator of
       each copy is reseeded. What ``s`` sees (R11) is kept exactly.
    2. **Play out.** Every legal move ``m`` is applied in each of the ``D`` copies (the same
       determinizations for every move, and the same rollout random numbers, so the moves are
       compared on the same deals), and each copy is finished by a rollout
       (``DeterminizedSearch._rollouts``): all ``D × moves`` games are stepped together in one
       ``Engine`` batch. The first ``heuristic_plies`` actions after the move are
       ``HeuristicAgent``'s (the opponents' answer to the move matters most), the rest
       RLCard's ``uno-rule-v1`` for every seat.
    3. **Pick** the move with the best mean value, but keep the blueprint's move
       (``HeuristicAgent``'s, or with ``blueprint="pretrained"`` the shipped policy's) unless
       the best one beats it by more than ``confidence`` standard errors of their paired
       difference: among near-equal moves the rollout noise would otherwise decide. The search
       improves on the blueprint it starts from (SPARTA's search on top of a blueprint).

    | setting | default | meaning |
    |---|---|---|
    | ``rollouts`` | None | play-outs per decision, split evenly among the legal moves (``D = rollouts // moves``, at least 1); None: 640 at 2 players, 1,024 at more (``default_rollouts``) |
    | ``time_ms`` | None | if set: rounds of ``rollouts`` play-outs repeated until this time is spent (at least one; the agent is then no longer deterministic given the rng) |
    | ``heuristic_plies`` | 2 | first actions of every rollout taken by ``HeuristicAgent`` |
    | ``confidence`` | 1.0 | standard errors by which a move must beat the blueprint's move (None: always the best mean) |
    | ``max_depth`` | 120 | actions per rollout before the leaf value |
    | ``belief`` | ``"net"`` | what the determinizations may deal (``agents.beliefs.BELIEFS``: ``"uniform"``, ``"public"``, ``"net"``, ..., or a ``Belief``) |
    | ``peek`` | False | True: the determinizations keep every true hand and shuffle only the draw pile — reads hidden state, a measurement of the perfect-information ceiling, not a fair agent (``DeterminizedSearch``) |
    | ``blueprint`` | ``"heuristic"`` | the policy whose move is kept unless beaten, and that takes the decisions not searched: ``"heuristic"``, ``"pretrained"`` (the shipped model trained for the table, run in numpy; the heuristic where none was), ``"belief"`` (the shipped policy that reads the round through the belief network, ``agents.belief_policy``, where one was trained for the table; else as ``"pretrained"``), or by table size (``{2: "pretrained"}``: the heuristic elsewhere); the registry's ``search`` takes ``agents.registry.SEARCH_BLUEPRINT`` |

    Measured figures (win rates against ``HeuristicAgent``, decision times, the belief's
    effect) are in ``benchmarks/results/search.md``; the decisions that are not searched and
    why the search never reads hidden state are ``DeterminizedSearch``'s.

    Version history:

    - unreleased: dealt from the ``net`` belief with 640 rollouts at 2 players and 1,024 at
      more by default (was 2,900 from ``public``; ``benchmarks/results/search.md``);
      ``flatmc:2900@public`` plays as before. The ``blueprint`` setting (``"heuristic"``, as
      before, by default); the registry's ``search`` starts from the shipped policy trained for the
      table, and at 2 players from the one that reads the belief network (``"belief"``).
    """

    name = "flatmc"
    default_rollouts = {2: 640}
    """rollouts per decision by table size when none are given; 1,024 at the others (more
    hidden hands need more deals; ``benchmarks/results/search.md``)"""
    more_players_rollouts = 1024
    timed_round_rollouts = 128
    """rollouts per round under a time budget: small rounds let the search stop close to it
    (``benchmarks/results/search.md``)"""

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
        """``rules`` of the games it will play (its deck and points for ``act``; ``act_in``
        uses the engine's own); the other settings are in the class table."""
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
