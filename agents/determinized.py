"""``DeterminizedSearch``: what flat Monte Carlo (``FlatMCAgent``) and ISMCTS (``ISMCTSAgent``) share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from uno_env import Engine, UnoRules
from uno_env.cards import NUM_CARD_TYPES
from uno_env.checks import check_int
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
from uno_env.rules import MAX_PLAYERS

from ._simple_rules import rlcard_row
from ._tactics import rule_tables, uno_call_action
from .belief_policy import shipped_belief_policy
from .beliefs import Belief, log_weights_of, make_belief
from .beliefs.net import EVIDENCE_ROWS
from .heuristic import HeuristicAgent
from .pretrained import shipped_policy

# --- rollouts: one numba call per engine step -------------------------------------------------


@njit(cache=True)
def _rollout_actions(obs, mask, active, u, wilds_match, out):
    """The rollout policy's action (RLCardRuleAgent's) in every active game, -1 in the others."""
    for b in range(obs.shape[0]):
        out[b] = rlcard_row(obs[b], mask[b], u[b], phase_of(obs[b]), wilds_match) if active[b] else -1


@njit(cache=True)
def _collect(term, trunc, rewards, active, values):
    """Record every seat's reward in games that just ended; True while any game is active."""
    left = False
    for b in range(active.shape[0]):
        if active[b]:
            if term[b] or trunc[b]:
                values[b, :] = rewards[b, :]
                active[b] = False
            else:
                left = True
    return left


@njit(cache=True)
def _leaf_values(obs0, active, values):
    """Every seat's value (+1 win, -1 loss scale) of a rollout cut at the depth limit: a win chance ∝ 1 / hand size."""
    for b in range(obs0.shape[0]):
        if not active[b]:
            continue
        o = obs0[b]
        total = 0.0
        for k in range(num_seats(o)):
            if in_play(o, k):
                total += 1.0 / max(hand_size_at(o, k), 1)
        for k in range(num_seats(o)):
            mine = 1.0 / max(hand_size_at(o, k), 1) if in_play(o, k) else 0.0
            values[b, k] = 2.0 * mine / total - 1.0


# --- determinizations from an observation (phase play) -----------------------------------------


def _deal_from_observation(target: Engine, j: int, o: np.ndarray, deck: np.ndarray, rng: np.random.Generator) -> bool:
    """Put in game j of ``target`` a position consistent with observation ``o`` (phase play); False if none.

    The observer sits in seat 0 and relative slot k in seat k; the unseen cards are dealt at random.
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


BLUEPRINTS = ("heuristic", "pretrained", "belief")
"""What a search's ``blueprint`` may name: ``HeuristicAgent``, the shipped model trained for the
table, or the shipped policy that reads the round through the belief network (``agents.belief_policy``)."""


def _check_blueprint(blueprint: Any) -> str | dict[int, str]:
    """``blueprint`` checked: one of ``BLUEPRINTS``, or a mapping of table sizes (2..10) to them."""
    allowed = f"one of {BLUEPRINTS} or a mapping of table sizes to them (e.g. {{2: 'pretrained'}})"
    if isinstance(blueprint, str):
        if blueprint not in BLUEPRINTS:
            raise ValueError(f"blueprint must be {allowed}, got {blueprint!r}")
        return blueprint
    if not isinstance(blueprint, Mapping):
        raise ValueError(f"blueprint must be {allowed}, got {type(blueprint).__name__}")
    out = {}
    for n, name in blueprint.items():
        if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_PLAYERS or name not in BLUEPRINTS:
            raise ValueError(f"blueprint must be {allowed}; got the entry {n!r}: {name!r}")
        out[n] = name
    return out


class Deal(NamedTuple):
    """What one decision's determinizations are dealt from: the belief read at the seat's observation."""

    exclude: np.ndarray | None
    """the belief's exclusions (``Belief.exclusions``), None for none"""
    observation: np.ndarray | None = None
    """the seat's observation, for the belief's soft evidence (``log_weights``); None: not weighed"""
    events: Any = None
    """the round so far as the seat saw it, for a belief that reads it, in its ``history_form``:
    ``Engine.history_events`` (``events``, the default) or ``Engine.history``'s rows and counts (``arrays``)"""


