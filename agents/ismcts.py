"""``ISMCTSAgent``: single-observer information-set MCTS over the batched engine."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from uno_env import Engine, UnoRules
from uno_env.actions import NUM_ACTIONS
from uno_env.checks import check_int

from .beliefs import Belief
from .determinized import Deal, DeterminizedSearch

# --- the tree: numba arrays, one node per iteration ---------------------------------------------


@njit(cache=True)
def _select(
    edge_n,
    edge_w,
    edge_avail,
    node_of,
    in_tree,
    mask,
    player,
    prefer,
    forced,
    u,
    c,
    actions,
    path_node,
    path_act,
    path_actor,
    path_len,
):
    """One tree step of every game still in the tree: UCB over the moves legal in its deal.

    Exploration counts how often a move was available at the node (SO-ISMCTS), not the node's
    visits; untried moves first (``prefer`` before the others); ``forced[b] >= 0`` is played as it
    is. The visit counts now, a virtual loss until ``_backprop``.
    """
    for b in range(in_tree.shape[0]):
        if not in_tree[b]:
            actions[b] = -1
            continue
        node = node_of[b]
        untried = 0
        for a in range(mask.shape[1]):
            if mask[b, a]:
                edge_avail[node, a] += 1.0
                if edge_n[node, a] == 0.0:
                    untried += 1
        best = -1
        if forced[b] >= 0:
            best = forced[b]
        elif untried and prefer[b] >= 0 and mask[b, prefer[b]] and edge_n[node, prefer[b]] == 0.0:
            best = prefer[b]
        elif untried:
            k = min(int(u[b] * untried), untried - 1)
            for a in range(mask.shape[1]):
                if mask[b, a] and edge_n[node, a] == 0.0:
                    if k == 0:
                        best = a
                        break
                    k -= 1
        else:
            best_score = -1e300
            for a in range(mask.shape[1]):
                if mask[b, a]:
                    n = edge_n[node, a]
                    score = edge_w[node, a] / n + c * np.sqrt(np.log(edge_avail[node, a]) / n)
                    if score > best_score:
                        best, best_score = a, score
        edge_n[node, best] += 1.0
        d = path_len[b]
        path_node[b, d], path_act[b, d], path_actor[b, d] = node, best, player[b]
        path_len[b] = d + 1
        actions[b] = best


@njit(cache=True)
def _advance(children, sibling, actor, num_nodes, node_of, in_tree, player, done, path_act, path_len):
    """After the step: follow each game to the child of its move for the player now to act.

    A child is a chain of nodes, one per player to act: the same moves can hand the turn to
    different players in different deals. A game that adds a node, finishes or fills the tree
    leaves it for its rollout. Returns the number of nodes in use.
    """
    for b in range(in_tree.shape[0]):
        if not in_tree[b]:
            continue
        if done[b] or path_len[b] >= path_act.shape[1]:
            in_tree[b] = False
            continue
        parent, a = node_of[b], path_act[b, path_len[b] - 1]
        child = children[parent, a]
        while child >= 0 and actor[child] != player[b]:
            child = sibling[child]
        if child >= 0:
            node_of[b] = child
            continue
        in_tree[b] = False
        if num_nodes < actor.shape[0]:
            actor[num_nodes] = player[b]
            sibling[num_nodes] = children[parent, a]
            children[parent, a] = num_nodes
            num_nodes += 1
    return num_nodes


@njit(cache=True)
def _backprop(edge_w, path_node, path_act, path_actor, path_len, values):
    """Add each game's outcome to every edge of its path, for the player who chose the move
    (rewards -1..1 mapped to 0..1, the scale of the exploration constant)."""
    for b in range(path_len.shape[0]):
        for d in range(path_len[b]):
            edge_w[path_node[b, d], path_act[b, d]] += 0.5 * (values[b, path_actor[b, d]] + 1.0)


@dataclasses.dataclass
class SearchTree:
    """ISMCTS's tree as arrays (numba walks them), reused across decisions; node 0 is the root.

    ``children[node, move]`` is a node's first child by move, ``sibling`` the next (one per player
    to act). Per (node, move): ``visits``, ``value`` (total, 0..1, for the player who chose it) and
    ``available`` (determinizations in which the move was legal).
    """

    children: np.ndarray  # int64 [capacity, NUM_ACTIONS]
    sibling: np.ndarray  # int64 [capacity]
    actor: np.ndarray  # int64 [capacity]: the seat to act at the node
    visits: np.ndarray  # float64 [capacity, NUM_ACTIONS]
    value: np.ndarray  # float64 [capacity, NUM_ACTIONS]
    available: np.ndarray  # float64 [capacity, NUM_ACTIONS]
    used: int = 1  # nodes written since the last clear

    @classmethod
    def empty(cls, capacity: int) -> SearchTree:
        """A tree with room for ``capacity`` nodes."""
        return cls(
            np.full((capacity, NUM_ACTIONS), -1, np.int64),
            np.full(capacity, -1, np.int64),
            np.full(capacity, -1, np.int64),
            np.zeros((capacity, NUM_ACTIONS)),
            np.zeros((capacity, NUM_ACTIONS)),
            np.zeros((capacity, NUM_ACTIONS)),
        )

    @property
    def capacity(self) -> int:
        """Nodes it can hold."""
        return int(self.actor.shape[0])

    def clear(self, seat: int) -> None:
        """Only the root, ``seat`` to act; only the rows the last search used are cleared."""
        u = self.used
        self.children[:u], self.sibling[:u], self.actor[:u] = -1, -1, -1
        self.visits[:u], self.value[:u], self.available[:u] = 0.0, 0.0, 0.0
        self.actor[0] = seat
        self.used = 1


class ISMCTSAgent(DeterminizedSearch):
    """Information-set MCTS (SO-ISMCTS, Cowling, Powley & Whitehouse 2012) in waves of batched games.

    Settings: docs/agents.md, "Search settings".
    """

    name = "ismcts"

    @classmethod
    def budget(cls, iterations: int | None, time_ms: float | None) -> dict[str, Any]:
        """The settings of a spec's budget (``ismcts:N``, ``ismcts:Tms``): N iterations, or waves
        repeated until the time is spent."""
        if time_ms is not None:
            return {"time_ms": time_ms}
        return {} if iterations is None else {"iterations": iterations}

    def __init__(
        self,
        rules: UnoRules | None = None,
        iterations: int = 2048,
        time_ms: float | None = None,
        wave: int = 128,
        exploration: float = 0.7,
        heuristic_plies: int = 2,
        max_depth: int = 120,
        opponents: str = "ucb",
        tree_prior: bool = False,
        confidence: float | None = None,
        belief: str | Belief = "public",
        peek: bool = False,
        blueprint: str | Mapping[int, str] = "heuristic",
    ) -> None:
        """``rules`` of the games it will play (as ``FlatMCAgent``)."""
        if opponents not in ("ucb", "heuristic"):
            raise ValueError(f"opponents must be 'ucb' or 'heuristic', got {opponents!r}")
        self.iterations = check_int("iterations", iterations, 1)
        self.wave = check_int("wave", wave, 1)
        if not (isinstance(exploration, (int, float)) and exploration >= 0):
            raise ValueError(f"exploration must be a number >= 0, got {exploration!r}")
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
        self.exploration = float(exploration)
        self.opponents = opponents
        self.tree_prior = bool(tree_prior)
        self._tree: SearchTree | None = None

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
        waves = -(-self.iterations // self.wave)
        tree = self._fresh_tree(waves * self.wave + 1, seat)
        num_nodes, done_waves = 1, 0
        while True:
            num_nodes = self._wave(tree, source, i, seat, deal, base, rng, num_nodes)
            done_waves += 1
            if self.time_ms is None:
                if done_waves >= waves:
                    break
            elif (time.perf_counter() - start) * 1e3 >= self.time_ms:
                break
        n, w = tree.visits[0, moves], tree.value[0, moves]
        mean = w / np.maximum(n, 1.0)
        best = int(np.lexsort((mean, n))[-1])
        h = np.flatnonzero(moves == base)
        if self.confidence is not None and h.size and best != h[0] and n[h[0]] > 0:
            # Outcomes are (nearly) 0/1, so a mean m has variance m(1 - m).
            se = np.sqrt(mean[best] * (1 - mean[best]) / n[best] + mean[h[0]] * (1 - mean[h[0]]) / n[h[0]])
            if not mean[best] - mean[h[0]] > self.confidence * se:
                best = int(h[0])
        self.last_searched = True
        return int(moves[best])

    def _fresh_tree(self, capacity: int, seat: int) -> SearchTree:
        """The tree, reused across decisions, cleared for a search of ``seat``."""
        if self.time_ms is not None:
            # A timed search does not know its iterations: once this many nodes exist, its
            # iterations still walk the tree and roll out, but add no node.
            capacity = max(capacity, 8192)
        if self._tree is None or self._tree.capacity < capacity:
            self._tree = SearchTree.empty(capacity)
        self._tree.clear(seat)
        return self._tree

    def _wave(
        self,
        tree: SearchTree,
        source: Engine,
        i: int,
        seat: int,
        deal: Deal,
        base: int,
        rng: np.random.Generator,
        num_nodes: int,
    ) -> int:
        """One wave: deal, walk the tree, roll out, back up. Returns the nodes in use."""
        W, P, depth_cap = self.wave, source.num_players, 64
        play = self._engine(("wave", source.rules, P), W, P, source.rules)
        play.copy_games(source, np.full(W, i, np.int64), np.arange(W))
        self._determinize(play, np.arange(W), seat, deal, rng)
        node_of = np.zeros(W, np.int64)
        in_tree = np.ones(W, bool)
        path_node, path_act, path_actor = (np.zeros((W, depth_cap), np.int64) for _ in range(3))
        path_len = np.zeros(W, np.int64)
        actions = np.full(W, -1, np.int64)
        prefer = np.full(W, base, np.int64)  # at the root: the blueprint's move, asked once
        forced = np.full(W, -1, np.int64)
        finished = np.zeros(W, bool)
        values = np.zeros((W, P))
        depth = 0
        while in_tree.any():
            if depth and (self.opponents == "heuristic" or self.tree_prior):
                self._tree_moves(play, in_tree, seat, prefer, forced, rng)
            _select(
                tree.visits,
                tree.value,
                tree.available,
                node_of,
                in_tree,
                play.legal_mask,
                play.current_player,
                prefer,
                forced,
                rng.random(W),
                self.exploration,
                actions,
                path_node,
                path_act,
                path_actor,
                path_len,
            )
            result = play.step(actions)
            done = (result.terminated | result.truncated) & in_tree
            values[done] = result.rewards[done]
            finished |= done
            num_nodes = _advance(
                tree.children,
                tree.sibling,
                tree.actor,
                num_nodes,
                node_of,
                in_tree,
                play.current_player,
                done,
                path_act,
                path_len,
            )
            depth += 1
        tree.used = max(tree.used, num_nodes)
        self._rollouts(play, ~finished, values, rng)
        _backprop(tree.value, path_node, path_act, path_actor, path_len, values)
        return num_nodes

    def _tree_moves(
        self, play: Engine, in_tree: np.ndarray, seat: int, prefer: np.ndarray, forced: np.ndarray, rng
    ) -> None:
        """``HeuristicAgent``'s move in every game in the tree: played by the opponents when
        it models them (``opponents="heuristic"``), tried first by the searcher (``tree_prior``)."""
        prefer.fill(-1)
        forced.fill(-1)
        rows = np.flatnonzero(in_tree)
        h = self._heuristic(play.rules).act(play.observation[rows], play.legal_mask[rows], rng)
        mine = play.current_player[rows] == seat
        if self.tree_prior:
            prefer[rows[mine]] = h[mine]
        if self.opponents == "heuristic":
            forced[rows[~mine]] = h[~mine]
