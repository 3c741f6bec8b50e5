"""The opponent mix of a training run: ``--opponent-mix`` parsed, and the batch of games split into opponent groups.

```python
mix = parse_mix("0.5*rlcard_rule,0.25*search:64,0.25*self")
groups = opponent_groups(mix, 256, rules, self_play_groups=2, num_players=2)
venv = UnoSB3VecEnv(256, 2, rules, opponents=[(g.agent, g.games) for g in groups])
```

| piece | what it is |
|---|---|
| ``parse_mix(text)`` | ``"weight*spec,..."`` -> ``{spec: weight}`` (``agents.registry.parse_mix``: weights >= 0, normalised); a spec is any ``agents.registry.make_agent`` spec, ``self``, ``league``, or a mixed table ``a+b+c`` (one spec per other seat, clockwise from the learner) |
| ``split_games(n, weights)`` | how many of ``n`` games each kind gets (largest remainders; every kind with a positive weight gets at least one game when ``n`` allows) |
| ``opponent_groups(mix, n, rules, self_play_groups, league_groups, num_players=P)`` | the groups ``(kind, agent, games)`` in game order: one per kind, the ``self`` games split into ``self_play_groups`` groups and the ``league`` games into ``league_groups``; a mixed table must name ``P - 1`` seats (``seat_agents``) |
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

from agents import registry
from agents.registry import TABLE, make_agent, parse_table
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

SELF = "self"
"""the mix entry of self-play: frozen snapshots of the learner"""
LEAGUE = "league"
"""the mix entry of the league: baselines and snapshots drawn by how often they beat the learner (``training.league``)"""


def parse_mix(text: str) -> dict[str, float]:
    """``"0.5*a,0.5*b"`` -> ``{"a": 0.5, "b": 0.5}``: ``agents.registry.parse_mix`` with the
    entries ``self`` and ``league`` beside the specs and mixed tables."""
    return registry.parse_mix(text, extra=(SELF, LEAGUE))


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
        # The history the opponents installed later read: the env's engine keeps it from the start.
        self.history_length = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Refuses: there is no snapshot yet."""
        raise ValueError(f"this {self.name} group has no snapshot yet: League.start(policy) installs one")


@dataclass
class OpponentGroup:
    """``games`` consecutive games of the batch played against ``agent`` (of mix entry ``kind``)."""

    kind: str
    agent: Agent | list[Agent]  # a list: one agent per other seat (a mixed table)
    games: int


def seat_agents(spec: str, rules: UnoRules, num_players: int) -> list[Agent]:
    """The other seats' agents for ``spec``: a mixed table ``a+b+c`` (one spec per seat, clockwise from
    the learner; ValueError unless it names ``num_players - 1``), else that many fresh copies of one agent."""
    specs = parse_table(spec)
    if len(specs) == 1:
        return [make_agent(specs[0], rules) for _ in range(num_players - 1)]
    if len(specs) != num_players - 1:
        raise ValueError(
            f"the mixed table {spec!r} names {len(specs)} seats; a table of {num_players} players needs "
            f"{num_players - 1}, one per seat after the learner's"
        )
    return [make_agent(s, rules) for s in specs]


def opponent_groups(
    mix: dict[str, float],
    num_envs: int,
    rules: UnoRules,
    self_play_groups: int = 1,
    league_groups: int = 1,
    *,
    num_players: int,
) -> list[OpponentGroup]:
    """The batch split by ``mix`` into groups in game order (module docstring) for tables of
    ``num_players``; agents from ``make_agent``, a mixed table's from ``seat_agents`` (ValueError
    unless it names ``num_players - 1`` seats)."""
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
                agent = seat_agents(kind, rules, num_players)
            else:
                agent = make_agent(kind, rules)
            groups.append(OpponentGroup(kind, agent, n_part))
    return groups
