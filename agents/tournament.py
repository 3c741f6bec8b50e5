"""Tournaments: batched games between agents, win rates with 95% intervals, points, Bradley–Terry ratings.

```python
from agents.tournament import play_table, tournament
r = play_table([HeuristicAgent(), RandomAgent()], num_games=10_000, seed=0)   # one table
t = tournament(agents, num_games=10_000, num_players=2, seed=0)                # every pairing
print(t.markdown())
```

| piece | what it is |
|---|---|
| ``play_table(agents, num_games, ...)`` | ``len(agents) == num_players`` agents at one table; game g puts agent i in seat ``(i + g) % num_players`` (seats rotated: over a multiple of ``num_players`` games each agent sits in each seat equally often); all games in one ``Engine``, each agent called once per engine step on the rows where it is to act (``agents.arena.play_games``, the loop ``play_match`` uses too) |
| ``tournament(agents, num_games, num_players, ...)`` | every table of ``num_players`` distinct entries of ``agents`` (every pairing with 2 players), ``num_games`` each, then ratings |
| ``TableResult`` | wins, points and win rates (95% Wilson intervals) per agent of one table, and who beat whom |
| ``bradley_terry(wins)`` | ratings on the Elo scale by maximum likelihood, with standard errors |

**Counting.** A game's winners are the seats the engine rewards +1 (R8; both partners with
``teams``). A truncated round (``max_turns``) has no winner: it counts as a game played and
not won by anyone (reported as ``truncated``). *Points* are the agent's score at the end of
the episode as the engine keeps it (R8 ``scoring``: with ``winner_takes`` the winner scores
the points left in the other hands, the others 0; with ``elimination`` each player's own
hand points, where lower is better).

**Ratings.** Each game is read as pairwise results: every winner beat every other player at
the table. The Bradley–Terry model ``P(i beats j) = p_i / (p_i + p_j)`` is fitted by maximum
likelihood (Hunter's MM iterations), with half a win added each way to every pair that met,
so that an agent that won or lost every game still gets a finite rating. Ratings are on the
Elo scale, ``400 log10(p_i)``, shifted so the anchor agent (``random`` when it plays, else
the mean) sits at ``anchor_rating``; a difference of 400 means 10:1 odds. Standard errors come
from the observed Fisher information with the anchor held fixed (the mean held fixed when
there is no anchor agent).

**Reproducibility.** A table is a function of ``seed`` and ``batch_size``: the engine's games
are seeded from it and every agent draws from its own generator spawned from it.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from uno_env import Engine, UnoRules
from uno_env.engine import OBS_OFFSETS

from .arena import WinRates, play_games, wilson_interval

__all__ = ["TableResult", "TournamentResult", "play_table", "tournament", "bradley_terry", "unique_names"]

_SCORES = OBS_OFFSETS["scores"]


@dataclass
class TableResult(WinRates):
    """One table: ``names[i]`` played ``games`` games, seats rotated."""

    names: list[str]
    games: int
    wins: np.ndarray  # int64 [n]: games the agent won
    points: np.ndarray  # float64 [n]: sum over games of the agent's final score
    beat: np.ndarray  # int64 [n, n]: games where i won and j did not
    truncated: int  # games with no winner
    steps: int  # engine actions over all games
    seconds: float

    @property
    def mean_points(self) -> np.ndarray:
        """Each agent's mean final score per game."""
        return self.points / max(self.games, 1)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "agents": self.names,
            "games": self.games,
            "wins": self.wins.tolist(),
            "win_rate": self.win_rate.tolist(),
            "ci95": [list(c) for c in self.ci95],
            "mean_points": self.mean_points.tolist(),
            "truncated": self.truncated,
            "steps": self.steps,
            "seconds": self.seconds,
        }


def unique_names(agents: Sequence[Any]) -> list[str]:
    """Agent names, with ``#2``, ``#3``... appended to repeats (``random``, ``random#2``)."""
    names, seen = [], {}
    for a in agents:
        base = str(getattr(a, "name", type(a).__name__))
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return names


