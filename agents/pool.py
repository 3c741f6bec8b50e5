"""Training against a pool of opponents: the batch of games split into groups, one opponent kind each.

```python
from agents.pool import PoolVecEnv, parse_mix
mix = parse_mix("rlcard_rule:0.5,heuristic:0.25,self:0.25")
venv = PoolVecEnv(256, mix, opponent_for, num_players=2, rules="classic", seed=0)
```

| piece | what it is |
|---|---|
| ``parse_mix(text)`` | ``"name:weight,..."`` -> ``{name: weight}`` (weights >= 0, normalised) |
| ``split_games(n, weights)`` | how many of ``n`` games each kind gets (largest remainders; every kind with a positive weight gets at least one game when ``n`` allows) |
| ``PoolVecEnv`` | a stable-baselines3 ``VecEnv`` of ``n`` games for ``MaskablePPO``: one ``UnoSB3VecEnv`` per group, each with its own opponents, stepped in turn; game ``i`` of the whole is game ``i - offset`` of its group |
| ``SnapshotPool`` | frozen copies of the learner's weights (self-play): ``add(policy)``, ``sample(rng)`` |
| ``SelfPlayOpponent`` | the opponent of a self-play group: plays the ``PPOAgent`` it is given once the learner exists |

Why groups and not an agent that picks an opponent per row: the agent protocol
(``act(observation, action_mask, rng)``) does not say which game a row belongs to, so such an
agent could not keep one opponent for a whole round; a per-decision mixture is a different
opponent from each of its members. A group keeps one opponent kind for every round it plays,
and the mix is the share of games. A self-play group's opponent is a ``PPOAgent`` over a
snapshot whose weights ``train.py`` replaces from the ``SnapshotPool`` as training goes (the
swap takes effect at the opponent's next decision; rounds are short once the learner plays).
With more than two players a group's opponent kind plays every other seat of its tables.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from uno_env.sb3_vec_env import UnoSB3VecEnv, game_indices

__all__ = ["parse_mix", "split_games", "PoolVecEnv", "SnapshotPool", "SelfPlayOpponent"]


def parse_mix(text: str, allowed: Iterable[str] | None = None) -> dict[str, float]:
    """``"a:0.5,b:0.5"`` -> ``{"a": 0.5, "b": 0.5}``, weights normalised to sum to 1.

    A bare name has weight 1. Raises ``ValueError`` for an empty mix, a bad weight, a
    repeated or (with ``allowed``) unknown name, or weights that sum to 0.
    """
    allowed_set = None if allowed is None else set(allowed)
    mix: dict[str, float] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        name, _, weight = part.partition(":")
        name = name.strip()
        try:
            w = float(weight) if weight.strip() else 1.0
        except ValueError:
            raise ValueError(f"opponent mix {text!r}: weight of {name!r} must be a number, got {weight!r}") from None
        if not np.isfinite(w) or w < 0:
            raise ValueError(f"opponent mix {text!r}: weight of {name!r} must be a finite number >= 0, got {w}")
        if name in mix:
            raise ValueError(f"opponent mix {text!r}: {name!r} is given twice")
        if allowed_set is not None and name not in allowed_set:
            raise ValueError(f"opponent mix {text!r}: unknown opponent {name!r}; allowed: {sorted(allowed_set)}")
        mix[name] = w
    total = sum(mix.values())
    if total <= 0:
        raise ValueError(f"opponent mix {text!r} needs at least one opponent with a positive weight ('name:weight,...')")
    return {k: v / total for k, v in mix.items() if v > 0}


def split_games(n: int, weights: Sequence[float]) -> list[int]:
    """Games per kind: proportional to ``weights`` (largest remainders), at least one per positive
    weight while ``n`` allows; sums to ``n``."""
    w = np.asarray(weights, np.float64)
    if n < 1 or w.size == 0 or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"split_games needs n >= 1 and non-negative weights with a positive sum, got {n}, {list(weights)}")
    share = w / w.sum() * n
    counts = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - counts), kind="stable")
    counts[order[: n - counts.sum()]] += 1
    # A kind asked for but rounded to 0 games takes one from the largest group.
    for k in np.flatnonzero((w > 0) & (counts == 0)):
        big = int(np.argmax(counts))
        if counts[big] > 1:
            counts[big] -= 1
            counts[k] += 1
    return [int(c) for c in counts]


class SnapshotPool:
    """The last ``size`` snapshots of the learner's weights (CPU copies of ``policy.state_dict()``)."""

    def __init__(self, size: int = 10, latest_prob: float = 0.5) -> None:
        if size < 1:
            raise ValueError(f"snapshot pool size must be >= 1, got {size}")
        if not 0.0 <= latest_prob <= 1.0:
            raise ValueError(f"latest_prob must be in [0, 1], got {latest_prob}")
        self.snapshots: collections.deque = collections.deque(maxlen=size)
        self.latest_prob = latest_prob
        self.added = 0

    def add(self, policy: Any) -> None:
        """Keep a copy of the policy's current weights."""
        self.snapshots.append({k: v.detach().cpu().clone() for k, v in policy.state_dict().items()})
        self.added += 1

    def sample(self, rng: np.random.Generator) -> dict:
        """The newest snapshot with probability ``latest_prob``, else a uniformly drawn one."""
        if not self.snapshots:
            raise ValueError("the snapshot pool is empty: add(policy) first")
        if rng.random() < self.latest_prob:
            return self.snapshots[-1]
        return self.snapshots[int(rng.integers(len(self.snapshots)))]


