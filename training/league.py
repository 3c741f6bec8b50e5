"""The league of a training run: prioritized fictitious self-play (PFSP) over baselines and snapshots of the learner.

```python
groups = opponent_groups(parse_mix("league"), 256, rules, league_groups=4)
venv = UnoSB3VecEnv(256, 2, rules, opponents=[(g.agent, g.games) for g in groups])
league = League(venv, groups, ["rlcard_rule", "heuristic", "search:32"], rules, seed=1)
league.start(model.policy)                       # adds the first snapshot, each group draws an opponent
model.learn(n, callback=[league])                # counts the learner's results per member
league.redraw()                                  # after each rollout: every group draws again
league.add_snapshot(model.policy, step)          # every --snapshot-every steps
```

| piece | what it is |
|---|---|
| ``pfsp_probabilities(win_rates, power)`` | the draw probabilities: ``f(p) = (1 - p) ** power``, normalised |
| ``League`` | the ``league`` groups of ``training.opponents.opponent_groups``, the members they draw from, the results per member; an SB3 callback (it reads each step's ``dones`` and ``rewards``) |

**Members.** The fixed specs (any ``agents.registry.make_agent`` spec: baselines, ``search:N``,
a saved model) and the newest ``pool_size`` frozen snapshots of the learner (``self@STEP``).
Every group builds its own agent per fixed spec (agents may keep scratch state) and one frozen
``PPOAgent`` into which a drawn snapshot's weights are loaded.

**PFSP** (Vinyals et al. 2019, AlphaStar's "hard" weighting). ``p`` is the learner's win rate
against a member over its last ``window`` finished rounds, Laplace-smoothed
(``(wins + 1) / (rounds + 2)``: an unplayed member counts as even, and one the learner always
beats keeps a small chance, so its estimate can still change); a member is drawn with
probability proportional to ``(1 - p) ** power``. The learner thus spends its games on the
opponents that still beat it, and not on those it has mastered.

**When results count.** A group redraws after each rollout; a swap takes effect at the
opponent's next decision (``set_opponents``), so a round in progress at a swap finishes against
the new member and is counted for it: a small blur of the estimate, not a bias toward any member.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.ppo import PPOAgent
from agents.registry import make_agent
from uno_env import UnoRules

from .opponents import LEAGUE, OpponentGroup

__all__ = ["pfsp_probabilities", "League"]

SNAPSHOT_PREFIX = "self@"
"""a snapshot member's name is ``self@<learner step when taken>``"""


def pfsp_probabilities(win_rates: Sequence[float], power: float = 2.0) -> np.ndarray:
    """Draw probabilities ``(1 - p) ** power`` normalised, ``p`` the learner's win rate per member.

    Members the learner always beats (``p == 1``) get 0; when it beats all of them, uniform."""
    p = np.asarray(win_rates, np.float64)
    if p.ndim != 1 or p.size == 0 or not ((p >= 0) & (p <= 1)).all():
        raise ValueError(f"win rates must be a non-empty list of numbers in [0, 1], got {list(win_rates)!r}")
    if not power >= 0:
        raise ValueError(f"the PFSP power must be >= 0, got {power!r}")
    w = (1.0 - p) ** power
    return w / w.sum() if w.sum() > 0 else np.full(p.size, 1.0 / p.size)


class League(BaseCallback):
    """The ``league`` groups' opponents, drawn by PFSP (module docstring)."""

    def __init__(
        self,
        venv: Any,
        groups: Sequence[OpponentGroup],
        specs: Sequence[str],
        rules: UnoRules,
        pool_size: int = 8,
        window: int = 500,
        power: float = 2.0,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if pool_size < 1 or window < 1:
            raise ValueError(f"league pool size and window must be >= 1, got {pool_size} and {window}")
        pfsp_probabilities([0.5], power)  # checks the power
        self.venv = venv
        self.groups = [g for g, group in enumerate(groups) if group.kind == LEAGUE]
        self.group_of = np.asarray(venv.group_of)
        self.specs = list(dict.fromkeys(specs))
        self.fixed = [{spec: make_agent(spec, rules, deterministic=False) for spec in self.specs} for _ in self.groups]
        self.frozen: list[PPOAgent] = []
        self.snapshots: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self.pool_size, self.window, self.power = int(pool_size), int(window), float(power)
        self.results = {spec: collections.deque(maxlen=self.window) for spec in self.specs}
        self.current: list[str] = [""] * len(self.groups)
        self.rng = np.random.default_rng(seed)

    # --- members and draws ---------------------------------------------------------------

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
        """Snapshot the learner (the first snapshot member) and let every group draw its opponent."""
        self.frozen = [PPOAgent.frozen(policy, deterministic=False, name=LEAGUE) for _ in self.groups]
        if not self.snapshots:
            self.add_snapshot(policy, step)
        self.redraw()

    def add_snapshot(self, policy: Any, step: int) -> None:
        """Add a frozen copy of the learner's weights; the oldest snapshot leaves a full pool."""
        name = f"{SNAPSHOT_PREFIX}{int(step)}"
        self.snapshots[name] = {k: v.detach().cpu().clone() for k, v in policy.state_dict().items()}
        self.results[name] = collections.deque(maxlen=self.window)
        while len(self.snapshots) > self.pool_size:
            old, _ = self.snapshots.popitem(last=False)
            del self.results[old]

    def redraw(self) -> None:
        """Every group draws its next opponent by PFSP."""
        members, probs = self.members, self.probabilities()
        for k in range(len(self.groups)):
            self._install(k, members[int(self.rng.choice(len(members), p=probs))])

    def _install(self, k: int, member: str) -> None:
        if member in self.snapshots:
            self.frozen[k].load_state(self.snapshots[member])
            agent = self.frozen[k]
        else:
            agent = self.fixed[k][member]
        self.current[k] = member
        self.venv.set_opponents(agent, group=self.groups[k])

    # --- results: an SB3 callback ------------------------------------------------------------

    def _on_step(self) -> bool:
        dones = self.locals["dones"]
        if dones.any():
            won = self.locals["rewards"] > 0
            slot = {g: k for k, g in enumerate(self.groups)}
            for i in np.flatnonzero(dones):
                k = slot.get(int(self.group_of[i]))
                # A member evicted since the draw still plays until the next one; its rounds are not counted.
                if k is not None and self.current[k] in self.results:
                    self.results[self.current[k]].append(bool(won[i]))
        return True

    def summary(self) -> str:
        """``member p=win rate P=draw probability (rounds)`` per member, one line."""
        return "league: " + ", ".join(
            f"{m} p={p:.2f} P={q:.2f} ({len(self.results[m])})"
            for m, p, q in zip(self.members, self.win_rates(), self.probabilities(), strict=True)
        )

    # --- checkpoints -------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Snapshots, results, current draws and the generator, for a checkpoint."""
        return {
            "snapshots": list(self.snapshots.items()),
            "results": {m: list(r) for m, r in self.results.items()},
            "current": list(self.current),
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` after ``start``: each group plays again the member it played.

        Results of fixed specs no longer in ``specs`` are dropped; a group whose member is gone
        draws anew."""
        self.snapshots = collections.OrderedDict((name, weights) for name, weights in state["snapshots"])
        self.results = {m: collections.deque(state["results"].get(m, []), maxlen=self.window) for m in self.members}
        self.rng.bit_generator.state = state["rng"]
        members = self.members
        for k, member in enumerate(state["current"][: len(self.groups)]):
            if member in members:
                self._install(k, member)
