"""The yardstick: a fixed, versioned rating of any agent in about 2,000 decisions (``uno-yardstick``).

Positions scored against a stored oracle and duplicate-deal games against rungs of ladder v2,
from ``arena/yardstick_<version>.json`` (built by ``tools/yardstick_build.py``).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import tyro

from agents.llm import ChatFailure, ChatSettings
from uno_env import Agent, Engine, UnoRules, parse_rules
from uno_env.compile_notice import announce_compiling
from uno_env.policy import agent_label, history_length_of
from uno_env.table import Table, ask_one, wanted_history
from uno_env.text import engine_prompt

from .evaluate import ChatOptions, transcript_line
from .match import PlayResult, play
from .ratings import Z95, paired_interval, paired_standard_errors

__all__ = [
    "VERSION",
    "SUITE_SHA256",
    "Position",
    "Suite",
    "Cost",
    "PositionScore",
    "YardstickResult",
    "suite_path",
    "load_suite",
    "position_engine",
    "position_rng",
    "ask_position",
    "ask_positions",
    "events_digest",
    "score_choice",
    "plan_cost",
    "curve_rating",
    "leave_one_out",
    "positions_rating",
    "combine",
    "rate",
    "MATCHUPS",
    "ORACLE_ROLLOUTS",
    "MIN_SPREAD",
    "candidates",
    "pick_decision",
    "draw_positions",
    "fresh_cost",
    "fresh_suite",
    "MAX_TRANSCRIPT_BYTES",
    "transcript_path",
    "write_transcript",
    "Args",
    "main",
]

VERSION = "v1"
"""the current suite version: ``uno-yardstick``'s default"""
SUITE_SHA256 = {"v1": "da83e49b00ab955b58b56a4c387a77b2624d98102d37765f2c205c87f86d748a"}
"""each stored version's file checksum: a version is never edited (a change is a new version)"""
ELO = 400.0 / math.log(10.0)
CHARS_PER_TOKEN = 4.0
# The smallest regret the calibration curve is read at: a perfect oracle copy has regret 0 and log(0).
REGRET_FLOOR = 1e-4


_STORED_TYPE = {"int": int, "str": str, "tuple[int, ...]": tuple, "tuple[float, ...]": tuple}


@dataclass(frozen=True)
class Position:
    """One decision of the suite: how to reach it and the oracle's estimate of every legal move."""

    rng_state: int  # the generator state the round was dealt from (a record's start["rng_state"])
    actions: tuple[int, ...]  # the actions of the round before the decision
    seat: int  # the seat to act
    digest: str  # events_digest of the round at the decision: the reconstruction is checked against it
    moves: tuple[int, ...]  # the legal actions
    values: tuple[float, ...]  # the oracle's estimated win probability of each move

    @property
    def best(self) -> float:
        """The oracle's best estimated win probability."""
        return max(self.values)

    def to_json(self) -> dict[str, Any]:
        """The stored form: the fields in order, ``rng_state`` as a string (beyond JSON's safe integers)."""
        return {
            k: str(v) if k == "rng_state" else list(v) if isinstance(v, tuple) else v for k, v in vars(self).items()
        }

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Position:
        """A position from its stored form (``to_json``)."""
        return cls(**{f.name: _STORED_TYPE[str(f.type)](stored[f.name]) for f in fields(cls)})


@dataclass(frozen=True)
class Suite:
    """A yardstick version (``arena/yardstick_<version>.json``): its definition, positions and calibration."""

    version: str
    definition: dict[str, Any]
    positions: tuple[Position, ...]
    calibration: dict[str, Any]
    build: dict[str, Any] = field(default_factory=dict, compare=False)
    """how the positions were drawn (oracle seconds, decisions evaluated): the pace --fresh is priced at"""

    @property
    def rules(self) -> UnoRules:
        """The suite's rules."""
        return parse_rules(self.definition["rules"])

    @property
    def anchors(self) -> list[str]:
        """The anchors of the games part (ladder v2 rungs)."""
        return list(self.definition["anchors"])


def suite_path(version: str = VERSION) -> str:
    """Where suite ``version`` is stored: ``arena/yardstick_<version>.json``."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), f"yardstick_{version}.json")


def load_suite(version: str = VERSION, path: str | None = None, verify: bool = True) -> Suite:
    """Suite ``version`` as stored; ValueError naming the versions there are when it is missing, or
    when the stored file is not the version's (``SUITE_SHA256``; ``verify=False``: a build in progress)."""
    path = path or suite_path(version)
    if not os.path.isfile(path):
        here = os.path.dirname(os.path.abspath(__file__))
        known = sorted(
            f[len("yardstick_") : -5] for f in os.listdir(here) if f.startswith("yardstick_") and f.endswith(".json")
        )
        raise ValueError(f"no yardstick suite {version!r} at {path}; stored versions: {', '.join(known) or 'none'}")
    with open(path) as f:
        text = f.read()
    expected = SUITE_SHA256.get(version) if verify and path == suite_path(version) else None
    if expected and hashlib.sha256(text.encode()).hexdigest() != expected:
        raise ValueError(
            f"{path} is not the stored yardstick {version}: the file was changed (a new suite needs a new version)"
        )
    data = json.loads(text)
    positions = tuple(Position.from_json(p) for p in data["positions"])
    return Suite(data["version"], data["definition"], positions, data.get("calibration", {}), data.get("build", {}))


