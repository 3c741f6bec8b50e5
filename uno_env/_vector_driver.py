"""The game flow both Gymnasium envs share: one ``Engine``, a learner seat per game, batched opponents.

The engine runs with ``autoreset=False``, so a finished game stays observable from any seat until
this layer reads the learner's final view and deals it anew. Opponent groups and the history:
``uno_env.gym_env``'s docstring."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .checks import check_int, is_int
from .engine import Engine
from .engine.layout import MAX_HISTORY
from .engine.rng import splitmix64
from .observation import STATE_SIZE
from .policy import RandomAgent, history_length_of
from .rewards import WIN, seat_rewards
from .rules import MAX_PLAYERS, UnoRules
from .table import Table, check_history

# Reading final views: Engine.observe writes every game of the batch, about a hundred times
# cheaper per game than Engine.copy_game into a one-game engine and its observe; so fewer than
# num_envs / _PER_GAME_READ finished games are read one by one.
_PER_GAME_READ = 128

_SEED_LIMIT = 2**64


# --- argument checking --------------------------------------------------------------------


def _check_learner_seat(seat: Any, num_players: int) -> int | None:
    """The fixed learner seat, or None for ``"random"``."""
    if isinstance(seat, str) and seat == "random":
        return None
    if not is_int(seat) or not 0 <= seat < num_players:
        raise ValueError(f"learner_seat must be a seat 0..{num_players - 1} or 'random', got {seat!r}")
    return int(seat)


def _is_groups(opponents: Any) -> bool:
    """Whether ``opponents`` is a list of ``(opponents, num_games)`` groups (an agent is never a pair)."""
    return (
        isinstance(opponents, (list, tuple))
        and len(opponents) > 0
        and all(isinstance(g, tuple) and len(g) == 2 and is_int(g[1]) for g in opponents)
    )


def _check_groups(opponents: Any, num_players: int, num_envs: int) -> tuple[list[list[Any]], np.ndarray]:
    """Each group's agents (one per relative seat 1..P-1) and each game's group (int64 [num_envs])."""
    if not _is_groups(opponents):
        return [_check_opponents(opponents, num_players)], np.zeros(num_envs, np.int64)
    groups = [_check_opponents(agents, num_players) for agents, _ in opponents]
    sizes = [check_int("num_games of an opponent group", n, 1, num_envs) for _, n in opponents]
    if sum(sizes) != num_envs:
        raise ValueError(
            f"opponent groups (opponents, num_games) must cover the {num_envs} games exactly; their "
            f"num_games sum to {sum(sizes)}"
        )
    return groups, np.repeat(np.arange(len(groups), dtype=np.int64), sizes)


def _check_opponents(opponents: Any, num_players: int) -> list[Any]:
    """One agent per relative seat 1..num_players-1 (the same object may repeat)."""
    if opponents is None:
        return [RandomAgent()] * (num_players - 1)
    if isinstance(opponents, (list, tuple)):
        agents = list(opponents)
        if len(agents) != num_players - 1:
            raise ValueError(
                f"opponents must be one agent, a list of num_players - 1 = {num_players - 1} agents "
                f"(one per other seat, clockwise from the learner) or a list of (opponents, num_games) groups, "
                f"got a list of {len(agents)}"
            )
    else:
        agents = [opponents] * (num_players - 1)
    for agent in agents:
        if not callable(getattr(agent, "act", None)):
            raise ValueError(
                "opponents must be agents with act(observation, action_mask, rng) -> actions "
                f"(see uno_env.policy.Agent), got {type(agent).__name__} {agent!r}"
            )
    return agents


def seed_list(seed: Any, n: int) -> list[int]:
    """Per-game seeds: an int s gives s, s+1, ..., s+n-1 (gymnasium's convention); or n ints."""
    if is_int(seed):
        if not 0 <= seed <= _SEED_LIMIT - n:
            raise ValueError(f"seed must be an integer in 0..2**64-{n} (one seed per game from it), got {seed!r}")
        return [int(seed) + i for i in range(n)]
    if isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == n:
        out = []
        for s in seed:
            if not is_int(s) or not 0 <= s < _SEED_LIMIT:
                raise ValueError(f"seed must hold integers in 0..2**64-1, got {s!r} in {seed!r}")
            out.append(int(s))
        return out
    raise ValueError(f"seed must be None, an integer, or a list of {n} integers (one per game), got {seed!r}")


def _seat_hash(seat_seed: np.ndarray, episode: np.ndarray, num_players: int) -> np.ndarray:
    """Learner seat per game for ``learner_seat="random"``: a hash of the game's seed and episode.

    No shared generator, so game i of a batch gets the seats of a single game seeded the same way."""
    z = splitmix64(seat_seed, episode.astype(np.uint64) + np.uint64(1))
    return (z % np.uint64(num_players)).astype(np.int64)


# --- kernels --------------------------------------------------------------------------------
# The opponent loop runs several times per vector step, often on a handful of games: its row
# bookkeeping is a few small kernels, not a dozen numpy calls per pass.


@njit(cache=True)
def _scan(
    current,
    seats,
    terminated,
    truncated,
    rewards,
    out_idx,
    actions,
    ended,
    out_term,
    out_trunc,
    out_reward,
    out_won,
    fresh,
    reward,
    g,
    hands,
    points,
    teams,
):
    """One pass over the batch before each opponent step; returns (games to act, finished games).

    The first finish of a game in a learner step is the learner's episode end: its flags and reward are
    logged now (the engine zeroes rewards every step, and the round's hands are still the finished
    round's) and it is marked ``fresh``; a game already ``ended`` that finishes again dealt a round that
    ended before the learner's first decision: not an episode. ``reward`` is a ``uno_env.rewards`` code."""
    k = 0
    finished = 0
    for b in range(current.shape[0]):
        actions[b] = -1
        if terminated[b] or truncated[b]:
            finished += 1
            if not ended[b]:
                ended[b] = True
                fresh[b] = True
                out_term[b] = terminated[b]
                out_trunc[b] = truncated[b]
                out_won[b] = rewards[b, seats[b]] > 0
                if reward == WIN or not terminated[b]:
                    out_reward[b] = rewards[b, seats[b]]
                else:
                    row = np.zeros(MAX_PLAYERS, np.float64)
                    seat_rewards(reward, g, hands, points, rewards.shape[1], teams, b, row)
                    out_reward[b] = row[seats[b]]
        elif current[b] != seats[b]:
            out_idx[k] = b
            k += 1
    return k, finished


@njit(cache=True)
def first_out_of_range(actions, num_actions):
    """Index of the first action outside 0..num_actions-1, or -1 (one pass instead of min and max)."""
    for b in range(actions.shape[0]):
        if actions[b] < 0 or actions[b] >= num_actions:
            return b
    return -1


# --- the driver -----------------------------------------------------------------------------


class StepLog:
    """What one learner step collected, per game (fresh arrays: they are returned to the caller)."""

    def __init__(self, n: int) -> None:
        self.ended = np.zeros(n, bool)  # the learner's episode ended in this step
        self.terminated = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.reward = np.zeros(n, np.float32)
        self.won = np.zeros(n, bool)  # the learner won the round that ended (its "win" reward is +1)
        self.fresh = np.zeros(n, bool)  # ended, final view not read yet
        # (rows, views) of the finished games' final views: only their rows are copied.
        self.finals: list[tuple[np.ndarray, np.ndarray]] = []
        # With a history, its entries (histories()) of the same rows, one per entry of finals.
        self.final_histories: list[dict[str, np.ndarray]] = []

    @classmethod
    def dropping(cls, n: int) -> StepLog:
        """A log that records nothing: every finish counts as a round before the learner's first decision."""
        log = cls(n)
        log.ended[:] = True
        return log


class Driver:
    """One ``Engine`` (true rules, no engine autoreset) plus the learner seats and the opponents."""

    def __init__(
        self,
        num_envs: int,
        num_players: int,
        rules: UnoRules,
        learner_seat: Any,
        opponents: Any,
        history: int = 0,
        history_form: str = "rows",
        threads: int = 1,
        reward: int = WIN,
    ) -> None:
        # The envs check num_envs, history_form and reward at their entry, the engine the threads; the player count,
        # the learner's seat, the history and the opponents are checked here, once, for both envs.
        self.num_players = P = check_int("num_players", num_players, 2, MAX_PLAYERS)
        self.rules = rules
        self.reward = reward
        self._points = np.array(rules.points, np.int64)
        self.fixed_seat = _check_learner_seat(learner_seat, P)
        self.history = check_int("history", history, 0, MAX_HISTORY)
        self.history_form = history_form
        self.groups, self.group_of = _check_groups(opponents, P, num_envs)
        readers = [history_length_of(a) for g in self.groups for a in g]
        # The engine's chunks step the games and run the opponents' act_chunked (Table).
        self.engine = Engine(num_envs, P, self.rules, history=max([self.history, *readers]), threads=threads)
        self.num_envs = B = self.engine.num_envs
        self.seats = np.full(B, self.fixed_seat or 0, np.int64)
        self.table = Table(self.engine, [], [])
        self._index_agents()
        self.obs_size = self.engine.observation_size
        self.seat_seed = np.zeros(B, np.uint64)
        self.episode = np.zeros(B, np.int64)
        # Buffers kept across steps: a fresh large array per call page-faults.
        self._idx_buf = np.empty(B, np.int64)
        self._actions = np.empty(B, np.int64)
        self._final_buf = np.empty((B, self.obs_size), np.float32)  # Engine.observe's out
        self._scratch: Engine | None = None  # a one-game engine to observe a few finished games
        # With keep_final_states, each finished game's whole state at its end (learner's frame),
        # read with its final view: a privileged critic bootstraps a truncated round from it.
        self.keep_final_states = False
        self.final_states: np.ndarray | None = None
        self.rng = np.random.default_rng()

    @property
    def rng(self) -> np.random.Generator:
        """The one generator every opponent draws from."""
        return self._rng

    @rng.setter
    def rng(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self.table.set_agents(self.agents, rng)

    # --- opponents ------------------------------------------------------------------------

    def set_opponents(self, opponents: Any, group: int = 0) -> None:
        """Give group ``group`` new opponents (one agent or ``num_players - 1``); they act from the next step."""
        g = check_int("group", group, 0, len(self.groups) - 1)
        agents = _check_opponents(opponents, self.num_players)
        for agent in agents:
            check_history(agent, self.engine)  # the engine's history length is fixed at creation
        self.groups[g] = agents
        self._index_agents()

    def _index_agents(self) -> None:
        """The distinct agents, and ``agent_table[group, relative seat]`` (seat 0, the learner: -1)."""
        self.agents: list[Any] = []
        table = np.full((len(self.groups), self.num_players), -1, np.int64)
        for g, opponents in enumerate(self.groups):
            for rel, agent in enumerate(opponents, start=1):
                ids = [i for i, a in enumerate(self.agents) if a is agent]
                if not ids:
                    self.agents.append(agent)
                    ids = [len(self.agents) - 1]
                table[g, rel] = ids[0]
        self.agent_table = table
        self.table.set_agents(self.agents, [getattr(self, "_rng", None) or np.random.default_rng()] * len(self.agents))
        self._seat_agents(slice(None))

    def _seat_agents(self, rows: Any) -> None:
        """The table's agent per seat of the games ``rows``: the opponents clockwise from the learner."""
        seats = self.seats[rows]
        rel = (np.arange(self.num_players)[None, :] - seats[:, None]) % self.num_players
        self.table.seat_agent[rows] = self.agent_table[self.group_of[rows][:, None], rel]

    # --- deals and seats ------------------------------------------------------------------

    def deal(self, seeds: list[int] | None) -> None:
        """Reset every game (reseeding it when seeds are given); the episode's learner seats."""
        if seeds is not None:
            self.seat_seed[:] = np.array(seeds, np.uint64)
            self.episode[:] = 0
        else:
            if not self.seat_seed.any():
                self.seat_seed[:] = self.rng.integers(0, 2**63, self.num_envs, dtype=np.int64).astype(np.uint64)
            self.episode += 1
        self.engine.reset(seeds)
        if self.fixed_seat is None:
            self.seats[:] = _seat_hash(self.seat_seed, self.episode, self.num_players)
            self._seat_agents(slice(None))

    def redeal(self, which: np.ndarray) -> None:
        """Deal the games in ``which`` anew from their own generators; count the episode, draw the seat."""
        self.engine.reset(games=which)
        self.episode[which] += 1
        if self.fixed_seat is None:
            rows = np.flatnonzero(which)
            self.seats[rows] = _seat_hash(self.seat_seed[rows], self.episode[rows], self.num_players)
            self._seat_agents(rows)

    # --- stepping -------------------------------------------------------------------------

    def step_learner(self, actions: np.ndarray) -> None:
        """The learner's action in every game (the engine raises on an illegal one, unchanged)."""
        self.engine.step(actions)

    def advance(self, log: StepLog) -> None:
        """Play opponents, read final views, deal finished games anew, until the learner is to act everywhere."""
        e = self.engine
        while self.play_opponents(log):
            if log.fresh.any():
                # Finished games wait, frozen, for this one read of the learner's views.
                rows = np.flatnonzero(log.fresh)
                views, histories = self._final_views(rows)
                log.finals.append((rows, views))
                if histories is not None:
                    log.final_histories.append(histories)
                if self.keep_final_states:
                    if self.final_states is None:
                        self.final_states = np.zeros((self.num_envs, STATE_SIZE), np.float32)
                    self.engine.state(self.seats, out=self.final_states, games=rows)
                log.fresh[:] = False
            self.redeal(e.terminated | e.truncated)

    def observe_learners(self, out: np.ndarray, games: np.ndarray) -> None:
        """Each game of ``games`` (bool [num_envs]) seen from its learner's seat, into its row of ``out``."""
        self.engine.observe(self.seats, out=out, games=games)

    def _final_views(self, rows: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray] | None]:
        """``Engine.observe`` from the learner's seat of the finished games ``rows`` (a new array),
        and with a history their ``histories()`` rows (else None)."""
        e, K = self.engine, self.history
        if rows.size * _PER_GAME_READ > self.num_envs:
            if self.fixed_seat is None:
                e.observe(self.seats, out=self._final_buf)
            else:
                e.observe(self.fixed_seat, out=self._final_buf)
            if not K:
                return self._final_buf[rows], None  # a copy of those rows
            return self._final_buf[rows], {k: v[rows] for k, v in self.histories().items()}
        # A few games: each is copied into a one-game engine and observed there.
        if self._scratch is None:
            self._scratch = Engine(1, self.num_players, self.rules, history=e.history_length)
        views = np.empty((rows.size, self.obs_size), np.float32)
        parts: list[dict[str, np.ndarray]] = []
        for j, b in enumerate(rows.tolist()):
            self._scratch.copy_game(e, b, 0)
            self._scratch.observe(int(self.seats[b]), out=views[j : j + 1])
            if K:
                parts.append(self._scratch.history_observation(int(self.seats[b]), self.history_form, K))
        if not K:
            return views, None
        return views, {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def histories(self) -> dict[str, np.ndarray]:
        """Every game's public history from its learner's seat, in ``history_form`` (``Engine.history_observation``)."""
        return self.engine.history_observation(self.seats, self.history_form, self.history)

    def state(self, out: np.ndarray | None = None) -> np.ndarray:
        """Hidden information: every game's whole state in its learner's frame (``Engine.state``,
        float32 [num_envs, STATE_SIZE]), for critics; never an agent's input."""
        return self.engine.state(self.seats, out=out)

    def play_opponents(self, log: StepLog) -> int:
        """Step every unfinished game where an opponent is to act until none is left; log the
        games that finish (``_scan``) and return how many are finished."""
        e = self.engine
        actions = self._actions
        g, _pl, hands = e.state_arrays[:3]
        while True:
            k, finished = _scan(
                e.current_player,
                self.seats,
                e.terminated,
                e.truncated,
                e.rewards,
                self._idx_buf,
                actions,
                log.ended,
                log.terminated,
                log.truncated,
                log.reward,
                log.won,
                log.fresh,
                self.reward,
                g,
                hands,
                self._points,
                self.rules.teams,
            )
            if k == 0:
                return finished
            self.table.ask(self._idx_buf[:k], actions)
            try:
                e.step(actions)
            except ValueError as err:
                raise ValueError(
                    f"an opponent chose an action the engine refused ({err}); the learner's action was "
                    "already applied, so the env must be reset"
                ) from err
