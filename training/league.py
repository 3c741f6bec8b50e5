"""The opponents made of the learner: one pool of its frozen snapshots, drawn by self-play and by the
PFSP league (guide: docs/training.md, "The league and expert iteration")."""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.ppo import PPOAgent
from agents.registry import build_agent
from uno_env import Agent, UnoRules

from .batched_ppo import rounds_won
from .opponents import LEAGUE, SELF, OpponentGroup

__all__ = ["SnapshotPool", "pfsp_probabilities", "League", "league_members", "saved_league"]

SNAPSHOT_PREFIX = "self@"
"""a snapshot member's name is ``self@<learner step when taken>``"""


class SnapshotPool:
    """The newest ``size`` snapshots of the learner's weights (CPU copies of ``policy.state_dict()``), oldest first."""

    def __init__(self, size: int = 8) -> None:
        if size < 1:
            raise ValueError(f"snapshot pool size must be >= 1, got {size}")
        self.size = int(size)
        self.snapshots: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self.added = 0

    def __len__(self) -> int:
        return len(self.snapshots)

    def add(self, policy: Any, step: int) -> list[str]:
        """Keep a copy of the policy's current weights as ``self@step``; returns the names evicted to make room."""
        name = f"{SNAPSHOT_PREFIX}{int(step)}"
        self.snapshots[name] = {k: v.detach().cpu().clone() for k, v in policy.state_dict().items()}
        self.snapshots.move_to_end(name)
        self.added += 1
        evicted = []
        while len(self.snapshots) > self.size:
            evicted.append(self.snapshots.popitem(last=False)[0])
        return evicted

    def newest(self) -> str:
        """The name of the newest snapshot."""
        if not self.snapshots:
            raise ValueError("the snapshot pool is empty: add(policy, step) first")
        return next(reversed(self.snapshots))

    def draw_recent(self, rng: np.random.Generator, latest_prob: float) -> str:
        """Self-play's draw: the newest snapshot with probability ``latest_prob``, else a uniformly drawn one."""
        newest = self.newest()
        if rng.random() < latest_prob:
            return newest
        return list(self.snapshots)[int(rng.integers(len(self.snapshots)))]


def pfsp_probabilities(win_rates: Sequence[float] | np.ndarray, power: float = 2.0) -> np.ndarray:
    """Draw probabilities ``(1 - p) ** power`` normalised, ``p`` the learner's win rate per member.

    Members the learner always beats (``p == 1``) get 0; when it beats all of them, uniform."""
    p = np.asarray(win_rates, np.float64)
    if p.ndim != 1 or p.size == 0 or not ((p >= 0) & (p <= 1)).all():
        raise ValueError(f"win rates must be a non-empty list of numbers in [0, 1], got {list(win_rates)!r}")
    if not power >= 0:
        raise ValueError(f"the PFSP power must be >= 0, got {power!r}")
    w = (1.0 - p) ** power
    return w / w.sum() if w.sum() > 0 else np.full(p.size, 1.0 / p.size)


def league_members(specs: Sequence[str], rules: UnoRules, groups: Sequence[OpponentGroup]) -> list[dict[str, Agent]]:
    """The league's fixed members, built once: for each ``league`` group of ``groups`` its own sampling agent
    per spec (an agent keeps state between calls); none when no group is a league's."""
    names = list(dict.fromkeys(s.strip() for s in specs if s.strip()))
    return [{spec: build_agent(spec, rules, deterministic=False) for spec in names} for g in groups if g.kind == LEAGUE]


