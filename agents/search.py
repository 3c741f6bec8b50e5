"""``SearchAgent``: determinized Monte Carlo search with batched rollouts inside the engine."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit

from uno_env import Engine, UnoRules
from uno_env.cards import NUM_CARD_TYPES
from uno_env.observation import (
    OBS_DIRECTION,
    OBS_DISCARD,
    OBS_DRAW_PILE,
    OBS_HAND,
    OBS_SCORES,
    PHASE_PLAY,
    PHASE_RESPOND_DRAW_FOUR,
    SCORE_SCALE,
    color_of,
    hand_size_at,
    in_play,
    num_seats,
    phase_of,
    top_of,
)
from uno_env.policy import as_batch

from ._simple_rules import rlcard_row
from ._tactics import rule_tables, uno_call_action
from .heuristic import HeuristicAgent

# --- rollouts: one numba call per engine step -------------------------------------------------


@njit(cache=True)
def _rollout_actions(obs, mask, active, u, wilds_match, out):
    """The rollout policy's action (RLCardRuleAgent's) in every active game, -1 in the others."""
    for b in range(obs.shape[0]):
        out[b] = rlcard_row(obs[b], mask[b], u[b], phase_of(obs[b]), wilds_match) if active[b] else -1


@njit(cache=True)
def _collect(term, trunc, rewards, seat, active, value):
    """Record the searcher's reward in games that just ended; True while any game is active."""
    left = False
    for b in range(active.shape[0]):
        if active[b]:
            if term[b] or trunc[b]:
                value[b] = rewards[b, seat]
                active[b] = False
            else:
                left = True
    return left


@njit(cache=True)
def _leaf_values(obs, active, value):
    """Value of a rollout cut at the depth limit, from the searcher's observation.

    Each seat still in play is credited a chance of winning proportional to 1 / hand size,
    mapped to the reward scale (+1 win, -1 loss): fewer cards than the others is good.
    """
    for b in range(obs.shape[0]):
        if not active[b]:
            continue
        o = obs[b]
        n = num_seats(o)
        total = 0.0
        for k in range(n):
            if in_play(o, k):
                total += 1.0 / max(hand_size_at(o, k), 1)
        mine = 1.0 / max(hand_size_at(o, 0), 1)
        value[b] = 2.0 * mine / total - 1.0


# --- determinizations from an observation (phase play) -----------------------------------------


def _deal_from_observation(target: Engine, j: int, o: np.ndarray, deck: np.ndarray, rng: np.random.Generator) -> bool:
    """Put in game j of ``target`` a position consistent with observation ``o`` (phase play).

    The observer sits in seat 0 and relative slot k in seat k, so ``target`` seats are the
    observation's slots. Unseen cards (deck minus own hand minus discard pile) are dealt at
    random to the other hands (their sizes are public) and the draw pile. Returns False when
    the observation cannot be rebuilt this way (then the caller decides otherwise).
    """
    n = target.num_players
    own = np.rint(o[OBS_HAND : OBS_HAND + NUM_CARD_TYPES]).astype(np.int64)
    discard = np.rint(o[OBS_DISCARD : OBS_DISCARD + NUM_CARD_TYPES]).astype(np.int64)
    unseen = deck - own - discard
    top = int(top_of(o))
    if (unseen < 0).any() or top < 0 or discard[top] < 1:
        return False
    pool = rng.permutation(np.repeat(np.arange(NUM_CARD_TYPES), unseen))
    sizes = [int(hand_size_at(o, k)) for k in range(n)]
    hands = [np.repeat(np.arange(NUM_CARD_TYPES), own).tolist()]
    at = 0
    for k in range(1, n):
        hands.append(pool[at : at + sizes[k]].tolist())
        at += sizes[k]
    draw = pool[at:]
    if at > pool.size or draw.size != int(round(o[OBS_DRAW_PILE])):
        return False
    below = discard.copy()
    below[top] -= 1
    rest = rng.permutation(np.repeat(np.arange(NUM_CARD_TYPES), below)).tolist()
    color = int(color_of(o))
    try:
        target.set_game(
            j,
            hands=hands,
            discard_pile=rest + [top],
            draw_pile=draw.tolist(),
            current_player=0,
            current_color=color if color >= 0 else None,
            direction=1 if o[OBS_DIRECTION] > 0 else -1,
            scores=[int(round(SCORE_SCALE * o[OBS_SCORES + k])) for k in range(n)],
        )
    except ValueError:
        return False
    return True


