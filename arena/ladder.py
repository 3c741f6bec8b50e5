"""The reference ladder: one agent rated against fixed, versioned reference agents (``evaluate.py --ladder``).

The rungs' games among themselves and their ratings are constants of a version, stored in
``arena/ladder_<version>.json``: a newcomer is rated against them and never moves a rung.
"""

from __future__ import annotations

import datetime
import itertools
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agents.registry import make_agent
from uno_env import Agent, UnoRules, parse_rules
from uno_env.policy import agent_label

from .match import PlayResult
from .ratings import Z95, bradley_terry, paired_interval, paired_standard_errors, wilson_interval
from .tournament import Chunk, PlayChunks, derive_seed, play_chunks_here

__all__ = [
    "LadderSpec",
    "LADDER_V2",
    "LADDER_V3",
    "LADDER",
    "LADDERS",
    "LadderResult",
    "build_reference",
    "check_rung_weights",
    "load_reference",
    "reference_path",
    "rung_weights",
    "write_reference",
    "rate_on_ladder",
    "rate_against",
]

ELO = 400.0 / math.log(10.0)  # Elo points per natural-log unit of odds


@dataclass(frozen=True)
class LadderSpec:
    """A ladder version: everything its ratings are a function of."""

    version: str
    rungs: tuple[str, ...]  # agents.registry specs at every table size; the first is the anchor
    rules: str
    games: tuple[tuple[int, int], ...]  # (num_players, games per table)
    seed: int
    batch_size: int
    anchor_rating: float = 1000.0
    duplicate: bool = False
    """duplicate deals (``arena.match.DuplicateDeals``), intervals from the per-deal results"""
    player_rungs: tuple[tuple[int, tuple[str, ...]], ...] = ()
    """rungs at one table size only, after ``rungs`` (a shipped model trained for that size)"""
    rung_games: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()
    """(rung, (num_players, games)): fewer games per table at the tables a costly rung sits at"""
    reference_scale: int = 1
    """the rungs' own tables play this many times the games of a newcomer's table"""

    @property
    def uno_rules(self) -> UnoRules:
        """``rules`` read into a ``UnoRules`` (the definition stores the rules as written)."""
        return parse_rules(self.rules)

    def __post_init__(self) -> None:
        if self.reference_scale < 1:
            raise ValueError(f"reference_scale must be >= 1, got {self.reference_scale}")
        defined = dict(self.games)
        for p, _ in self.player_rungs:
            if p not in defined:
                raise ValueError(f"player_rungs names {p} players, for which the ladder defines no games")
        if self.duplicate:
            if self.uno_rules.teams:
                raise ValueError("a ladder on duplicate deals reads each deal's winner: its rules cannot have teams")
            counts = [*self.games, *(pg for _, caps in self.rung_games for pg in caps)]
            bad = [(p, g) for p, g in counts if g % p]
            if bad:
                raise ValueError(
                    f"on duplicate deals every deal is played once per seat rotation: games per table must be "
                    f"multiples of the players, got (players, games) {bad}"
                )

    def _defined(self, num_players: int) -> int:
        table = dict(self.games)
        if num_players not in table:
            raise ValueError(
                f"ladder {self.version} is defined for {' and '.join(map(str, sorted(table)))} players, "
                f"got --num-players {num_players}"
            )
        return table[num_players]

    def rungs_for(self, num_players: int) -> tuple[str, ...]:
        """The rungs with ``num_players`` players: ``rungs``, then that size's ``player_rungs``."""
        self._defined(num_players)
        return (*self.rungs, *dict(self.player_rungs).get(num_players, ()))

    def games_per_table(self, num_players: int, seats: Sequence[str] = (), reference: bool = False) -> int:
        """Games per table with ``num_players`` players (at a table of the rungs ``seats``, fewer where
        ``rung_games`` says so; ``reference``: a table of the rungs' own games); ValueError naming the
        supported counts."""
        games = self._defined(num_players)
        for rung, caps in self.rung_games:
            if rung in seats and num_players in dict(caps):
                games = min(games, dict(caps)[num_players])
        return games * (self.reference_scale if reference else 1)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready definition (what the stored file must match)."""
        d = asdict(self)
        d["rungs"] = list(self.rungs)
        d["games"] = {str(p): g for p, g in self.games}
        d["player_rungs"] = {str(p): list(r) for p, r in self.player_rungs}
        d["rung_games"] = {r: {str(p): g for p, g in caps} for r, caps in self.rung_games}
        return d


# The games are sized to rate a newcomer that does not search within minutes; the search rung
# costs most of a rating, hence its tables' fewer games.
LADDER_V2 = LadderSpec(
    version="v2",
    rungs=("random", "greedy", "rlcard_rule", "heuristic", "flatmc:64@uniform"),
    rules="classic",
    games=((2, 1000), (4, 400)),
    seed=26,
    batch_size=1024,
    duplicate=True,
    player_rungs=((2, ("pretrained",)), (4, ("pretrained-4p",))),
    rung_games=(("flatmc:64@uniform", ((2, 400), (4, 100))),),
    reference_scale=4,
)
# v2's rungs held the shipped models, so shipping new weights left its stored games to players that
# no longer exist (rate_on_ladder refuses them). v3's rungs are agents whose play no release changes:
# the shipped models are newcomers on it, rated again whenever they change. Five rungs make half
# v2's four-player tables, hence four times v2's games at each.
LADDER_V3 = LadderSpec(
    version="v3",
    rungs=("random", "greedy", "rlcard_rule", "heuristic", "flatmc:64@uniform"),
    rules="classic",
    games=((2, 1000), (4, 1600)),
    seed=27,
    batch_size=1024,
    duplicate=True,
    rung_games=(("flatmc:64@uniform", ((2, 400), (4, 400))),),
    reference_scale=4,
)
LADDERS = {spec.version: spec for spec in (LADDER_V2, LADDER_V3)}
LADDER = LADDER_V3
"""the current version: ``evaluate.py --ladder``'s default"""