class DeterminizedSearch:
    """Base of the determinized searches (docs/agents.md, "Search agents"); a subclass implements ``_search``.

    ``act_in(engine, i, rng)`` searches from a copy of the game; ``act(observation, mask, rng)``
    rebuilds phase ``play`` from the observation and leaves other phases to the blueprint. With
    ``peek`` it reads hidden hands: ``act`` refuses.
    """

    # Never reads hidden state (unless peek): every determinization goes through _determinize, whose
    # Engine.resample_hidden re-deals all the seat cannot see (gathered in id order, so the deal
    # depends on which cards are hidden, not where) and replaces each copy's generator state. The one
    # hidden fact a copy keeps, whether a pending Wild Draw Four was a bluff, is why the challenge is
    # never searched.

    name = "determinized"
    proposals = 8
    """candidate deals per determinization when the belief has soft evidence (``_determinize``)"""

    def __init__(
        self,
        rules: UnoRules | None,
        *,
        time_ms: float | None,
        heuristic_plies: int,
        confidence: float | None,
        max_depth: int,
        belief: str | Belief,
        peek: bool = False,
        blueprint: str | Mapping[int, str] = "heuristic",
    ) -> None:
        self.blueprint = _check_blueprint(blueprint)
        if not isinstance(peek, bool):
            raise ValueError(f"peek must be True or False, got {peek!r}")
        self.peek = peek
        if peek:
            self.name = f"{self.name}@peek"
        self.max_depth = check_int("max_depth", max_depth, 1)
        self.heuristic_plies = check_int("heuristic_plies", heuristic_plies, 0)
        if time_ms is not None and not (isinstance(time_ms, (int, float)) and time_ms > 0):
            raise ValueError(f"time_ms must be None or a positive number of milliseconds, got {time_ms!r}")
        if confidence is not None and not (isinstance(confidence, (int, float)) and confidence >= 0):
            raise ValueError(f"confidence must be None or a number >= 0, got {confidence!r}")
        self.rules = UnoRules() if rules is None else rules
        self.time_ms = time_ms
        self.confidence = confidence
        self.belief = make_belief(belief, self.rules)
        # The history the belief and the blueprint read: tables keep it in their engines for this agent (uno_env.table).
        reads = EVIDENCE_ROWS if "belief" in self._blueprint_names() else 0
        self.history_length = max(int(getattr(self.belief, "history_length", 0)), reads)
        self._deck = rule_tables(self.rules)[0]
        self._heuristics: dict[UnoRules, HeuristicAgent] = {}
        self._engines: dict[Any, Engine] = {}
        self._history_buffers: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        self.last_searched = False  # whether the last decision was searched (for timings)

    # --- the two entry points --------------------------------------------------------------

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action per row, searching positions rebuilt from each observation."""
        if self.peek:
            raise ValueError(
                f"{self.name} reads the hidden hands from the engine: ask it through act_in(engine, i, rng) "
                "(arena.play(..., engine_access=True)); from an observation alone it cannot peek"
            )
        self.last_searched = False
        history: tuple[np.ndarray, ...] | None = None
        if isinstance(observation, dict):  # a table's history-reading form (uno_env.table)
            history = (np.asarray(observation["history"]), np.asarray(observation["history_counts"]))
            history = tuple(h[None] if h.ndim == 2 else h for h in history)
            observation = observation["observation"]
        # The belief reads the rows and counts only if its form is theirs; the blueprint always may.
        to_belief = history is not None and getattr(self.belief, "history_form", "events") == "arrays"
        obs, mask = as_batch(observation, action_mask)
        out = np.empty(obs.shape[0], np.int64)
        fallback = []
        for b in range(obs.shape[0]):
            a = self._trivial(mask[b])
            if a < 0 and phase_of(obs[b]) == PHASE_PLAY:
                arrays = None if history is None else (history[0][b], history[1][b])
                a = self._search_observation(obs[b], mask[b], rng, arrays if to_belief else None, arrays)
            if a >= 0:
                out[b] = a
            else:
                fallback.append(b)
        rows = np.asarray(fallback, np.int64)
        sizes = np.array([num_seats(obs[b]) for b in rows], np.int64)
        for n in np.unique(sizes):  # the blueprint is per table size
            at = rows[sizes == n]
            arrays = None if history is None else (history[0][at], history[1][at])
            out[at] = self._blueprint_act(self.rules, int(n), obs[at], mask[at], rng, arrays)
        return out

    def act_in(self, engine: Engine, i: int, rng: np.random.Generator) -> int:
        """The action for the player to act in game ``i`` of ``engine``."""
        self.last_searched = False
        o = engine.observation[i]
        if not o.any():  # an Engine(observations=False) leaves it zero; observe() still works
            o = engine.observe(int(engine.current_player[i]))[i]
        m = engine.legal_mask[i]
        a = self._trivial(m)
        if a >= 0:
            return a
        seat = int(engine.current_player[i])
        # The round's public history, when the blueprint reads it and the engine keeps it (R11: the seat's view).
        reads = self._blueprint_name(engine.num_players) == "belief" and engine.history_length >= EVIDENCE_ROWS
        arrays = self._history_arrays(engine, int(i), seat) if reads else None
        base = int(
            self._blueprint_act(
                engine.rules,
                engine.num_players,
                o[None],
                m[None],
                rng,
                None if arrays is None else (arrays[0][None], arrays[1][None]),
            )[0]
        )
        if phase_of(o) == PHASE_RESPOND_DRAW_FOUR:
            return base
        moves = np.flatnonzero(m)
        # The same history for the belief, in the form it reads.
        events = (
            self._history_of(engine, int(i), seat, arrays) if self.history_length and engine.history_length else None
        )
        return self._search(engine, int(i), seat, self._deal(o, seat, events), moves, base, rng)

    def _history_of(self, engine: Engine, i: int, seat: int, arrays: Any = None) -> Any:
        """The round so far as ``seat`` saw it in game ``i``, in the form the belief reads
        (``history_form``): its events (``Engine.history_events``), or its encoded rows and counts
        (``_history_arrays``; ``arrays``: those, already read)."""
        if getattr(self.belief, "history_form", "events") == "events":
            return engine.history_events(i, seat)
        return self._history_arrays(engine, i, seat) if arrays is None else arrays

    def _history_arrays(self, engine: Engine, i: int, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """The encoded rows and counts of ``seat``'s history in game ``i`` (``Engine.history``, into
        buffers kept per engine shape)."""
        key = ("history", engine.num_envs, engine.history_length)
        out = self._history_buffers.get(key)
        if out is None:
            out = self._history_buffers[key] = engine.history(seat, games=[i])
        else:
            engine.history(seat, games=[i], out=out)
        return out[0][i].copy(), out[1][i].copy()

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
        """The move of ``seat`` (one of ``moves``; ``base`` is the heuristic's) in game ``i`` of
        ``source``, searching determinizations dealt from ``deal`` (``_determinize``)."""
        raise NotImplementedError

    # --- shared parts ----------------------------------------------------------------------

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

    def _blueprint_names(self) -> set[str]:
        return {self.blueprint} if isinstance(self.blueprint, str) else set(self.blueprint.values())

    def _blueprint_name(self, num_players: int) -> str:
        return self.blueprint if isinstance(self.blueprint, str) else self.blueprint.get(num_players, "heuristic")

    def _blueprint_act(
        self,
        rules: UnoRules,
        num_players: int,
        obs: np.ndarray,
        mask: np.ndarray,
        rng: np.random.Generator,
        history: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The blueprint's actions at this table; ``history``: the seat's rows [N, K, 122] and counts [N, 10, 14]."""
        name = self._blueprint_name(num_players)
        if name == "belief" and history is not None:
            reader = shipped_belief_policy(rules, num_players)  # read once per table
            if reader is not None:
                return reader.act({"observation": obs, "history": history[0], "history_counts": history[1]}, mask)
        policy = shipped_policy(rules, num_players) if name in ("pretrained", "belief") else None
        if policy is None:
            return self._heuristic(rules).act(obs, mask, rng)
        return policy.act(obs, mask)

    def _engine(self, key: Any, size: int, num_players: int, rules: UnoRules) -> Engine:
        engine = self._engines.get(key)
        if engine is None or engine.num_envs < size:
            engine = self._engines[key] = Engine(size, num_players, rules, seed=0)
        return engine

    def _deal(self, o: np.ndarray, seat: int, events: list | None = None) -> Deal:
        """The belief read at observation ``o`` of ``seat`` (and the seat's ``events``, if any)."""
        n = int(num_seats(o))
        weighs = log_weights_of(self.belief, o, seat, np.zeros((0, n, NUM_CARD_TYPES), np.int64), events) is not None
        return Deal(self.belief.exclusions(o, seat), o if weighs else None, events)

    def _determinize(self, play: Engine, games: np.ndarray, seat: int, deal: Deal, rng: np.random.Generator) -> None:
        """Deal anew, in ``games`` of ``play``, all that ``seat`` cannot see; with ``peek`` only the draw pile.

        A belief with soft evidence is sampled by importance resampling: candidates are dealt from its
        exclusions, weighed, drawn systematically, and each kept deal gets its own draw pile and generator.
        """
        if self.peek:
            play.shuffle_draw_pile(games, rng)
        elif deal.observation is None:
            play.resample_hidden(games, seat, rng, exclude=deal.exclude)
        else:
            # A belief that weighs whole worlds (``replay``) sets how many candidates it can afford.
            size = int(getattr(self.belief, "candidates", 0)) or games.size * self.proposals
            cand = self._engine(("proposals", play.rules, play.num_players), size, play.num_players, play.rules)
            k = np.arange(size)
            cand.copy_games(play, np.resize(games, k.size), k)
            cand.resample_hidden(k, seat, rng, exclude=deal.exclude)
            w = log_weights_of(self.belief, deal.observation, seat, cand.hand_counts(k), deal.events)
            p = np.ones(k.size) if w is None or not np.isfinite(w.max()) else np.exp(w - w.max())
            cum = np.cumsum(p / p.sum())
            keep = np.minimum(np.searchsorted(cum, (rng.random() + np.arange(games.size)) / games.size), k.size - 1)
            play.copy_games(cand, keep, games)
            play.shuffle_draw_pile(games, rng)

    def _search_observation(
        self, o: np.ndarray, m: np.ndarray, rng: np.random.Generator, history: Any = None, arrays: Any = None
    ) -> int:
        n = int(num_seats(o))
        if any(not in_play(o, k) for k in range(n)):
            return -1
        probe = self._engine(("probe", self.rules, n), 1, n, self.rules)
        if not _deal_from_observation(probe, 0, o, self._deck, rng):
            return -1
        if not np.array_equal(probe.legal_mask[0], m):
            return -1  # a fact the position cannot hold (an UNO call, a catch) changes the moves
        rows = None if arrays is None else (arrays[0][None], arrays[1][None])
        base = int(self._blueprint_act(self.rules, n, o[None], m[None], rng, rows)[0])
        moves = np.flatnonzero(m)
        if moves.size == 1:
            return int(moves[0])
        return self._search(probe, 0, 0, self._deal(o, 0, history), moves, base, rng)

    def _rollouts(
        self,
        play: Engine,
        active: np.ndarray,
        values: np.ndarray,
        rng: np.random.Generator,
        depth: int = 0,
        crn_period: int = 0,
    ) -> None:
        """Finish the games of ``active`` (bool [B], updated) by rollouts from rollout depth
        ``depth``; every seat's outcome into ``values`` [B, P]. With ``crn_period`` > 0 game b
        draws the rollout uniforms of game ``b % crn_period`` (common random numbers)."""
        wilds_match = bool(play.rules.wd4_wilds_count_as_match)
        heuristic = self._heuristic(play.rules)
        B = play.num_envs
        actions = np.full(B, -1, np.int64)
        u = np.zeros(B)
        left = bool(active.any())
        while left and depth < self.max_depth:
            if depth < self.heuristic_plies:
                rows = np.flatnonzero(active)
                actions.fill(-1)
                actions[rows] = heuristic.act(play.observation[rows], play.legal_mask[rows], rng)
            else:
                if crn_period:
                    u[:] = np.resize(rng.random(crn_period), B)
                else:
                    u[:] = rng.random(B)
                _rollout_actions(play.observation, play.legal_mask, active, u, wilds_match, actions)
            result = play.step(actions)
            left = _collect(result.terminated, result.truncated, result.rewards, active, values)
            depth += 1
        if left:
            _leaf_values(play.observe(0), active, values)
