"""Tournaments: every table of agents, win rates with 95% intervals, points, Bradley–Terry ratings."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from uno_env import Agent, UnoRules
from uno_env.checks import check_int
from uno_env.rules import check_num_players

from .match import PlayResult, play, unique_names
from .ratings import Z95, bradley_terry, paired_interval, wilson_interval

__all__ = [
    "TournamentResult",
    "Chunk",
    "PlayChunks",
    "tournament",
    "chunk_plan",
    "play_chunk",
    "play_chunks_here",
    "derive_seed",
]


def derive_seed(seed: int, index: int) -> int:
    """A seed for part ``index`` of a job seeded with ``seed`` (independent streams per part)."""
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1, np.uint64)[0])


class Chunk(NamedTuple):
    """One unit of tournament work: ``games`` games of table ``table`` (agent indices ``seats``), seeded ``seed``."""

    table: int
    seats: tuple[int, ...]
    games: int
    seed: int
    duplicate: bool = False


PlayChunks = Callable[[Sequence[Chunk], Sequence[Agent], Sequence[str], UnoRules, int], Iterable[PlayResult]]


def chunk_plan(
    num_agents: int, num_players: int, games: int, chunk_games: int, seed: int, duplicate: bool = False
) -> list[Chunk]:
    """Every chunk of a tournament, table by table; chunk c of table t is seeded from ``(seed, t, c)`` alone."""
    if duplicate and (games % num_players or chunk_games % num_players):
        raise ValueError(
            f"duplicate deals are played once per seat rotation: games and chunk_games must be multiples of the "
            f"{num_players} players, got {games} and {chunk_games}"
        )
    plan = []
    for t, idx in enumerate(itertools.combinations(range(num_agents), num_players)):
        table_seed = derive_seed(seed, t)
        for c, start in enumerate(range(0, games, chunk_games)):
            plan.append(
                Chunk(
                    t,
                    idx,
                    min(chunk_games, games - start),
                    table_seed if c == 0 else derive_seed(table_seed, c),
                    duplicate,
                )
            )
    return plan


def play_chunk(
    chunk: Chunk, seated: Sequence[Agent], names: Sequence[str], rules: UnoRules, batch_size: int
) -> PlayResult:
    """One chunk played here by its ``seated`` agents (``names``, theirs); an agent with
    ``game_over(engine, row, seat, won, players)`` (``agents.llm.ChatAgent``) hears how each of
    its games ended, ``players`` the names by seat."""
    hooks = [(k, getattr(a, "game_over", None)) for k, a in enumerate(seated)]
    listeners = [(k, hook) for k, hook in hooks if callable(hook)]

    def tell(engine: Any, rows: np.ndarray, won: np.ndarray, seats: np.ndarray, games: np.ndarray) -> None:
        for j, r in enumerate(rows.tolist()):
            players = [""] * len(seated)
            for k, s in enumerate(seats[j].tolist()):
                players[s] = names[k]
            for k, game_over in listeners:
                game_over(engine, r, int(seats[j, k]), bool(won[j, k]), players)

    return play(
        list(seated),
        chunk.games,
        rules,
        chunk.seed,
        batch_size=batch_size,
        names=list(names),
        duplicate=chunk.duplicate,
        on_finish=tell if listeners else None,
    )


def play_chunks_here(
    chunks: Sequence[Chunk], agents: Sequence[Agent], names: Sequence[str], rules: UnoRules, batch_size: int
) -> Iterable[PlayResult]:
    """The chunks played one after the other in this process, each result as soon as it is done."""
    for c in chunks:
        yield play_chunk(c, [agents[i] for i in c.seats], [names[i] for i in c.seats], rules, batch_size)


def _merge(parts: Sequence[PlayResult]) -> PlayResult:
    """One ``PlayResult`` from the chunks of a table (counts and seconds summed)."""
    if len(parts) == 1:
        return parts[0]
    return PlayResult(
        names=parts[0].names,
        games=sum(p.games for p in parts),
        wins=_total([p.wins for p in parts]),
        points=_total([p.points for p in parts]),
        beat=_total([p.beat for p in parts]),
        truncated=sum(p.truncated for p in parts),
        steps=sum(p.steps for p in parts),
        seconds=sum(p.seconds for p in parts),
        seat_games=_total([p.seat_games for p in parts]),
        deal_wins=_stack([p.deal_wins for p in parts]),
        deal_points=_stack([p.deal_points for p in parts]),
    )


def _total(counts: Sequence[np.ndarray]) -> np.ndarray:
    """The chunks' counts added up, in chunk order."""
    return np.asarray(sum(counts))