def reference_path(spec: LadderSpec = LADDER) -> str:
    """Where the reference results of ``spec`` are stored: ``arena/ladder_<version>.json``."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), f"ladder_{spec.version}.json")


def rung_weights(spec: LadderSpec, num_players: int) -> dict[str, str]:
    """The SHA-256 of each rung's shipped model file at ``num_players`` players, from its card (rungs
    that load no weights are absent): what the stored games were played with."""
    from agents.pretrained import BELIEF_POLICIES, PRETRAINED, load_card

    shipped = PRETRAINED + BELIEF_POLICIES
    return {rung: load_card(rung)["model_sha256"] for rung in spec.rungs_for(num_players) if rung in shipped}


def check_rung_weights(spec: LadderSpec, num_players: int, reference: dict[str, Any]) -> None:
    """ValueError when a rung's installed weights are not those its stored games were played with."""
    now = rung_weights(spec, num_players)
    for rung, played in reference.get("rung_weights", {}).items():
        if now.get(rung) != played:
            raise ValueError(
                f"ladder {spec.version}'s {num_players}-player games were played by other weights of the rung "
                f"{rung} (sha256 {played[:12]}, installed {str(now.get(rung))[:12]}): its ratings no longer hold. "
                f"Rate on ladder {LADDER.version}, whose rungs no release changes"
            )


def _rung_agents(spec: LadderSpec, num_players: int) -> list[Agent]:
    rules = spec.uno_rules
    return [make_agent(s, rules, num_players=num_players) for s in spec.rungs_for(num_players)]


def _encode_deals(deal_wins: np.ndarray) -> list[str]:
    """Per seat, its wins in each deal as one digit per deal (a deal has at most 9 rotations)."""
    return ["".join(map(str, column)) for column in np.asarray(deal_wins).T.tolist()]


def _deal_beats(deal_wins: np.ndarray) -> np.ndarray:
    """``beat[d, a, b]``: games of deal d that seat a won and seat b did not. A game of the ladder's
    rules has at most one winner (no teams: ``LadderSpec`` checks), so that is a's wins in the deal."""
    w = np.asarray(deal_wins, np.int64)
    beat = np.repeat(w[:, :, None], w.shape[1], axis=2)
    beat[:, np.arange(w.shape[1]), np.arange(w.shape[1])] = 0
    return beat


def _play(
    plan: Sequence[Chunk],
    agents: Sequence[Agent],
    names: Sequence[str],
    spec: LadderSpec,
    play_chunks: PlayChunks | None,
    progress: Callable[[PlayResult], None] | None,
) -> list[PlayResult]:
    """Each chunk of ``plan`` (one per table) played; results in plan order."""
    out = []
    for part in (play_chunks or play_chunks_here)(plan, agents, names, spec.uno_rules, spec.batch_size):
        out.append(part)
        if progress is not None:
            progress(out[-1])
    return out