def events_digest(events: Sequence[dict[str, Any]]) -> str:
    """A short hash of a round's recorded events (every card, hidden ones included)."""
    return hashlib.sha256(json.dumps(list(events), sort_keys=True).encode()).hexdigest()[:16]


def position_engine(position: Position, rules: UnoRules, history: int = 0) -> Engine:
    """A one-game engine at ``position`` (keeping ``history`` events); ValueError if the replay
    does not reach the stored round (the engine now deals or plays it differently)."""
    engine = Engine(1, 2, rules, seed=0, record=True, history=history)
    engine.reset(rng_state=[position.rng_state])
    why = "its events differ"
    try:
        for a in position.actions:
            engine.step(np.array([a], np.int64))
    except ValueError as exc:
        why = str(exc)
    else:
        if (
            events_digest(engine.record(0)["events"]) == position.digest
            and int(engine.current_player[0]) == position.seat
        ):
            return engine
    raise ValueError(
        f"a yardstick position no longer replays to the stored round ({why}): the engine deals or plays "
        "differently from when the suite was built, so this suite version cannot be used (build a new version)"
    )


def score_choice(position: Position, action: int) -> tuple[bool, float]:
    """(agreement, regret) of choosing ``action`` at ``position``: whether the oracle rates it best
    (ties count), and the oracle's best estimated win probability minus the action's."""
    if action not in position.moves:
        raise ValueError(f"action {action} is not one of the position's legal moves {list(position.moves)}")
    v = position.values[position.moves.index(action)]
    return v >= position.best, position.best - v


def _mean_interval(x: np.ndarray) -> tuple[float, float, float]:
    """(mean, low, high): the mean over independent draws with its normal 95% interval."""
    x = np.asarray(x, np.float64)
    mean = float(x.mean())
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else math.inf
    return mean, mean - half, mean + half


# --- drawing positions (the suite's build, and --fresh) ----------------------------------------

MATCHUPS = (
    ("heuristic", "pretrained"),
    ("pretrained", "pretrained"),
    ("greedy", "rlcard_rule"),
    ("random", "heuristic"),
    ("random", "greedy"),
)
"""the pairs of agents whose games the positions are drawn from, one position per game"""
ORACLE_ROLLOUTS = 8192
"""the oracle's play-outs per decision"""
MIN_SPREAD = 0.01
"""a position whose moves the oracle rates within this of each other is dropped (nothing to choose)"""