class SearchAgent:
    """Determinized Monte Carlo search: sample the hidden cards, play out every legal move.

    For one decision of seat ``s``:

    1. **Determinize.** ``D`` copies of the game are made in which everything ``s`` cannot see
       is dealt anew at random: the other hands (their sizes kept) and the order of the draw
       pile, from the cards ``s`` has not seen (deck − own hand − discard pile); the engine's
       generator of each copy is reseeded. What ``s`` sees (R11) is kept exactly.
    2. **Play out.** Every legal move ``m`` is applied in each of the ``D`` copies (the same
       determinizations for every move, and the same rollout random numbers, so the moves are
       compared on the same deals), and each copy is finished by a rollout: all ``D × moves``
       games are stepped together in one ``Engine`` batch. The first ``heuristic_plies``
       actions of each rollout are ``HeuristicAgent``'s (the opponents' answer to the move is
       the part that matters most), the rest follow the rollout policy for every seat, until
       the round ends (the reward of ``s``, +1/−1) or ``max_depth`` actions were taken (then a
       leaf value: ``s`` wins with chance ∝ 1/hand size among the seats in play, as ±1).
    3. **Pick** the move with the best mean value, but keep ``HeuristicAgent``'s own move
       unless the best one beats it by more than ``confidence`` standard errors of their
       paired difference: among near-equal moves the rollout noise would otherwise decide.

    The rollout policy is ``RLCardRuleAgent``'s (RLCard's ``uno-rule-v1``, the numba code in
    ``agents/_simple_rules.py``): a uniformly random legal coloured card, a wild only when no
    coloured card fits (naming the colour it holds most), draw only when nothing fits, play a
    playable drawn card, never bluff or challenge, stack a penalty when it can, swap with the
    smallest hand, call and catch UNO. It runs over the whole batch in one numba call per
    step (about 0.07 µs a decision, against about 0.6 µs for the engine step, which is ~70% of
    a search's time).

    | setting | default | meaning |
    |---|---|---|
    | ``rollouts`` | 2900 | play-outs per decision, split evenly among the legal moves (``D = rollouts // moves``, at least 1) |
    | ``time_ms`` | None | if set: rounds of ``rollouts`` play-outs repeated until this time is spent (at least one; the agent is then no longer deterministic given the rng) |
    | ``heuristic_plies`` | 2 | first actions of every rollout taken by ``HeuristicAgent`` |
    | ``confidence`` | 1.0 | standard errors by which a move must beat the heuristic's move (None: always the best mean) |
    | ``max_depth`` | 120 | actions per rollout before the leaf value |

    The default budget comes from measurements (2 players, classic, against ``HeuristicAgent``,
    ``benchmarks/search_agent.py``; ``benchmarks/results/search.md``): the win rate grows with
    the rollouts (about 46% at 256, 51–53% at 512, 54.3% at 1024 over 10,000 games), and
    2900 won 58.4% (56.2–60.5%) over 2,000 games with a median searched decision of 30 ms of
    CPU time on the 2-core development machine (target: 57% within 50 ms), where
    ``ISMCTSAgent`` at equal time won 53.8%; a second 2,000 games (other seeds, idle machine)
    won 56.5% at a median of 26.4 ms, 57.4% (55.9–58.9%) over the 4,000.

    | decision | what decides |
    |---|---|
    | one legal action | that action, no search |
    | CALL_UNO / CATCH_UNO offered (R7 explicit) | taken at once (they only help, as in the heuristic) |
    | respond to a Wild Draw Four (R6) | ``HeuristicAgent`` (see below) |
    | any other decision, with ``act_in(engine, i, rng)`` | search |
    | phase ``play``, with ``act(observation, mask, rng)`` only | search |
    | other phases, with ``act`` only | ``HeuristicAgent`` |

    **Why the search never reads hidden state.** Two entry points build the determinizations:

    - ``act_in(engine, i, rng)`` (``arena.play_match(..., engine_access=True)``, ``uno-play``,
      anyone holding the engine): ``Engine.copy_game`` copies game ``i`` into a scratch engine
      and every card the seat cannot see is at once re-dealt (``Engine.resample_hidden``'s
      contract, batched; the hidden cards are gathered in id order before the shuffle, so the
      deal depends on which cards are hidden, not on where they were); the generator state is
      replaced too (it would fix future reshuffles). The true hidden cards are overwritten
      before any rollout runs, so the decision is a function of the player's information set and
      the rng only (a test checks two games that differ only in hidden cards give the same
      decisions). One hidden fact survives a copy: whether a pending Wild Draw Four was a bluff
      (the engine judges a challenge on the hand at the time it was played), so the challenge
      decision is never searched; ``HeuristicAgent`` estimates it from public odds. With
      ``open_hands`` the other hands are re-dealt too: the search does not use what it could
      see.
    - ``act(observation, action_mask, rng)`` (the batch ``Agent`` protocol: env layers,
      ``arena.play_match``): no engine is at hand, so the position is rebuilt from the
      observation alone with ``Engine.set_game`` (phase ``play`` only: own hand, top card and
      colour, direction, hand sizes, scores and the discard pile's contents, the unseen cards
      dealt at random; the discard pile's order below the top card is not observed and does
      not matter, a reshuffle shuffles it). UNO calls, eliminations and the other phases
      cannot be rebuilt this way: those decisions follow ``HeuristicAgent``.

    A simplification: the re-deal is uniform over the unseen cards; it does not condition on
    the public history (``drew_on_color``: a seat that drew on a colour held none of it then),
    so a determinization may give a seat a card the history says it lacked. The first
    ``heuristic_plies`` of every rollout do read that history (``HeuristicAgent``).

    The copies and the re-deal are one engine call each for the whole batch
    (``Engine.copy_games``, ``Engine.resample_hidden`` over many games, which also gives every
    determinization a fresh generator state: the copied one would fix future reshuffles).
    """

    name = "flatmc"

    def __init__(
        self,
        rules: UnoRules | None = None,
        rollouts: int = 2900,
        time_ms: float | None = None,
        heuristic_plies: int = 2,
        confidence: float | None = 1.0,
        max_depth: int = 120,
    ) -> None:
        """``rules`` of the games it will play (its deck and points for ``act``; ``act_in``
        uses the engine's own); the other settings are in the class table."""
        if not isinstance(rollouts, (int, np.integer)) or rollouts < 1:
            raise ValueError(f"rollouts must be a positive integer, got {rollouts!r}")
        if not isinstance(max_depth, (int, np.integer)) or max_depth < 1:
            raise ValueError(f"max_depth must be a positive integer, got {max_depth!r}")
        if not isinstance(heuristic_plies, (int, np.integer)) or heuristic_plies < 0:
            raise ValueError(f"heuristic_plies must be an integer >= 0, got {heuristic_plies!r}")
        if time_ms is not None and not (isinstance(time_ms, (int, float)) and time_ms > 0):
            raise ValueError(f"time_ms must be None or a positive number of milliseconds, got {time_ms!r}")
        if confidence is not None and not (isinstance(confidence, (int, float)) and confidence >= 0):
            raise ValueError(f"confidence must be None or a number >= 0, got {confidence!r}")
        self.rules = UnoRules() if rules is None else rules
        self.rollouts = int(rollouts)
        self.time_ms = time_ms
        self.heuristic_plies = int(heuristic_plies)
        self.confidence = confidence
        self.max_depth = int(max_depth)
        self._deck = rule_tables(self.rules)[0]
        self._heuristics: dict[UnoRules, HeuristicAgent] = {}
        self._engines: dict[Any, Engine] = {}
        self.last_searched = False  # whether the last decision was searched (for timings)

    # --- the two entry points --------------------------------------------------------------

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action per row, searching positions rebuilt from each observation."""
        self.last_searched = False
        obs, mask = as_batch(observation, action_mask)
        out = np.empty(obs.shape[0], np.int64)
        fallback = []
        for b in range(obs.shape[0]):
            a = self._trivial(mask[b])
            if a < 0 and phase_of(obs[b]) == PHASE_PLAY:
                a = self._search_observation(obs[b], mask[b], rng)
            if a >= 0:
                out[b] = a
            else:
                fallback.append(b)
        if fallback:
            out[fallback] = self._heuristic(self.rules).act(obs[fallback], mask[fallback], rng)
        return out

    def act_in(self, engine: Engine, i: int, rng: np.random.Generator) -> int:
        """The action for the player to act in game ``i`` of ``engine`` (see the class docs)."""
        self.last_searched = False
        o = engine.observation[i]
        if not o.any():  # an Engine(observations=False) leaves it zero; observe() still works
            o = engine.observe(int(engine.current_player[i]))[i]
        m = engine.legal_mask[i]
        a = self._trivial(m)
        if a >= 0:
            return a
        base = int(self._heuristic(engine.rules).act(o[None], m[None], rng)[0])
        if phase_of(o) == PHASE_RESPOND_DRAW_FOUR:
            return base
        moves = np.flatnonzero(m)
        if moves.size == 1:
            return int(moves[0])
        return self._search(engine, int(i), int(engine.current_player[i]), moves, base, rng)

    # --- search ----------------------------------------------------------------------------

    @staticmethod
    def _trivial(m: np.ndarray) -> int:
        moves = np.flatnonzero(m)
        if moves.size == 1:
            return int(moves[0])
        return int(uno_call_action(m))

    def _heuristic(self, rules: UnoRules) -> HeuristicAgent:
        agent = self._heuristics.get(rules)
        if agent is None:
            agent = self._heuristics[rules] = HeuristicAgent(rules)
        return agent

    def _engine(self, key: Any, size: int, num_players: int, rules: UnoRules) -> Engine:
        engine = self._engines.get(key)
        if engine is None or engine.num_envs < size:
            engine = self._engines[key] = Engine(size, num_players, rules, seed=0)
        return engine

    def _search_observation(self, o: np.ndarray, m: np.ndarray, rng: np.random.Generator) -> int:
        n = int(num_seats(o))
        if any(not in_play(o, k) for k in range(n)):
            return -1
        probe = self._engine(("probe", self.rules, n), 1, n, self.rules)
        if not _deal_from_observation(probe, 0, o, self._deck, rng):
            return -1
        if not np.array_equal(probe.legal_mask[0], m):
            return -1  # a fact the position cannot hold (an UNO call, a catch) changes the moves
        base = int(self._heuristic(self.rules).act(o[None], m[None], rng)[0])
        moves = np.flatnonzero(m)
        if moves.size == 1:
            return int(moves[0])
        return self._search(probe, 0, 0, moves, base, rng)

    def _search(self, source: Engine, i: int, seat: int, moves: np.ndarray, base: int, rng) -> int:
        start = time.perf_counter()
        per_move = max(self.rollouts // moves.size, 1)
        rounds = []
        while True:
            rounds.append(self._play_out(source, i, seat, moves, per_move, rng))
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

    def _play_out(self, source: Engine, i: int, seat: int, moves: np.ndarray, per_move: int, rng) -> np.ndarray:
        """Values [moves, per_move]: each move played in the same per_move determinizations."""
        rules, n, k = source.rules, source.num_players, moves.size
        size = per_move * k
        root = self._engine(("root", rules, n), per_move, n, rules)
        play = self._engine(("play", rules, n), size, n, rules)
        root.copy_game(source, i, 0)
        root.copy_games(root, np.zeros(per_move - 1, np.int64), np.arange(1, per_move))
        root.resample_hidden(np.arange(per_move), seat, rng)
        # Slot m * per_move + d of the rollout batch plays move m in determinization d.
        play.copy_games(root, np.tile(np.arange(per_move), k), np.arange(size))
        return self._rollouts(play, size, per_move, seat, np.repeat(moves, per_move), rng).reshape(k, per_move)

    def _rollouts(self, play: Engine, size: int, per_move: int, seat: int, first: np.ndarray, rng) -> np.ndarray:
        B = play.num_envs
        wilds_match = bool(play.rules.wd4_wilds_count_as_match)
        heuristic = self._heuristic(play.rules)
        actions = np.full(B, -1, np.int64)
        actions[:size] = first
        active = np.zeros(B, bool)
        active[:size] = True
        value = np.zeros(B)
        u = np.zeros(B)
        result = play.step(actions)
        left = _collect(result.terminated, result.truncated, result.rewards, seat, active, value)
        depth = 1
        while left and depth < self.max_depth:
            if depth <= self.heuristic_plies:
                rows = np.flatnonzero(active)
                actions.fill(-1)
                actions[rows] = heuristic.act(play.observation[rows], play.legal_mask[rows], rng)
            else:
                # Common random numbers: the rollouts of every move in determinization d draw
                # the same uniforms, so the moves' values differ by less noise.
                u[:size] = np.tile(rng.random(per_move), size // per_move)
                _rollout_actions(play.observation, play.legal_mask, active, u, wilds_match, actions)
            result = play.step(actions)
            left = _collect(result.terminated, result.truncated, result.rewards, seat, active, value)
            depth += 1
        if left:
            _leaf_values(play.observe(seat), active, value)
        return value[:size]