def _table_dict(seats: Sequence[str], r: PlayResult) -> dict[str, Any]:
    d = {
        "seats": list(seats),
        "games": r.games,
        "wins": r.wins.tolist(),
        "beat": r.beat.tolist(),
        "truncated": r.truncated,
        "steps": r.steps,
    }
    if r.deal_wins is not None:
        d["deal_wins"] = _encode_deals(r.deal_wins)
    return d


def build_reference(
    spec: LadderSpec,
    num_players: int,
    play_chunks: PlayChunks | None = None,
    progress: Callable[[PlayResult], None] | None = None,
) -> dict[str, Any]:
    """The rungs' games among themselves with ``num_players`` players and their ratings (JSON-ready)."""
    names = list(spec.rungs_for(num_players))
    seed = derive_seed(spec.seed, num_players)
    combos = list(itertools.combinations(range(len(names)), num_players))
    plan = [
        Chunk(
            t,
            c,
            spec.games_per_table(num_players, [names[i] for i in c], reference=True),
            derive_seed(seed, t),
            spec.duplicate,
        )
        for t, c in enumerate(combos)
    ]
    tables = _play(plan, _rung_agents(spec, num_players), names, spec, play_chunks, progress)
    beat = np.zeros((len(names), len(names)), np.int64)
    for c, r in zip(combos, tables, strict=True):
        beat[np.ix_(c, c)] += r.beat
    ratings, se = bradley_terry(beat, anchor=0, anchor_rating=spec.anchor_rating)
    if spec.duplicate:
        per_deal = [(c, _deal_beats(_deal_wins(r))) for c, r in zip(combos, tables, strict=True)]
        se = paired_standard_errors(ratings, per_deal, free=range(1, len(names)))
    return {
        "tables": [_table_dict([names[i] for i in c], r) for c, r in zip(combos, tables, strict=True)],
        "ratings": ratings.tolist(),
        "rating_se": se.tolist(),
        "rung_weights": rung_weights(spec, num_players),
    }


def load_reference(spec: LadderSpec = LADDER, path: str | None = None) -> dict[str, Any]:
    """The stored reference results of ``spec``; ValueError if the file is missing or built for another definition."""
    path = path or reference_path(spec)
    if not os.path.isfile(path):
        raise ValueError(
            f"no reference results for ladder {spec.version} at {path}: build them with 'python -m tools.ladder'"
        )
    with open(path) as f:
        data = json.load(f)
    if data.get("definition") != spec.to_dict():
        raise ValueError(
            f"{path} was built for another ladder definition ({data.get('definition')}); the code "
            f"defines {spec.to_dict()}: rebuild it or name a new version"
        )
    return data


def rate_against(wins: np.ndarray, losses: np.ndarray, ratings: np.ndarray, prior: float = 0.5) -> tuple[float, float]:
    """(rating, standard error) of one agent that beat rung j ``wins[j]`` times and lost ``losses[j]`` times.

    Maximum likelihood of Bradley–Terry with the rungs' ``ratings`` fixed (Elo scale), plus
    ``prior`` wins each way against every rung met (as ``arena.ratings.bradley_terry``)."""
    met = (wins + losses) > 0
    if not met.any():
        raise ValueError("the newcomer never won or lost against a rung: no rating")
    w = np.asarray(wins, np.float64)[met] + prior
    n = np.asarray(wins + losses, np.float64)[met] + 2 * prior
    r_fixed = np.asarray(ratings, np.float64)[met] / ELO

    def score(x: float) -> float:
        return float((w - n / (1.0 + np.exp(r_fixed - x))).sum())

    # score() falls from +sum(w) to -sum(n - w): bisection always converges, to ~1e-9 Elo.
    lo, hi = r_fixed.min() - 50.0, r_fixed.max() + 50.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if score(mid) > 0 else (lo, mid)
    x = 0.5 * (lo + hi)
    q = 1.0 / (1.0 + np.exp(r_fixed - x))
    return x * ELO, ELO / math.sqrt(float((n * q * (1.0 - q)).sum()))