def _oracle(rules: UnoRules, rollouts: int) -> Any:
    """The registry's search at a fixed budget, keeping every move's estimate (``values``)."""
    from agents.flatmc import FlatMCAgent
    from agents.registry import SEARCH_BLUEPRINT

    class OracleSearch(FlatMCAgent):
        def _search(self, source, i, seat, deal, moves, base, rng):
            per_move = max(int(self.rollouts or 0) // moves.size, 1)
            v = self._play_out(source, i, seat, deal, moves, per_move, rng)
            self.values = (moves.copy(), (v.mean(1) + 1.0) / 2.0)  # rewards ±1 -> win probability
            return int(moves[int(np.argmax(v.mean(1)))])

    return OracleSearch(rules, rollouts=rollouts, blueprint=SEARCH_BLUEPRINT, confidence=None)


def candidates(rules: UnoRules, games: int, seed: int) -> list[tuple[int, list[int]]]:
    """(rng_state, actions) of games among ``MATCHUPS``, one per game, in a seeded order."""
    from agents.registry import make_agent

    from .tournament import derive_seed

    out = []
    per = math.ceil(games / len(MATCHUPS))
    for m, pair in enumerate(MATCHUPS):
        agents = [make_agent(s, rules, num_players=2) for s in pair]
        r = play(agents, per, rules, derive_seed(seed, m), record=True)
        assert r.records is not None
        out += [(int(rec["start"]["rng_state"]), list(rec["actions"])) for rec in r.records]
    order = np.random.default_rng(seed).permutation(len(out))
    return [out[k] for k in order]


def pick_decision(rules: UnoRules, rng_state: int, actions: list[int], rng: np.random.Generator) -> int | None:
    """A random step with a real choice (2+ legal moves, no UNO call on offer, not a Wild Draw Four answer), or None."""
    from agents._tactics import uno_call_action
    from uno_env.observation import PHASE_RESPOND_DRAW_FOUR, phase_of

    engine = Engine(1, 2, rules, seed=0)
    engine.reset(rng_state=[rng_state])
    choices = []
    for t, a in enumerate(actions):
        m = engine.legal_mask[0]
        if m.sum() >= 2 and uno_call_action(m) < 0 and phase_of(engine.observation[0]) != PHASE_RESPOND_DRAW_FOUR:
            choices.append(t)
        engine.step(np.array([a], np.int64))
    return int(rng.choice(choices)) if choices else None


def draw_positions(
    rules: UnoRules,
    count: int,
    seed: int,
    rollouts: int = ORACLE_ROLLOUTS,
    progress: Callable[[str], None] | None = None,
    rounds: int = 8,
) -> tuple[list[Position], dict[str, Any]]:
    """``count`` positions drawn from games among ``MATCHUPS`` seeded ``seed``, each with the oracle's
    value of every legal move (``rollouts`` play-outs a decision), and what drawing them took.

    More candidate games are played, up to ``rounds`` times, while too few positions are kept."""
    from .tournament import derive_seed

    oracle = _oracle(rules, rollouts)
    k = history_length_of(oracle)
    rng = np.random.default_rng(seed)
    kept: list[Position] = []
    seen = dropped = 0
    t0 = time.time()
    for attempt in range(rounds):
        # The first round's games are the suite's build (v1's positions come from it alone).
        games_seed = seed if attempt == 0 else derive_seed(seed, 1000 + attempt)
        for rng_state, actions in candidates(rules, max(int(count * 1.6), 2), games_seed):
            if len(kept) == count:
                break
            t = pick_decision(rules, rng_state, actions, rng)
            if t is None:
                continue
            engine = Engine(1, 2, rules, seed=0, record=True, history=k)
            engine.reset(rng_state=[rng_state])
            for a in actions[:t]:
                engine.step(np.array([a], np.int64))
            oracle.values = None
            oracle.act_in(engine, 0, np.random.default_rng([seed, seen]))
            seen += 1
            moves, values = oracle.values
            if values.max() - values.min() < MIN_SPREAD:
                dropped += 1
                continue
            p = Position(
                rng_state,
                tuple(actions[:t]),
                int(engine.current_player[0]),
                events_digest(engine.record(0)["events"]),
                tuple(int(a) for a in moves),
                tuple(round(float(v), 5) for v in values),
            )
            position_engine(p, rules)  # the stored form replays
            kept.append(p)
            if progress is not None and (len(kept) % 50 == 0 or len(kept) == count):
                progress(f"  {len(kept)} positions ({dropped} dropped) in {time.time() - t0:.0f} s")
        if len(kept) == count:
            break
    if len(kept) < count:
        raise ValueError(f"only {len(kept)} of {count} positions from the candidate games: ask for fewer positions")
    return kept, {"oracle_seconds": round(time.time() - t0, 1), "evaluated": seen, "dropped_even": dropped}


MAX_FRESH_POSITIONS = 2000
MAX_FRESH_ROLLOUTS = 65_536


def _check_fresh(suite: Suite, seed: Any, count: Any, rollouts: Any) -> None:
    for name, value, lo, hi in (
        ("--fresh", seed, 0, 2**63 - 1),
        ("--fresh-positions", count, 2, MAX_FRESH_POSITIONS),
        ("--fresh-rollouts", rollouts, 1, MAX_FRESH_ROLLOUTS),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in {lo}..{hi:,}, got {value!r}")
    if seed == int(suite.definition["seed"]):
        raise ValueError(
            f"--fresh {seed} is the seed the public suite {suite.version} was drawn from: its positions would be "
            "the stored ones; pick another seed (and keep it private until the rating is written)"
        )


def fresh_cost(suite: Suite, seed: int, count: int, rollouts: int = ORACLE_ROLLOUTS) -> str:
    """What drawing ``count`` fresh positions costs the oracle, priced at the stored suite's build pace."""
    _check_fresh(suite, seed, count, rollouts)
    build = suite.build
    evaluated = float(build.get("evaluated") or len(suite.positions))
    per_position = evaluated / max(len(suite.positions), 1)  # positions dropped as even are evaluated too
    decisions = count * per_position
    text = (
        f"oracle cost: {count:,} fresh positions from seed {seed}, about {decisions:,.0f} oracle decisions of "
        f"{rollouts:,} play-outs ({decisions * rollouts:,.0f} play-outs), on this machine, before the agent is "
        "asked anything"
    )
    if build.get("oracle_seconds"):
        pace = float(build["oracle_seconds"]) / (evaluated * ORACLE_ROLLOUTS)  # seconds a play-out
        text += (
            f"; about {decisions * rollouts * pace:,.0f} s at the pace {suite.version} was built at "
            f"({build['oracle_seconds']:g} s for {evaluated:,.0f} decisions of {ORACLE_ROLLOUTS:,}; "
            f"{build.get('machine', 'its machine')})"
        )
    return text


def fresh_suite(
    suite: Suite,
    seed: int,
    count: int,
    rollouts: int = ORACLE_ROLLOUTS,
    progress: Callable[[str], None] | None = None,
) -> Suite:
    """``suite`` with ``count`` positions drawn now from ``seed`` in place of the stored ones, and the
    games part's deals drawn from it too: what it rates was never published. The calibration curve
    is the stored one (the positions are drawn as the suite's were; fewer ``rollouts`` make a
    noisier oracle)."""
    from .tournament import derive_seed

    _check_fresh(suite, seed, count, rollouts)
    positions, stats = draw_positions(suite.rules, count, seed, rollouts, progress)
    games = {**suite.definition["games"], "seed": derive_seed(seed, 7)}
    fresh = {"seed": seed, "positions": count, "rollouts": rollouts}
    definition = {**suite.definition, "seed": seed, "games": games, "fresh": fresh}
    return Suite(suite.version, definition, tuple(positions), suite.calibration, stats)


# --- cost -------------------------------------------------------------------------------------


@dataclass
class Cost:
    """What a rating will ask of the agent: decisions (requests) and an estimate of prompt tokens."""

    positions: int
    games: int
    game_decisions: float  # estimated from the suite's decisions per game
    prompt_tokens_per_decision: float

    @property
    def requests(self) -> float:
        """Decisions asked in all (the games' part estimated)."""
        return self.positions + self.game_decisions

    @property
    def prompt_tokens(self) -> float:
        """Estimated prompt tokens in all, one request per decision."""
        return self.requests * self.prompt_tokens_per_decision

    def text(self) -> str:
        """The cost in words."""
        return (
            f"cost: {self.positions:,} position decisions + about {self.game_decisions:,.0f} decisions in "
            f"{self.games} games = about {self.requests:,.0f} requests; about {self.prompt_tokens:,.0f} prompt tokens "
            f"({self.prompt_tokens_per_decision:,.0f} a request, {CHARS_PER_TOKEN:g} characters a token), plus replies "
            "and any retries"
        )


def _history_for(agent: Agent) -> int:
    """The events the engine keeps for ``agent`` (as ``arena.play`` does)."""
    return max(wanted_history([agent]), history_length_of(agent))


def plan_cost(suite: Suite, agent: Agent | None = None, sample: int = 100) -> Cost:
    """The cost of rating ``agent`` on ``suite``; the prompt length measured on ``sample`` positions."""
    limit = getattr(agent, "history", None)
    limit = int(limit) if isinstance(limit, int) and limit > 0 else None
    step = max(1, len(suite.positions) // max(sample, 1))
    chars = [len(engine_prompt(position_engine(p, suite.rules, 0), 0, limit=limit)) for p in suite.positions[::step]]
    games = suite.definition["games"]
    return Cost(
        positions=len(suite.positions),
        games=games["deals"] * 2 * len(suite.anchors),
        game_decisions=float(sum(games["decisions_per_game"][a] for a in suite.anchors) * games["deals"] * 2),
        prompt_tokens_per_decision=float(np.mean(chars)) / CHARS_PER_TOKEN,
    )


# --- rating -------------------------------------------------------------------------------------


@dataclass
class PositionScore:
    """The positions part: per position the action chosen, with agreement and regret."""

    actions: list[int]
    agree: np.ndarray  # bool [positions]
    regret: np.ndarray  # float [positions]
    seconds: float

    @property
    def agreement(self) -> tuple[float, float, float]:
        """(share, low, high): agreement with the oracle's best move, 95% interval."""
        return _mean_interval(self.agree.astype(np.float64))

    @property
    def mean_regret(self) -> tuple[float, float, float]:
        """(mean, low, high): regret in the oracle's estimated win probability, 95% interval."""
        return _mean_interval(self.regret)


def position_rng(suite: Suite, k: int) -> np.random.Generator:
    """The generator the rated agent draws from at position ``k`` (a function of the suite alone)."""
    return np.random.default_rng(np.random.SeedSequence([int(suite.definition["seed"]), 0x5057, k]))


def ask_position(agent: Agent, engine: Engine, rng: np.random.Generator) -> int:
    """``agent``'s checked action at the position in game 0 of ``engine``, through its seat's view
    (``ask_one`` with engine access: a search copies the game and re-deals what it cannot see)."""
    return ask_one(agent, engine, 0, rng, engine_access=True)


ROWS_AT_ONCE = 64
"""positions asked together of an agent that answers many games in one call (``act_in_rows``)"""


def ask_positions(agent: Agent, engines: Sequence[Engine], rngs: Sequence[np.random.Generator]) -> list[int]:
    """``ask_position`` for several positions (game 0 of each engine) in one call of the agent's
    ``act_in_rows`` (a chat agent's requests then run in parallel), through a ``Table`` of their
    copies; one at a time for an agent without it."""
    if not callable(getattr(agent, "act_in_rows", None)) or len(engines) < 2:
        return [ask_position(agent, e, g) for e, g in zip(engines, rngs, strict=True)]
    first = engines[0]
    batch = Engine(len(engines), first.num_players, first.rules, seed=0, history=first.history_length)
    for j, e in enumerate(engines):
        batch.copy_game(e, 0, j)
    table = Table(batch, [agent], rngs[0], engine_access=True)
    table.seat_agent[:] = 0  # the agent sits wherever a position's player to act is
    table.seat_rngs = [[g] * first.num_players for g in rngs]
    actions = np.full(len(engines), -1, np.int64)
    table.ask(np.arange(len(engines)), actions)
    return actions.tolist()


def score_positions(agent: Agent, suite: Suite, progress: Callable[[int, int], None] | None = None) -> PositionScore:
    """Ask ``agent`` every position of ``suite`` through its seat's view."""
    start = time.perf_counter()
    history = _history_for(agent)
    actions: list[int] = []
    n = len(suite.positions)
    for lo in range(0, n, ROWS_AT_ONCE):
        ks = range(lo, min(n, lo + ROWS_AT_ONCE))
        engines = [position_engine(suite.positions[k], suite.rules, history) for k in ks]
        actions += ask_positions(agent, engines, [position_rng(suite, k) for k in ks])
        if progress is not None:
            progress(len(actions), n)
    scores = [score_choice(p, a) for p, a in zip(suite.positions, actions, strict=True)]
    agree = np.array([ok for ok, _ in scores], bool)
    regret = np.array([r for _, r in scores], np.float64)
    return PositionScore(actions, agree, regret, time.perf_counter() - start)


@dataclass
class AnchorGames:
    """The games part against one anchor."""

    anchor: str
    anchor_rating: float
    result: PlayResult

    @property
    def win_rate(self) -> tuple[float, float, float]:
        """(rate, low, high): the agent's win rate, paired 95% interval over deals."""
        assert self.result.deal_wins is not None
        per_deal = self.result.deal_wins[:, 0] / self.result.rotations
        return (float(self.result.win_rate[0]), *paired_interval(per_deal))


def play_games(agent: Agent, suite: Suite, progress: Callable[[PlayResult], None] | None = None) -> list[AnchorGames]:
    """The games part: the suite's duplicate deals against each anchor (seats rotated)."""
    from agents.registry import make_agent  # the anchors are registry agents; built only when games are played

    from .ladder import LADDERS, load_reference

    games = suite.definition["games"]
    spec = LADDERS[suite.definition["ladder"]]
    ref = load_reference(spec)["players"]["2"]
    rung_rating = dict(zip(spec.rungs_for(2), ref["ratings"], strict=True))
    out = []
    for j, anchor in enumerate(suite.anchors):
        opponent = make_agent(anchor, suite.rules, num_players=2)
        r = play(
            [agent, opponent],
            2 * games["deals"],
            suite.rules,
            int(games["seed"]) + j,
            duplicate=True,
            names=[agent_label(agent) + " (rated)", anchor],
        )
        if progress is not None:
            progress(r)
        out.append(AnchorGames(anchor, float(rung_rating[anchor]), r))
    return out


def games_rating(tables: Sequence[AnchorGames]) -> tuple[float, float]:
    """(rating, standard error) on ladder v2's scale from the games, the anchors' ratings held fixed."""
    from .ladder import rate_against

    wins = np.array([t.result.beat[0, 1] for t in tables], np.int64)
    losses = np.array([t.result.beat[1, 0] for t in tables], np.int64)
    ratings = np.array([t.anchor_rating for t in tables])
    rating, binomial_se = rate_against(wins, losses, ratings)
    per_deal = []
    for j, t in enumerate(tables):
        w = np.asarray(t.result.deal_wins, np.int64)
        beat = np.zeros((w.shape[0], 2, 2), np.int64)
        beat[:, 0, 1], beat[:, 1, 0] = w[:, 0], w[:, 1]
        per_deal.append(([0, j + 1], beat))
    se = float(paired_standard_errors(np.concatenate([[rating], ratings]), per_deal, free=[0])[0])
    # A few deals estimate the paired error poorly, and not at all for an agent that replays an
    # anchor's games (every deal split alike: zero); the binomial error bounds it from below.
    return rating, max(se, binomial_se)


def curve_rating(points: Sequence[Sequence[float]], regret: float) -> tuple[float, float]:
    """(rating, calibration error) the calibration curve gives a mean regret, linear in log(regret).

    ``points``: ``(regret, ladder v2 rating, leave-one-out error)`` of the calibration agents."""
    pts = sorted((max(float(r), REGRET_FLOOR), float(y), abs(float(e))) for r, y, e, *_ in points)
    if len(pts) < 2:
        raise ValueError("a calibration curve needs at least two agents")
    x = math.log(max(regret, REGRET_FLOOR))
    xs = [math.log(r) for r, _, _ in pts]
    k = 1
    while k < len(pts) - 1 and x > xs[k]:
        k += 1
    (x0, (_, y0, e0)), (x1, (_, y1, e1)) = (xs[k - 1], pts[k - 1]), (xs[k], pts[k])
    return y0 + (x - x0) * (y1 - y0) / (x1 - x0), max(e0, e1)


def leave_one_out(points: Sequence[Sequence[float]]) -> list[float]:
    """Each calibration agent's error: the curve drawn without it, at its regret, minus its rating."""
    out = []
    for k, (r, y, *_) in enumerate(points):
        rest = [(pr, py, 0.0) for j, (pr, py, *_) in enumerate(points) if j != k]
        out.append(curve_rating(rest, r)[0] - y)
    return out


def positions_rating(
    points: Sequence[Sequence[float]], regret: tuple[float, float, float]
) -> tuple[float, float, float]:
    """(rating, low, high) from a mean regret and its interval: the regret's interval mapped through
    the curve (which falls with regret), widened by the curve's calibration error there."""
    m, lo, hi = regret
    rating, error = curve_rating(points, m)
    se = math.hypot((curve_rating(points, max(lo, 0.0))[0] - curve_rating(points, hi)[0]) / (2 * Z95), error)
    return rating, rating - Z95 * se, rating + Z95 * se


def combine(parts: Sequence[tuple[float, float, float] | None]) -> tuple[float, float, float] | None:
    """(rating, low, high): the parts' ratings weighed by their inverse variances (from their intervals)."""
    given = [p for p in parts if p is not None]
    if not given:
        return None
    w = np.array([1.0 / max((hi - lo) / (2 * Z95), 1e-9) ** 2 for _, lo, hi in given])
    r = float((w * [p[0] for p in given]).sum() / w.sum())
    half = Z95 / math.sqrt(float(w.sum()))
    return r, r - half, r + half


@dataclass
class YardstickResult:
    """A yardstick rating: both parts, the combined rating, what it cost."""

    version: str
    name: str
    positions: PositionScore | None
    games: list[AnchorGames] = field(default_factory=list)
    calibration: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] | None = None

    def _positions_rating(self) -> tuple[float, float, float] | None:
        if self.positions is None or not self.calibration:
            return None
        return positions_rating(self.calibration["points"], self.positions.mean_regret)

    def _games_rating(self) -> tuple[float, float, float] | None:
        if not self.games:
            return None
        r, se = games_rating(self.games)
        return r, r - Z95 * se, r + Z95 * se

    def parts_consistent(self) -> bool | None:
        """Whether the parts' 95% intervals overlap (None: fewer than two parts rated)."""
        p, g = self._positions_rating(), self._games_rating()
        if p is None or g is None:
            return None
        return not (p[2] < g[1] or g[2] < p[1])

    def warning(self) -> str | None:
        """What is wrong with the rating when its parts disagree, or None."""
        if self.parts_consistent() is not False:
            return None
        p, g = self._positions_rating(), self._games_rating()
        assert p is not None and g is not None
        return (
            f"the parts disagree: positions rate {p[0]:.0f} ({p[1]:.0f} – {p[2]:.0f}) and games {g[0]:.0f} "
            f"({g[1]:.0f} – {g[2]:.0f}), 95% intervals that do not meet, so no combined rating is given. "
            "An agent that knows the public positions (arena/yardstick_v1.json) rates high on them alone: "
            "rate it with --fresh SEED, on positions drawn at run time"
        )

    def combined(self) -> tuple[float, float, float] | None:
        """(rating, low, high) on ladder v2's scale: the parts' ratings weighed by inverse variance;
        None when the parts' intervals are disjoint (``parts_consistent``)."""
        if self.parts_consistent() is False:
            return None
        return combine([self._positions_rating(), self._games_rating()])

    def rows(self) -> list[tuple[str, str, str]]:
        """(part, score, 95% interval) rows of the table."""
        out = []
        if self.positions is not None:
            a, lo, hi = self.positions.agreement
            out.append(("positions: agreement with the oracle", f"{100 * a:.1f}%", f"{100 * lo:.1f} – {100 * hi:.1f}%"))
            m, lo, hi = self.positions.mean_regret
            out.append(("positions: regret (win probability)", f"{m:.4f}", f"{lo:.4f} – {hi:.4f}"))
            pr = self._positions_rating()
            if pr is not None:
                out.append(("positions: rating (calibration curve)", f"{pr[0]:.0f}", f"{pr[1]:.0f} – {pr[2]:.0f}"))
        for t in self.games:
            w, lo, hi = t.win_rate
            out.append(
                (
                    f"games: win rate vs {t.anchor} ({t.anchor_rating:.0f}), {t.result.games} games",
                    f"{100 * w:.1f}%",
                    f"{100 * lo:.1f} – {100 * hi:.1f}%",
                )
            )
        gr = self._games_rating()
        if gr is not None:
            out.append(("games: rating (anchors fixed)", f"{gr[0]:.0f}", f"{gr[1]:.0f} – {gr[2]:.0f}"))
        c = self.combined()
        if c is not None:
            out.append(("**combined rating (ladder v2 scale)**", f"**{c[0]:.0f}**", f"{c[1]:.0f} – {c[2]:.0f}"))
        elif self.parts_consistent() is False:
            out.append(("**combined rating: not given**", "**parts disagree**", "the parts' intervals are disjoint"))
        return out

    def markdown(self) -> str:
        """The result as a markdown table (and the warning, when the parts disagree)."""
        lines = [f"yardstick {self.version}: {self.name}", "", "| part | score | 95% interval |", "|---|---:|---|"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in self.rows()]
        warning = self.warning()
        if warning is not None:
            lines += ["", f"warning: {warning}"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready result."""
        d: dict[str, Any] = {"version": self.version, "agent": self.name}
        if self.positions is not None:
            d["positions"] = {
                "count": len(self.positions.actions),
                "agreement": list(self.positions.agreement),
                "regret": list(self.positions.mean_regret),
                "rating": self._positions_rating(),
                "actions": self.positions.actions,
                "seconds": round(self.positions.seconds, 2),
            }
        if self.games:
            gr = self._games_rating()
            d["games"] = {
                "anchors": [
                    {
                        "anchor": t.anchor,
                        "anchor_rating": t.anchor_rating,
                        "games": t.result.games,
                        "win_rate": list(t.win_rate),
                        "steps": t.result.steps,
                        "seconds": round(t.result.seconds, 2),
                    }
                    for t in self.games
                ],
                "rating": gr,
            }
        d["combined"] = self.combined()
        d["parts_consistent"] = self.parts_consistent()
        if self.warning() is not None:
            d["warning"] = self.warning()
        if self.stats is not None:
            d["agent_stats"] = self.stats
        return d


def rate(
    agent: Agent,
    suite: Suite,
    *,
    parts: Sequence[str] = ("positions", "games"),
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> YardstickResult:
    """Rate ``agent`` on ``suite``: the ``parts`` asked for, in that order."""
    bad = [p for p in parts if p not in PARTS]
    if bad or not parts:
        raise ValueError(f"parts must be some of {', '.join(PARTS)}, got {list(parts)}")
    say = progress or (lambda _: None)
    positions = None
    if "positions" in parts:
        positions = score_positions(
            agent, suite, lambda k, n: say(f"  positions: {k}/{n}") if k % 128 == 0 or k == n else None
        )
    games = []
    if "games" in parts:
        games = play_games(
            agent, suite, lambda r: say(f"  games: {' vs '.join(r.names)}: {r.games} in {r.seconds:.1f} s")
        )
    check = getattr(agent, "check", None)  # a chat agent's end-of-run check: ChatFailure, no rating
    if callable(check):
        check()
    stats_of = getattr(agent, "stats", None)  # a chat agent's requests, tokens and fallbacks
    stats = stats_of() if callable(stats_of) else None
    return YardstickResult(suite.version, name or agent_label(agent), positions, games, suite.calibration, stats)


PARTS = ("positions", "games")


# --- command ----------------------------------------------------------------------------------


@dataclass
class Args:
    """Rate an agent in about 2,000 decisions on a fixed, versioned suite.

    uno-yardstick --agent heuristic
    uno-yardstick --agent chat:my-model --chat.base-url http://127.0.0.1:8080/v1 --cost-only
    """

    agent: str
    """the agent to rate: any agents.registry spec (chat:MODEL for a language model)"""
    version: str = VERSION
    """the suite version (arena/yardstick_<version>.json)"""
    parts: tuple[str, ...] = PARTS
    """the parts to run: positions, games or both"""
    out: str = "yardstick.json"
    """where the JSON result is written"""
    cost_only: bool = False
    """print the cost and stop"""
    fresh: int | None = None
    """draw and score this many --fresh-positions from this seed at run time, in place of the public ones
    (and the games' deals from it too): a rating that cannot come from knowing the stored suite"""
    fresh_positions: int = 200
    """with --fresh: the positions drawn"""
    fresh_rollouts: int = ORACLE_ROLLOUTS
    """with --fresh: the oracle's play-outs per decision (fewer: a quicker, noisier oracle)"""
    chat: ChatOptions = field(default_factory=ChatSettings)
    """a chat:MODEL agent's settings (agents.llm.ChatSettings, as evaluate.py's --chat.* options)"""


MAX_TRANSCRIPT_BYTES = 64 << 20
"""the largest transcript ``uno-yardstick`` writes; the games past it are counted in a last line"""


def transcript_path(out: str) -> str:
    """The transcript beside the JSON result ``out``: ``yardstick.json`` -> ``yardstick.transcript.jsonl``."""
    root, ext = os.path.splitext(out)
    return f"{root if ext == '.json' else out}.transcript.jsonl"


def write_transcript(agent: Agent, path: str, run_id: str, limit: int = MAX_TRANSCRIPT_BYTES) -> str | None:
    """A chat agent's games (its requests, replies and errors) as ``evaluate.py``'s transcript lines,
    at most ``limit`` bytes; None (nothing written) for an agent that keeps no transcript."""
    transcripts = getattr(agent, "transcripts", None)
    if not isinstance(transcripts, list):
        return None
    size = 0
    with open(path, "w") as f:
        for k, game in enumerate(transcripts):
            line = json.dumps(transcript_line(run_id, agent, game)) + "\n"
            if size + len(line.encode()) > limit:
                cut = {
                    "run_id": run_id,
                    "truncated": True,
                    "games_left_out": len(transcripts) - k,
                    "limit_bytes": limit,
                }
                f.write(json.dumps(cut) + "\n")
                break
            f.write(line)
            size += len(line.encode())
    return path


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(args: Args) -> YardstickResult | None:
    """Print the cost (the oracle's first with ``--fresh``), rate the agent, print the table and
    write the JSON result with the chat agent's transcript beside it."""
    from agents.registry import make_agent

    bad = [p for p in args.parts if p not in PARTS]
    if bad or not args.parts:
        raise ValueError(f"--parts must be some of {', '.join(PARTS)}, got {' '.join(args.parts) or 'nothing'}")
    suite = load_suite(args.version)
    agent = make_agent(args.agent, suite.rules, num_players=2, chat=args.chat)
    label = suite.version if args.fresh is None else f"{suite.version} --fresh {args.fresh}"
    if args.fresh is not None:
        text = fresh_cost(suite, args.fresh, args.fresh_positions, args.fresh_rollouts)
        print(f"yardstick {label} for {args.agent}: {text}", flush=True)
    cost = plan_cost(suite, agent)
    if args.fresh is not None:
        cost.positions = args.fresh_positions
    if "games" not in args.parts:
        cost.game_decisions, cost.games = 0.0, 0
    if "positions" not in args.parts:
        cost.positions = 0
    print(f"yardstick {label} for {args.agent}: {cost.text()}", flush=True)
    if args.cost_only:
        return None
    t0 = time.time()
    if args.fresh is not None:
        suite = fresh_suite(suite, args.fresh, args.fresh_positions, args.fresh_rollouts, _say)
    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)
    transcript = transcript_path(args.out)
    try:
        result = rate(agent, suite, parts=args.parts, name=args.agent, progress=_say)
    finally:  # also when the run stops: the replies and errors that stopped it can be read
        written = write_transcript(agent, transcript, run_id)
        if written is not None:
            _say(f"wrote {written}")
    result.version = label
    print(result.markdown())
    data = {
        **result.to_dict(),
        "cost": {"planned_requests": cost.requests, "planned_prompt_tokens": cost.prompt_tokens},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.time() - t0, 1),
        "run_id": run_id,
        "transcript": written,
    }
    if args.fresh is not None:
        data["fresh"] = {**suite.definition["fresh"], **suite.build}
    with open(args.out, "w") as f:
        json.dump(data, f, indent=1)
    print(f"wrote {args.out}")
    if result.warning() is not None:
        _say(f"warning: {result.warning()}")
    return result


def cli(argv: list[str] | None = None) -> None:
    """The ``uno-yardstick`` command; a bad spec or option stops it with the reason."""
    announce_compiling("uno-yardstick")
    args = tyro.cli(Args, args=argv, prog="uno-yardstick", description=Args.__doc__)
    try:
        main(args)
    except (ValueError, ChatFailure) as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    cli()