def play_table(agents: Sequence[Any], num_games: int, rules: UnoRules | None = None, seed: int = 0,
               batch_size: int = 1024, names: Sequence[str] | None = None) -> TableResult:
    """``num_games`` games with one agent per seat (``num_players = len(agents)``), seats rotated."""
    P = len(agents)
    if not 2 <= P <= 10:
        raise ValueError(f"a table seats 2..10 agents (one per seat), got {P}")
    rules = UnoRules() if rules is None else rules
    names = list(names) if names is not None else unique_names(agents)
    start = time.perf_counter()
    wins = np.zeros(P, np.int64)
    points = np.zeros(P, np.float64)
    beat = np.zeros((P, P), np.int64)
    truncated = 0

    def count(engine: Engine, rows: np.ndarray, won: np.ndarray, seats: np.ndarray) -> None:
        nonlocal truncated
        wins[:] += won.sum(0)
        beat[:] += np.einsum("ri,rj->ij", won.astype(np.int64), (~won).astype(np.int64))
        truncated += int((~won.any(1)).sum())
        # Scores per seat (slot k of seat 0's view is seat k), scaled by 100 in the observation.
        scores = engine.observe(0)[rows, _SCORES:_SCORES + P] * 100.0
        points[:] += np.rint(np.take_along_axis(scores, seats, axis=1)).sum(0)

    steps, _ = play_games(agents, num_games, rules, seed, batch_size, count)
    return TableResult(names, int(num_games), wins, points, beat, truncated, steps, time.perf_counter() - start)