def _shared(
    tables: Sequence[tuple[Sequence[str], int, Sequence[int]]], names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """``(games[i, j], wins[i, j])``: games i played at a table with j, and how many of them i won."""
    idx = {n: k for k, n in enumerate(names)}
    games = np.zeros((len(names), len(names)), np.int64)
    wins = np.zeros_like(games)
    for seats, n, won in tables:
        for a, b in itertools.permutations(range(len(seats)), 2):
            games[idx[seats[a]], idx[seats[b]]] += n
            wins[idx[seats[a]], idx[seats[b]]] += won[a]
    return games, wins


@dataclass
class LadderResult:
    """A newcomer's rating on a ladder, with the rungs' stored ratings and its games against them."""

    spec: LadderSpec
    num_players: int
    name: str
    rating: float
    rating_se: float
    rung_ratings: np.ndarray
    rung_se: np.ndarray
    tables: list[tuple[list[str], PlayResult]]  # (seat names, result), the newcomer first
    reference_tables: list[dict[str, Any]] = field(repr=False)

    @property
    def rungs(self) -> tuple[str, ...]:
        """The rungs at this table size."""
        return self.spec.rungs_for(self.num_players)

    @property
    def ci95(self) -> tuple[float, float]:
        """95% interval of the newcomer's rating."""
        return (self.rating - Z95 * self.rating_se, self.rating + Z95 * self.rating_se)

    def per_rung(self) -> list[dict[str, Any]]:
        """The newcomer's games, wins and win rate at the tables with each rung; its 95% interval is
        Wilson's, or paired over the deals on duplicate deals (``arena.ratings.paired_interval``)."""
        names = [self.name, *self.rungs]
        games, wins = _shared([(s, r.games, r.wins.tolist()) for s, r in self.tables], names)
        out = []
        for j, rung in enumerate(self.rungs, start=1):
            g, w = int(games[0, j]), int(wins[0, j])
            if self.spec.duplicate:
                deals = [
                    _deal_wins(r)[:, 0] / self.num_players for s, r in self.tables if rung in s
                ]  # the newcomer's score per deal at the tables with this rung
                ci = paired_interval(np.concatenate(deals))
            else:
                ci = wilson_interval(float(w), g)
            out.append({"rung": rung, "games": g, "wins": w, "win_rate": w / max(g, 1), "ci95": list(ci)})
        return out

    def markdown(self) -> str:
        """The ladder table (every agent, rating, 95% CI, win rate vs each rung) and the newcomer's games."""
        rungs = list(self.rungs)
        games, wins = _shared([(t["seats"], t["games"], t["wins"]) for t in self.reference_tables], rungs)
        rows = [
            (
                r,
                float(self.rung_ratings[k]),
                float(self.rung_se[k]),
                [wins[k, j] / games[k, j] if j != k else None for j in range(len(rungs))],
            )
            for k, r in enumerate(rungs)
        ]
        rows.append((self.name + " ◀", self.rating, self.rating_se, [d["win_rate"] for d in self.per_rung()]))
        what = "win rate vs" if self.num_players == 2 else "win rate at tables with"
        games_text = f"{self.spec.games_per_table(self.num_players):,} games per table"
        for rung, caps in self.spec.rung_games:
            if rung in rungs and self.num_players in dict(caps):
                games_text += f" ({self.spec.games_per_table(self.num_players, [rung]):,} at those with {rung})"
        dealt = "duplicate deals, 95% intervals paired over deals" if self.spec.duplicate else "seats rotated"
        lines = [
            f"Ladder {self.spec.version}, {self.num_players} players, rules {self.spec.rules}: "
            f"{games_text}, {dealt}; "
            f"Bradley–Terry on the Elo scale, {rungs[0]} = {self.spec.anchor_rating:g}; "
            f"rungs fixed (stored), ◀ = rated now",
            "",
            "| rank | agent | rating | 95% CI | " + " | ".join(f"{what} {r}" for r in rungs) + " |",
            "|---:|---|---:|---|" + "---:|" * len(rungs),
        ]
        for k, (name, rating, se, rates) in enumerate(sorted(rows, key=lambda row: -row[1])):
            cells = " | ".join("—" if x is None else f"{x:.1%}" for x in rates)
            lines.append(
                f"| {k + 1} | {name} | {rating:.0f} | {rating - Z95 * se:.0f} – {rating + Z95 * se:.0f} | {cells} |"
            )
        lines += [
            "",
            f"{self.name} at the tables with each rung:",
            "",
            "| rung | games | wins | win rate | 95% CI |",
            "|---|---:|---:|---:|---|",
        ]
        for d in self.per_rung():
            lines.append(
                f"| {d['rung']} | {d['games']} | {d['wins']} | {d['win_rate']:.1%} | "
                f"{d['ci95'][0]:.1%} – {d['ci95'][1]:.1%} |"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready result; no timings, so the file is the same on every run for the same agent."""
        return {
            "ladder": self.spec.to_dict(),
            "num_players": self.num_players,
            "agent": self.name,
            "rating": self.rating,
            "rating_se": self.rating_se,
            "ci95": list(self.ci95),
            "per_rung": self.per_rung(),
            "rungs": [
                {"agent": r, "rating": float(self.rung_ratings[k]), "rating_se": float(self.rung_se[k])}
                for k, r in enumerate(self.rungs)
            ],
            "tables": [_table_dict(s, r) for s, r in self.tables],
        }


def _deal_wins(r: PlayResult) -> np.ndarray:
    if r.deal_wins is None:
        raise ValueError(f"the table {r.names} was not played on duplicate deals")
    return r.deal_wins


def rate_on_ladder(
    agent: Agent,
    num_players: int = 2,
    spec: LadderSpec = LADDER,
    name: str | None = None,
    play_chunks: PlayChunks | None = None,
    progress: Callable[[PlayResult], None] | None = None,
    reference: dict[str, Any] | None = None,
    allow_other_table: bool = False,
) -> LadderResult:
    """Play ``agent`` against the rungs of ``spec`` and rate it; build it for ``spec.rules``.

    The newcomer plays one table with every ``num_players - 1`` distinct rungs. An agent that knows
    the table it was trained for (``check_table``: a saved model with a card) is refused a ladder
    of other rules or players before any game, unless ``allow_other_table``."""
    check_table = getattr(agent, "check_table", None)
    if check_table is not None and not allow_other_table:
        check_table(spec.uno_rules, num_players)
    if getattr(agent, "peek", False) is True:
        raise ValueError(
            f"{agent_label(agent)} reads the hidden hands (peek): it measures the perfect-information ceiling "
            "and is not rated on the ladder"
        )
    ref = (reference or load_reference(spec))["players"][str(num_players)]
    check_rung_weights(spec, num_players, ref)
    rungs = list(spec.rungs_for(num_players))
    name = name or agent_label(agent)
    if name in rungs:  # the same agent as a rung is a newcomer all the same; its row must not be confused
        name += " (newcomer)"
    names = [name, *rungs]
    seed = derive_seed(spec.seed, 1000 + num_players)
    combos = [(0, *c) for c in itertools.combinations(range(1, len(names)), num_players - 1)]
    plan = [
        Chunk(t, c, spec.games_per_table(num_players, [names[i] for i in c]), derive_seed(seed, t), spec.duplicate)
        for t, c in enumerate(combos)
    ]
    tables = _play(plan, [agent, *_rung_agents(spec, num_players)], names, spec, play_chunks, progress)
    wins = np.zeros(len(rungs), np.int64)
    losses = np.zeros(len(rungs), np.int64)
    for c, r in zip(combos, tables, strict=True):
        for k, j in enumerate(c[1:], start=1):
            wins[j - 1] += r.beat[0, k]
            losses[j - 1] += r.beat[k, 0]
    rung_ratings = np.asarray(ref["ratings"], np.float64)
    rating, se = rate_against(wins, losses, rung_ratings)
    if spec.duplicate:
        per_deal = [(c, _deal_beats(_deal_wins(r))) for c, r in zip(combos, tables, strict=True)]
        se = float(paired_standard_errors(np.concatenate([[rating], rung_ratings]), per_deal, free=[0])[0])
    return LadderResult(
        spec,
        int(num_players),
        name,
        rating,
        se,
        rung_ratings,
        np.asarray(ref["rating_se"]),
        [([names[i] for i in c], r) for c, r in zip(combos, tables, strict=True)],
        ref["tables"],
    )


def write_reference(
    spec: LadderSpec,
    players: dict[str, Any],
    path: str,
    build_seconds: float = 0.0,
    build: dict[str, Any] | None = None,
) -> None:
    """Store ``build_reference`` results (``{"2": ..., "4": ...}``) with the definition they belong to
    (and, when given, how the build went: ``build``, its time, CPU time, machine and load)."""
    data = {
        "definition": spec.to_dict(),
        "built": datetime.date.today().isoformat(),
        "build_seconds": round(build_seconds, 1),
        **({"build": build} if build else {}),
        "players": players,
    }
    # Written atomically: a half-written reference file would silently change every rating.
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