def _stack(per_deal: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """The chunks' per-deal rows one after the other (None without duplicate deals)."""
    return None if any(x is None for x in per_deal) else np.concatenate(per_deal)  # type: ignore[arg-type]


@dataclass
class TournamentResult:
    """Every table of a tournament plus the pooled numbers per agent."""

    names: list[str]
    num_players: int
    tables: list[tuple[list[int], PlayResult]]  # (agent indices, result)
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
        per_deal: list[list[np.ndarray]] = [[] for _ in range(n)]
        for idx, r in self.tables:
            games[idx] += r.games
            wins[idx] += r.wins
            points[idx] += r.points
            if r.deal_wins is not None:
                for k, i in enumerate(idx):
                    per_deal[i].append(r.deal_wins[:, k] / len(idx))
        out = []
        for i, name in enumerate(self.names):
            paired = per_deal[i] and all(r.deal_wins is not None for _, r in self.tables)
            lo, hi = (
                paired_interval(np.concatenate(per_deal[i]))
                if paired
                else wilson_interval(float(wins[i]), int(games[i]))
            )
            out.append(
                {
                    "agent": name,
                    "games": int(games[i]),
                    "wins": int(wins[i]),
                    "win_rate": wins[i] / max(games[i], 1),
                    "ci95": [lo, hi],
                    "mean_points": points[i] / max(games[i], 1),
                    "rating": float(self.ratings[i]),
                    "rating_se": float(self.rating_se[i]),
                }
            )
        return out

    def markdown(self) -> str:
        """The tables as Markdown: one row per table, then the ratings."""
        lines = self._table_lines()
        anchor = f"{self.anchor} = {self.config.get('anchor_rating', 1000):g}" if self.anchor else "mean = 1000"
        lines += [
            "",
            f"Ratings (Bradley–Terry maximum likelihood, Elo scale, {anchor}):",
            "",
            "| rank | agent | rating | ± 95% | games | win rate | 95% CI | mean points |",
            "|---:|---|---:|---:|---:|---:|---|---:|",
        ]
        rows = sorted(self.per_agent(), key=lambda d: -d["rating"])
        for k, d in enumerate(rows):
            lines.append(
                f"| {k + 1} | {d['agent']} | {d['rating']:.0f} | {Z95 * d['rating_se']:.0f} | {d['games']} | "
                f"{d['win_rate']:.1%} | {d['ci95'][0]:.1%} – {d['ci95'][1]:.1%} | {d['mean_points']:.1f} |"
            )
        return "\n".join(lines)

    def _table_lines(self) -> list[str]:
        """One Markdown row per pairing (2 players) or per seat of each table."""
        if self.num_players == 2:
            lines = [
                "| agent | opponent | games | wins | win rate | 95% CI | mean points | opponent's mean points | truncated |",
                "|---|---|---:|---:|---:|---|---:|---:|---:|",
            ]
            for _idx, r in self.tables:
                lo, hi = r.ci95[0]
                lines.append(
                    f"| {r.names[0]} | {r.names[1]} | {r.games} | {r.wins[0]} | {r.win_rate[0]:.1%} | "
                    f"{lo:.1%} – {hi:.1%} | {r.mean_points[0]:.1f} | {r.mean_points[1]:.1f} | {r.truncated} |"
                )
            return lines
        lines = [
            "| table | agent | games | wins | win rate | 95% CI | mean points |",
            "|---|---|---:|---:|---:|---|---:|",
        ]
        for t, (_idx, r) in enumerate(self.tables):
            for i, name in enumerate(r.names):
                lo, hi = r.ci95[i]
                lines.append(
                    f"| {t + 1} | {name} | {r.games} | {r.wins[i]} | {r.win_rate[i]:.1%} | "
                    f"{lo:.1%} – {hi:.1%} | {r.mean_points[i]:.1f} |"
                )
        return lines

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


def tournament(
    agents: Sequence[Agent],
    num_games: int,
    num_players: int = 2,
    rules: UnoRules | None = None,
    seed: int = 0,
    batch_size: int = 1024,
    anchor: str | None = "random",
    anchor_rating: float = 1000.0,
    names: Sequence[str] | None = None,
    progress: Callable[[PlayResult], None] | None = None,
    chunk_games: int | None = None,
    play_chunks: PlayChunks | None = None,
    duplicate: bool = False,
) -> TournamentResult:
    """Every table of ``num_players`` distinct entries of ``agents``, ``num_games`` games each, and the ratings.

    ``progress`` is called with each table's ``PlayResult`` as it completes; ``play_chunks`` plays
    the chunks (default: here, in turn; ``arena.remote.ray_chunks``: as Ray tasks, same result).
    """
    check_num_players(num_players)
    if len(agents) < num_players:
        raise ValueError(
            f"{num_players} players need at least {num_players} agents (repeat a name to seat it "
            f"twice), got {len(agents)}"
        )
    for name, value in (("num_games", num_games), ("chunk_games", num_games if chunk_games is None else chunk_games)):
        check_int(name, value, 1)
    rules = UnoRules() if rules is None else rules
    names = list(names) if names is not None else unique_names(agents)
    chunk_games = int(num_games if chunk_games is None else chunk_games)
    plan = chunk_plan(len(agents), num_players, num_games, chunk_games, seed, duplicate)
    per_table = math.ceil(num_games / chunk_games)
    parts: dict[int, list[PlayResult]] = {}
    tables = []
    for chunk, part in zip(
        plan, (play_chunks or play_chunks_here)(plan, agents, names, rules, batch_size), strict=True
    ):
        parts.setdefault(chunk.table, []).append(part)
        if len(parts[chunk.table]) == per_table:
            tables.append((list(chunk.seats), _merge(parts.pop(chunk.table))))
            if progress is not None:
                progress(tables[-1][1])
    anchor_idx = names.index(anchor) if anchor in names else None
    beat = np.zeros((len(names), len(names)), np.int64)
    for idx, r in tables:
        beat[np.ix_(idx, idx)] += r.beat
    ratings, se = bradley_terry(beat, anchor=anchor_idx, anchor_rating=anchor_rating)
    config = {
        "num_games": int(num_games),
        "num_players": int(num_players),
        "seed": int(seed),
        "batch_size": int(batch_size),
        "chunk_games": chunk_games,
        "duplicate": bool(duplicate),
        "anchor_rating": anchor_rating,
        "rules": rules.to_dict(),
    }
    return TournamentResult(
        names, int(num_players), tables, ratings, se, names[anchor_idx] if anchor_idx is not None else None, config
    )