def bradley_terry(beat: np.ndarray, anchor: int | None = None, anchor_rating: float = 1000.0,
                  prior: float = 0.5, iters: int = 10_000, tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Elo-scale Bradley–Terry ratings and standard errors from ``beat[i, j]`` (i beat j) counts.

    See the module docstring: MM iterations on the counts plus ``prior`` wins each way for
    every pair that met; ratings ``400 log10 p`` with the anchor at ``anchor_rating`` (or the
    mean there when ``anchor`` is None).
    """
    w = np.asarray(beat, np.float64)
    n = w.shape[0]
    met = (w + w.T) > 0
    w = w + prior * met
    games = w + w.T
    total_wins = w.sum(1)
    p = np.ones(n)
    for _ in range(iters):
        denom = (games / (p[:, None] + p[None, :])).sum(1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1.0), p)
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    theta = np.log(p)
    scale = 400.0 / math.log(10.0)
    ratings = theta * scale
    ratings += anchor_rating - (ratings[anchor] if anchor is not None else ratings.mean())
    # Observed information of theta: H_ii = sum_j n_ij q_ij (1 - q_ij), H_ij = -n_ij q_ij (1 - q_ij).
    q = p[:, None] / (p[:, None] + p[None, :])
    v = games * q * (1.0 - q)
    np.fill_diagonal(v, 0.0)
    info = np.diag(v.sum(1)) - v
    se = np.zeros(n)
    if n > 1:
        if anchor is not None:
            keep = [i for i in range(n) if i != anchor]
            cov = np.linalg.pinv(info[np.ix_(keep, keep)])
            se[keep] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        else:
            # Mean fixed: the pseudo-inverse is the covariance under the sum-zero constraint.
            se = np.sqrt(np.clip(np.diag(np.linalg.pinv(info)), 0.0, None))
    return ratings, se * scale


@dataclass
class TournamentResult:
    """Every table of a tournament plus the pooled numbers per agent."""

    names: list[str]
    num_players: int
    tables: list[tuple[list[int], TableResult]]  # (agent indices, result)
    ratings: np.ndarray
    rating_se: np.ndarray
    anchor: str | None
    config: dict[str, Any] = field(default_factory=dict)

    def pairwise(self) -> tuple[np.ndarray, np.ndarray]:
        """``(beat [n, n], met [n, n])``: games i won against j, and games i and j played together."""
        n = len(self.names)
        beat = np.zeros((n, n), np.int64)
        met = np.zeros((n, n), np.int64)
        for idx, r in self.tables:
            ix = np.ix_(idx, idx)
            beat[ix] += r.beat
            met[ix] += r.games
        np.fill_diagonal(met, 0)
        return beat, met

    def per_agent(self) -> list[dict[str, Any]]:
        """Games, wins, win rate (95% CI) and mean points of each agent over all its tables."""
        n = len(self.names)
        games = np.zeros(n, np.int64)
        wins = np.zeros(n, np.int64)
        points = np.zeros(n)
        for idx, r in self.tables:
            games[idx] += r.games
            wins[idx] += r.wins
            points[idx] += r.points
        out = []
        for i, name in enumerate(self.names):
            lo, hi = wilson_interval(float(wins[i]), int(games[i]))
            out.append({"agent": name, "games": int(games[i]), "wins": int(wins[i]),
                        "win_rate": wins[i] / max(games[i], 1), "ci95": [lo, hi],
                        "mean_points": points[i] / max(games[i], 1),
                        "rating": float(self.ratings[i]), "rating_se": float(self.rating_se[i])})
        return out

    def markdown(self) -> str:
        """The tables as Markdown: one row per table, then the ratings."""
        P = self.num_players
        lines = []
        if P == 2:
            lines += ["| agent | opponent | games | wins | win rate | 95% CI | mean points | opponent's mean points | truncated |",
                      "|---|---|---:|---:|---:|---|---:|---:|---:|"]
            for idx, r in self.tables:
                lo, hi = r.ci95[0]
                lines.append(f"| {r.names[0]} | {r.names[1]} | {r.games} | {r.wins[0]} | {r.win_rate[0]:.1%} | "
                             f"{lo:.1%} – {hi:.1%} | {r.mean_points[0]:.1f} | {r.mean_points[1]:.1f} | {r.truncated} |")
        else:
            lines += ["| table | agent | games | wins | win rate | 95% CI | mean points |", "|---|---|---:|---:|---:|---|---:|"]
            for t, (idx, r) in enumerate(self.tables):
                for i, name in enumerate(r.names):
                    lo, hi = r.ci95[i]
                    lines.append(f"| {t + 1} | {name} | {r.games} | {r.wins[i]} | {r.win_rate[i]:.1%} | "
                                 f"{lo:.1%} – {hi:.1%} | {r.mean_points[i]:.1f} |")
        anchor = f"{self.anchor} = {self.config.get('anchor_rating', 1000):g}" if self.anchor else "mean = 1000"
        lines += ["", f"Ratings (Bradley–Terry maximum likelihood, Elo scale, {anchor}):", "",
                  "| rank | agent | rating | ± 95% | games | win rate | 95% CI | mean points |",
                  "|---:|---|---:|---:|---:|---:|---|---:|"]
        rows = sorted(self.per_agent(), key=lambda d: -d["rating"])
        for k, d in enumerate(rows):
            lines.append(f"| {k + 1} | {d['agent']} | {d['rating']:.0f} | {1.96 * d['rating_se']:.0f} | {d['games']} | "
                         f"{d['win_rate']:.1%} | {d['ci95'][0]:.1%} – {d['ci95'][1]:.1%} | {d['mean_points']:.1f} |")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready data."""
        beat, met = self.pairwise()
        return {
            "config": self.config,
            "agents": self.names,
            "tables": [{"seats": [self.names[i] for i in idx], **r.to_dict()} for idx, r in self.tables],
            "per_agent": self.per_agent(),
            "pairwise_wins": beat.tolist(),
            "pairwise_games": met.tolist(),
            "rating_anchor": self.anchor,
        }


def tournament(agents: Sequence[Any], num_games: int, num_players: int = 2, rules: UnoRules | None = None,
               seed: int = 0, batch_size: int = 1024, anchor: str | None = "random",
               anchor_rating: float = 1000.0, names: Sequence[str] | None = None,
               progress: Any = None) -> TournamentResult:
    """Every table of ``num_players`` distinct entries of ``agents``, ``num_games`` games each.

    With 2 players that is every pairing. Table t is seeded from ``(seed, t)``. ``anchor`` names
    the agent whose rating is ``anchor_rating`` (ignored when no agent has that name).
    ``progress``, if given, is called with a finished table's ``TableResult``.
    """
    if not isinstance(num_players, (int, np.integer)) or not 2 <= num_players <= 10:
        raise ValueError(f"num_players must be an integer in 2..10, got {num_players!r}")
    if len(agents) < num_players:
        raise ValueError(
            f"{num_players} players need at least {num_players} agents (repeat a name to seat it twice), got {len(agents)}"
        )
    names = list(names) if names is not None else unique_names(agents)
    tables = []
    for t, idx in enumerate(itertools.combinations(range(len(agents)), num_players)):
        r = play_table([agents[i] for i in idx], num_games, rules=rules, seed=hash_seed(seed, t),
                       batch_size=batch_size, names=[names[i] for i in idx])
        tables.append((list(idx), r))
        if progress is not None:
            progress(r)
    anchor_idx = names.index(anchor) if anchor in names else None
    n = len(names)
    beat = np.zeros((n, n), np.int64)
    for idx, r in tables:
        beat[np.ix_(idx, idx)] += r.beat
    ratings, se = bradley_terry(beat, anchor=anchor_idx, anchor_rating=anchor_rating)
    config = {"num_games": int(num_games), "num_players": int(num_players), "seed": int(seed),
              "batch_size": int(batch_size), "anchor_rating": anchor_rating,
              "rules": (rules or UnoRules()).to_dict() if hasattr(rules or UnoRules(), "to_dict") else None}
    return TournamentResult(names, int(num_players), tables, ratings, se, names[anchor_idx] if anchor_idx is not None else None, config)


def hash_seed(seed: int, index: int) -> int:
    """A seed for table ``index`` derived from ``seed`` (independent streams per table)."""
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1, np.uint64)[0])
