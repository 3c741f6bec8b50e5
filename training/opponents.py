"""The opponent mix of a training run: ``--opponent-mix`` parsed, and the batch of games split into opponent groups.

```python
mix = parse_mix("rlcard_rule:0.5,search:64:0.25,self:0.25")
groups = opponent_groups(mix, 256, rules, self_play_groups=2)
venv = UnoSB3VecEnv(256, 2, rules, opponents=[(g.agent, g.games) for g in groups])
```

| piece | what it is |
|---|---|
| ``parse_mix(text)`` | ``"spec:weight,..."`` -> ``{spec: weight}`` (weights >= 0, normalised); a spec is any ``agents.registry.make_agent`` spec, ``self``, ``league``, or a mixed table ``a+b+c`` (one spec per other seat, clockwise from the learner) |
| ``split_games(n, weights)`` | how many of ``n`` games each kind gets (largest remainders; every kind with a positive weight gets at least one game when ``n`` allows) |
| ``opponent_groups(mix, n, rules, self_play_groups, league_groups)`` | the groups ``(kind, agent, games)`` in game order: one per kind, the ``self`` games split into ``self_play_groups`` groups and the ``league`` games into ``league_groups`` |
| ``seat_agents(spec, rules, num_players)`` | the agents of the other seats for one spec: ``num_players - 1`` copies of a registry agent, or a mixed table's one per seat |
| ``PendingSnapshot`` | the agent of a ``self`` or ``league`` group until the learner exists (``training.league.League`` swaps in their opponents) |

Why groups and not an agent that picks an opponent per row: the agent protocol
(``act(observation, action_mask, rng)``) does not say which game a row belongs to, so such an
agent could not keep one opponent for a whole round; a per-decision mixture is a different
opponent from each of its members. A group keeps one opponent kind for every round it plays
(the vector env's driver calls each group's agent on its own games), and the mix is the share
of games. With more than two players a group's opponent plays every other seat of its tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.registry import make_agent
from uno_env import Agent, UnoRules

__all__ = [
    "SELF",
    "LEAGUE",
    "OpponentGroup",
    "PendingSnapshot",
    "parse_mix",
    "split_games",
    "opponent_groups",
    "seat_agents",
]

TABLE = "+"
"""joins the specs of a mixed table: ``heuristic+rlcard_rule+greedy`` seats one of each, clockwise from the learner"""
SELF = "self"
"""the mix entry of self-play: frozen snapshots of the learner"""
LEAGUE = "league"
"""the mix entry of the league: baselines and snapshots drawn by how often they beat the learner (``training.league``)"""


def parse_mix(text: str) -> dict[str, float]:
    """``"a:0.5,b:0.5"`` -> ``{"a": 0.5, "b": 0.5}``, weights normalised to sum to 1.

    The weight is what follows the last ``:`` when it is a number; a bare spec has weight 1, so
    a spec that holds ``:`` itself needs its weight (``search:64:1``; ``search:64`` alone is
    ``search`` with weight 64). Raises ``ValueError`` for an empty mix, a bad weight, a
    repeated spec, or weights that sum to 0; the specs are checked when the agents are built.
    """
    mix: dict[str, float] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        name, _, weight = part.rpartition(":")
        if not name or not _is_number(weight):
            name, weight = part, "1"
        name = name.strip()
        w = float(weight)
        if not np.isfinite(w) or w < 0:
            raise ValueError(f"opponent mix {text!r}: weight of {name!r} must be a finite number >= 0, got {w}")
        if name in mix:
            raise ValueError(f"opponent mix {text!r}: {name!r} is given twice")
        mix[name] = w
    total = sum(mix.values())
    if total <= 0:
        raise ValueError(
            f"opponent mix {text!r} needs at least one opponent with a positive weight ('spec:weight,...')"
        )
    return {k: v / total for k, v in mix.items() if v > 0}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def split_games(n: int, weights: Sequence[float]) -> list[int]:
    """Games per kind: proportional to ``weights`` (largest remainders), at least one per positive
    weight while ``n`` allows; sums to ``n``."""
    w = np.asarray(weights, np.float64)
    if n < 1 or w.size == 0 or (w < 0).any() or w.sum() <= 0:
        raise ValueError(
            f"split_games needs n >= 1 and non-negative weights with a positive sum, got {n}, {list(weights)}"
        )
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


class PendingSnapshot:
    """A self-play (or league) seat before the learner exists: the env is built before the model,
    so its opponent comes later (``League.start``); acting before that raises
    ``ValueError``."""

    def __init__(self, name: str = SELF) -> None:
        self.name = name

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Refuses: there is no snapshot yet."""
        raise ValueError(f"this {self.name} group has no snapshot yet: League.start(policy) installs one")


@dataclass
class OpponentGroup:
    """``games`` consecutive games of the batch played against ``agent`` (of mix entry ``kind``)."""

    kind: str
    agent: Agent | list[Agent]  # a list: one agent per other seat (a mixed table)
    games: int


def seat_agents(spec: str, rules: UnoRules | Any, num_players: int) -> list[Agent]:
    """The other seats' agents for ``spec``: a mixed table ``a+b+c`` (one spec per seat, clockwise from
    the learner; ValueError unless it names ``num_players - 1``), else that many fresh copies of one agent."""
    if TABLE not in spec:
        return [make_agent(spec, rules) for _ in range(num_players - 1)]
    specs = spec.split(TABLE)
    if len(specs) != num_players - 1:
        raise ValueError(
            f"the mixed table {spec!r} names {len(specs)} seats; a table of {num_players} players needs "
            f"{num_players - 1}, one per seat after the learner's"
        )
    return [make_agent(s, rules) for s in specs]


def opponent_groups(
    mix: dict[str, float], num_envs: int, rules: UnoRules | Any, self_play_groups: int = 1, league_groups: int = 1
) -> list[OpponentGroup]:
    """The batch split by ``mix`` into groups in game order (module docstring); agents from ``make_agent``."""
    counts = split_games(int(num_envs), list(mix.values()))
    split = {SELF: int(self_play_groups), LEAGUE: int(league_groups)}
    groups = []
    for kind, n in zip(mix, counts, strict=True):
        parts = max(1, min(split.get(kind, 1), n))
        for n_part in split_games(n, [1.0] * parts) if n else []:
            agent: Any
            if kind in split:
                agent = PendingSnapshot(kind)
            elif TABLE in kind:
                agent = [make_agent(spec, rules) for spec in kind.split(TABLE)]
            else:
                agent = make_agent(kind, rules)
            groups.append(OpponentGroup(kind, agent, n_part))
    return groups