class League(BaseCallback):
    """The ``self`` and ``league`` groups' opponents, drawn from one snapshot pool; ``members``: the fixed members
    of each league group (``league_members``). Its settings are ``train.py``'s, checked there."""

    def __init__(
        self,
        venv: Any,
        groups: Sequence[OpponentGroup],
        members: Sequence[Mapping[str, Agent]],
        pool_size: int = 8,
        window: int = 500,
        power: float = 2.0,
        latest_prob: float = 0.5,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.venv = venv
        self.pool = SnapshotPool(pool_size)
        self.groups = [g for g, group in enumerate(groups) if group.kind == LEAGUE]
        self.self_groups = [g for g, group in enumerate(groups) if group.kind == SELF]
        self.group_of = np.asarray(venv.group_of)
        self.fixed = [dict(m) for m in members]
        self.specs = list(self.fixed[0]) if self.fixed else []
        self.frozen: list[PPOAgent] = []
        self.self_agents: list[PPOAgent] = []
        self.window, self.power, self.latest_prob = int(window), float(power), float(latest_prob)
        self.results: dict[str, collections.deque[float]] = {
            spec: collections.deque(maxlen=self.window) for spec in self.specs
        }
        self.current: list[str] = [""] * len(self.groups)
        self.self_current: list[str] = [""] * len(self.self_groups)
        self.rng = np.random.default_rng(seed)  # the league's draws
        self.self_rng = np.random.default_rng(seed)  # the self groups' draws

    # --- members and draws ---------------------------------------------------------------

    @property
    def snapshots(self) -> collections.OrderedDict[str, dict]:
        """The pool's snapshots by name, oldest first."""
        return self.pool.snapshots

    @property
    def members(self) -> list[str]:
        """The fixed specs, then the snapshots oldest first."""
        return [*self.specs, *self.snapshots]

    def win_rates(self) -> np.ndarray:
        """The learner's Laplace-smoothed recent win rate against each member."""
        return np.array([(sum(self.results[m]) + 1) / (len(self.results[m]) + 2) for m in self.members])

    def probabilities(self) -> np.ndarray:
        """Each member's draw probability (``pfsp_probabilities`` of ``win_rates``)."""
        return pfsp_probabilities(self.win_rates(), self.power)

    def start(self, policy: Any, step: int = 0) -> None:
        """Snapshot the learner (the pool's first snapshot); every self and league group gets its opponent."""
        self.frozen = [PPOAgent.frozen(policy, deterministic=False, name=LEAGUE) for _ in self.groups]
        self.self_agents = [PPOAgent.frozen(policy, deterministic=False, name=SELF) for _ in self.self_groups]
        if not self.snapshots:
            self._add(policy, step)
        for k in range(len(self.self_groups)):
            self._install_self(k, self.pool.newest())
        self.redraw()

    def add_snapshot(self, policy: Any, step: int) -> None:
        """Add a frozen copy of the learner's weights (the oldest leaves a full pool); the self groups draw again."""
        self._add(policy, step)
        for k in range(len(self.self_groups)):
            self._install_self(k, self.pool.draw_recent(self.self_rng, self.latest_prob))

    def _add(self, policy: Any, step: int) -> None:
        for old in self.pool.add(policy, step):
            self.results.pop(old, None)
        self.results[self.pool.newest()] = collections.deque(maxlen=self.window)

    def redraw(self) -> None:
        """Every league group draws its next opponent by PFSP."""
        if not self.groups:
            return
        members, probs = self.members, self.probabilities()
        # A swap takes effect at the opponent's next decision, so a round in progress finishes
        # against the new member and counts for it: a blur of the estimate, not a bias.
        for k in range(len(self.groups)):
            self._install(k, members[int(self.rng.choice(len(members), p=probs))])

    def _install(self, k: int, member: str) -> None:
        agent: Any
        if member in self.snapshots:
            self.frozen[k].load_state(self.snapshots[member])
            agent = self.frozen[k]
        else:
            agent = self.fixed[k][member]
        self.current[k] = member
        self.venv.set_opponents(agent, group=self.groups[k])

    def _install_self(self, k: int, name: str) -> None:
        self.self_agents[k].load_state(self.snapshots[name])
        self.self_current[k] = name
        self.venv.set_opponents(self.self_agents[k], group=self.self_groups[k])

    # --- results: an SB3 callback ------------------------------------------------------------

    def _on_step(self) -> bool:
        dones = self.locals["dones"]
        self.record(rounds_won(self.locals["infos"], dones), dones)
        return True

    def record(self, won: np.ndarray, dones: np.ndarray) -> None:
        """Count the league rounds that ended this step, won or not, for the member each group played."""
        if self.groups and dones.any():
            slot = {g: k for k, g in enumerate(self.groups)}
            for i in np.flatnonzero(dones):
                k = slot.get(int(self.group_of[i]))
                # A member evicted since the draw still plays until the next one; its rounds are not counted.
                if k is not None and self.current[k] in self.results:
                    self.results[self.current[k]].append(bool(won[i]))

    def summary(self) -> str | None:
        """``member p=win rate P=draw probability (rounds)`` per member, one line; None without league groups."""
        if not self.groups:
            return None
        return "league: " + ", ".join(
            f"{m} p={p:.2f} P={q:.2f} ({len(self.results[m])})"
            for m, p, q in zip(self.members, self.win_rates(), self.probabilities(), strict=True)
        )

    def describe(self) -> str:
        """``snapshot pool: N snapshots``, then ``; league: M members`` when there are league groups."""
        text = f"snapshot pool: {len(self.pool)} snapshots"
        return text + (f"; league: {len(self.members)} members" if self.groups else "")

    # --- checkpoints -------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The pool, results, current draws and both generators, for a checkpoint."""
        return {
            "snapshots": list(self.snapshots.items()),
            "added": self.pool.added,
            "results": {m: list(r) for m, r in self.results.items()},
            "current": list(self.current),
            "self_current": list(self.self_current),
            "rng": self.rng.bit_generator.state,
            "self_rng": self.self_rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` (or ``saved_league`` of an older checkpoint) after ``start``.

        Each group plays again the member it played; results of fixed specs no longer in
        ``specs`` are dropped; a league group whose member is gone draws anew, a self group
        whose snapshot is gone (or was not saved) plays the newest."""
        self.pool.snapshots = collections.OrderedDict((name, weights) for name, weights in state["snapshots"])
        self.pool.added = int(state.get("added", len(self.pool.snapshots)))
        results = state.get("results", {})
        self.results = {m: collections.deque(results.get(m, []), maxlen=self.window) for m in self.members}
        if state.get("rng") is not None:
            self.rng.bit_generator.state = state["rng"]
        if state.get("self_rng") is not None:
            self.self_rng.bit_generator.state = state["self_rng"]
        members = self.members
        current = list(state.get("current", []))
        for k in range(len(self.groups)):
            member = current[k] if k < len(current) else None
            if member not in members:
                member = members[int(self.rng.choice(len(members), p=self.probabilities()))]
            self._install(k, member)
        self_current = list(state.get("self_current", []))
        for k in range(len(self.self_groups)):
            name = self_current[k] if k < len(self_current) else None
            self._install_self(k, str(name) if name in self.snapshots else self.pool.newest())


def saved_league(run_state: dict[str, Any]) -> dict[str, Any]:
    """The league's part of a checkpoint's run state, for ``League.load_state_dict``.

    Checkpoints written before self-play and the league shared one pool hold the two apart
    (``self_play``: unnamed snapshots, their count and generator; ``league``: named snapshots,
    results, draws, generator, or None); both held the same snapshots, so the league's names
    are kept when it was saved."""
    if "self_play" not in run_state:
        return run_state["league"]
    old_self, old_league = run_state["self_play"], run_state.get("league") or {}
    snapshots = old_league.get("snapshots") or [
        (f"{SNAPSHOT_PREFIX}restored-{i}", weights) for i, weights in enumerate(old_self["snapshots"])
    ]
    return {**old_league, "snapshots": snapshots, "added": old_self["added"], "self_rng": old_self["rng"]}