class SelfPlayOpponent:
    """A self-play seat: the env is built before the learner, so the snapshot agent comes later.

    ``agent`` is set to a ``PPOAgent`` (``PPOAgent.frozen(model.policy)``) once the model
    exists; acting before that raises ``ValueError``.
    """

    name = "self"

    def __init__(self) -> None:
        self.agent: Any = None

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The snapshot's actions."""
        if self.agent is None:
            raise ValueError("this self-play opponent has no snapshot yet: set .agent to a PPOAgent first")
        return self.agent.act(observation, action_mask, rng)


class PoolVecEnv(VecEnv):
    """``num_envs`` games for SB3, split into groups with their own opponents (module docstring).

    | argument | meaning |
    |---|---|
    | ``num_envs`` | games in all |
    | ``mix`` | ``{kind: weight}`` (``parse_mix``); a kind may appear in several groups via ``groups_per_kind`` |
    | ``opponent_for`` | ``opponent_for(kind, group_index) -> agent`` (or a list of ``num_players - 1`` agents) |
    | ``num_players``, ``rules``, ``learner_seat`` | as ``UnoSB3VecEnv`` |
    | ``groups_per_kind`` | ``{kind: k}``: split that kind's games into k groups (e.g. several self-play snapshots at once) |
    | ``seed`` | game ``i`` of the whole is dealt with seed ``seed + i`` |

    ``group_of[i]`` is the group of game ``i``; ``groups[g] = (kind, first game, games)``.
    ``results(kind)`` gives the learner's recent (wins, games) against a kind (last 1000 rounds).
    """

    def __init__(self, num_envs: int, mix: dict[str, float], opponent_for: Callable[[str, int], Any],
                 num_players: int = 2, rules: Any = None, learner_seat: int | str = "random",
                 groups_per_kind: dict[str, int] | None = None, seed: int | None = None) -> None:
        kinds = list(mix)
        counts = split_games(int(num_envs), [mix[k] for k in kinds])
        self.groups: list[tuple[str, int, int]] = []
        self.venvs: list[UnoSB3VecEnv] = []
        start = 0
        for kind, n in zip(kinds, counts):
            parts = max(1, min(int((groups_per_kind or {}).get(kind, 1)), n))
            for n_part in split_games(n, [1.0] * parts) if n else []:
                g = len(self.groups)
                self.venvs.append(UnoSB3VecEnv(n_part, num_players, rules=rules, learner_seat=learner_seat,
                                               opponents=opponent_for(kind, g)))
                self.groups.append((kind, start, n_part))
                start += n_part
        self.group_of = np.concatenate([np.full(n, g) for g, (_, _, n) in enumerate(self.groups)])
        self.bounds = [(s, s + n) for _, s, n in self.groups]
        self.render_mode = None
        first = self.venvs[0]
        super().__init__(start, first.observation_space, first.action_space)
        self._recent = {k: collections.deque(maxlen=1000) for k in kinds}
        self._actions: np.ndarray | None = None
        if seed is not None:
            self.seed(seed)

    def reset(self) -> np.ndarray:
        """Deal every game; observations of all groups in game order."""
        seeds = None if self._seeds[0] is None else int(self._seeds[0])
        obs = []
        for venv, (_, s, _) in zip(self.venvs, self.groups):
            if seeds is not None:
                venv.seed(seeds + s)
            obs.append(venv.reset())
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return np.concatenate(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Store the learner's actions (one per game)."""
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step each group with its slice of the actions; finished games are dealt anew."""
        if self._actions is None:
            raise ValueError("step_wait() needs step_async(actions) first")
        obs, rewards, dones, infos = [], [], [], []
        for venv, (kind, s, n) in zip(self.venvs, self.groups):
            o, r, d, i = venv.step(self._actions[s:s + n])
            obs.append(o)
            rewards.append(r)
            dones.append(d)
            infos.extend(i)
            if d.any():
                self._recent[kind].extend((r[d] > 0).tolist())
        self._actions = None
        return np.concatenate(obs), np.concatenate(rewards), np.concatenate(dones), infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool [num_envs, 116]."""
        return np.concatenate([v.action_masks() for v in self.venvs])

    def results(self, kind: str) -> tuple[int, int]:
        """(learner wins, rounds) over the last 1000 finished rounds against ``kind``."""
        recent = self._recent.get(kind, ())
        return int(sum(recent)), len(recent)

    def close(self) -> None:
        """Close every group."""
        for v in self.venvs:
            v.close()

    def _indices(self, indices: None | int | Iterable[int]) -> list[int]:
        return game_indices(indices, self.num_envs)

    def get_attr(self, attr_name: str, indices: None | int | Iterable[int] = None) -> list[Any]:
        """The attribute of each requested game's group."""
        if attr_name == "render_mode":
            return [None] * len(self._indices(indices))
        return [self.venvs[self.group_of[i]].get_attr(attr_name, 0)[0] for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: None | int | Iterable[int] = None) -> None:
        """Set an attribute of every group (a subset of the games is refused, as in ``UnoSB3VecEnv``)."""
        if len(self._indices(indices)) != self.num_envs:
            raise ValueError(f"set_attr({attr_name!r}) applies to all {self.num_envs} games at once; got indices={indices!r}")
        for v in self.venvs:
            v.set_attr(attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: None | int | Iterable[int] = None,
                   **method_kwargs: Any) -> list[Any]:
        """``action_masks``: one row per game; any other method: called on each game's group."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        return [self.venvs[self.group_of[i]].env_method(method_name, *method_args, indices=0, **method_kwargs)[0]
                for i in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: None | int | Iterable[int] = None) -> list[bool]:
        """False per game (see ``UnoSB3VecEnv.env_is_wrapped``)."""
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No images."""
        return [None] * self.num_envs

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds for the next ``reset``: game i gets ``seed + i``."""
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0):
            raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")
        return super().seed(None if seed is None else int(seed))
