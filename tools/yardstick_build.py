"""Build a yardstick suite (``arena/yardstick_<version>.json``): positions, the oracle's values, calibration.

    python -m tools.yardstick_build                     # positions and oracle, then calibration
    python -m tools.yardstick_build --stage games       # the games part's definition, then calibration
    python -m tools.yardstick_build --stage calibrate   # calibration only, on the stored positions

The stages: docs/benchmarks.md; the suite: docs/yardstick.md.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import tyro

from agents._tactics import uno_call_action
from agents.flatmc import FlatMCAgent
from agents.model_card import machine as card_machine
from agents.registry import SEARCH_BLUEPRINT, make_agent
from arena import derive_seed, play
from arena.yardstick import (
    Position,
    combine,
    events_digest,
    leave_one_out,
    load_suite,
    position_engine,
    positions_rating,
    rate,
    suite_path,
)
from uno_env import Engine, parse_rules
from uno_env.observation import PHASE_RESPOND_DRAW_FOUR, phase_of
from uno_env.policy import history_length_of

MATCHUPS = (
    ("heuristic", "pretrained"),
    ("pretrained", "pretrained"),
    ("greedy", "rlcard_rule"),
    ("random", "heuristic"),
    ("random", "greedy"),
)
ORACLE_ROLLOUTS = 8192
MIN_SPREAD = 0.01
# Ladder v2 rungs the games part plays. Not random: a seat that plays like it (a model whose
# replies fail) draws its way through games of hundreds of turns against it, past any budget.
ANCHORS = ("greedy", "heuristic")
CALIBRATION = ("random", "greedy", "rlcard_rule", "heuristic", "pretrained", "search")
# Ladder v2, 2 players (benchmarks/results/ladder.md): the rungs' stored ratings, and search's
# rating as a newcomer (it is no rung).
LADDER_V2_RATINGS = {
    "random": 1000.0,
    "greedy": 1615.3,
    "rlcard_rule": 1635.6,
    "heuristic": 1670.1,
    "pretrained": 1729.6,
    "search": 1756.0,
}


class OracleSearch(FlatMCAgent):
    """The registry's search at a fixed budget that keeps every move's estimate (``values``)."""

    def _search(self, source, i, seat, deal, moves, base, rng):  # type: ignore[no-untyped-def]
        per_move = max(int(self.rollouts or 0) // moves.size, 1)
        v = self._play_out(source, i, seat, deal, moves, per_move, rng)
        self.values = (moves.copy(), (v.mean(1) + 1.0) / 2.0)  # rewards ±1 -> win probability
        return int(moves[int(np.argmax(v.mean(1)))])


@dataclass
class Args:
    """Build the yardstick suite (positions, oracle values, calibration)."""

    version: str = "v1"
    positions: int = 800
    """positions kept"""
    deals: int = 10
    """duplicate deals per anchor (each played twice, seats swapped)"""
    seed: int = 49
    stage: Literal["all", "games", "calibrate"] = "all"
    """all; games: the games part's definition (anchors, cost) and the calibration; calibrate: that only"""


def candidates(rules: Any, games: int, seed: int) -> list[tuple[int, list[int]]]:
    """(rng_state, actions) of games among ``MATCHUPS``, one per game."""
    out = []
    per = math.ceil(games / len(MATCHUPS))
    for m, pair in enumerate(MATCHUPS):
        agents = [make_agent(s, rules, num_players=2) for s in pair]
        r = play(agents, per, rules, derive_seed(seed, m), record=True)
        assert r.records is not None
        out += [(int(rec["start"]["rng_state"]), list(rec["actions"])) for rec in r.records]
    order = np.random.default_rng(seed).permutation(len(out))
    return [out[k] for k in order]


def pick_decision(rules: Any, rng_state: int, actions: list[int], rng: np.random.Generator) -> int | None:
    """A random step with a real choice (2+ legal moves, no UNO call on offer, not a Wild Draw Four answer), or None."""
    engine = Engine(1, 2, rules, seed=0)
    engine.reset(rng_state=[rng_state])
    choices = []
    for t, a in enumerate(actions):
        m = engine.legal_mask[0]
        if m.sum() >= 2 and uno_call_action(m) < 0 and phase_of(engine.observation[0]) != PHASE_RESPOND_DRAW_FOUR:
            choices.append(t)
        engine.step(np.array([a], np.int64))
    return int(rng.choice(choices)) if choices else None


def build_positions(args: Args) -> tuple[list[Position], dict[str, Any]]:
    rules = parse_rules("classic")
    oracle = OracleSearch(rules, rollouts=ORACLE_ROLLOUTS, blueprint=SEARCH_BLUEPRINT, confidence=None)
    k = history_length_of(oracle)
    rng = np.random.default_rng(args.seed)
    kept: list[Position] = []
    seen = dropped = 0
    t0 = time.time()
    for rng_state, actions in candidates(rules, int(args.positions * 1.6), args.seed):
        if len(kept) == args.positions:
            break
        t = pick_decision(rules, rng_state, actions, rng)
        if t is None:
            continue
        engine = Engine(1, 2, rules, seed=0, record=True, history=k)
        engine.reset(rng_state=[rng_state])
        for a in actions[:t]:
            engine.step(np.array([a], np.int64))
        oracle.values = None
        oracle.act_in(engine, 0, np.random.default_rng([args.seed, seen]))
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
        if len(kept) % 50 == 0:
            print(
                f"  {len(kept)} positions ({dropped} dropped) in {time.time() - t0:.0f} s", file=sys.stderr, flush=True
            )
    if len(kept) < args.positions:
        raise SystemExit(f"only {len(kept)} positions from the candidate games: raise the candidates")
    return kept, {"oracle_seconds": round(time.time() - t0, 1), "evaluated": seen, "dropped_even": dropped}


def decisions_per_game(rules: Any, deals: int, seed: int) -> dict[str, float]:
    """Decisions per game of the rated seat against each anchor, the larger of a ``random`` and a
    ``heuristic`` seat's mean (a weak player's games run longer): the games' cost estimate."""
    out = {}
    for j, anchor in enumerate(ANCHORS):
        means = []
        for seat in ("random", "heuristic"):
            r = play([make_agent(seat, rules), make_agent(anchor, rules)], 2 * deals, rules, seed + j, duplicate=True)
            means.append(r.steps / r.games / 2)
        out[anchor] = round(max(means), 1)
    return out


def machine() -> dict[str, Any]:
    return {
        "machine": card_machine(),
        "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()],
    }


def write(path: str, data: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)


def calibrate(path: str) -> dict[str, Any]:
    """Rate the calibration agents and fit the curve, each point with its leave-one-out error."""
    suite = load_suite(path=path, verify=False)
    table = []
    for spec in CALIBRATION:
        t0, c0 = time.time(), time.process_time()
        agent = make_agent(spec, suite.rules, num_players=2)
        r = rate(agent, suite, name=spec)
        d = r.to_dict()
        d.pop("combined")
        d["positions"].pop("actions")
        d["ladder_v2"] = LADDER_V2_RATINGS[spec]
        d["seconds"], d["cpu_seconds"] = round(time.time() - t0, 1), round(time.process_time() - c0, 1)
        table.append(d)
        print(
            f"  {spec}: regret {d['positions']['regret'][0]:.4f}, games {d['games']['rating'][0]:.0f}, {d['seconds']} s",
            file=sys.stderr,
            flush=True,
        )
    loo = leave_one_out([(d["positions"]["regret"][0], d["ladder_v2"], 0.0) for d in table])
    points = [[d["positions"]["regret"][0], d["ladder_v2"], round(e, 1)] for d, e in zip(table, loo, strict=True)]
    for k, d in enumerate(table):
        # How the yardstick would rate the agent had the curve been drawn without it.
        rest = [p for j, p in enumerate(points) if j != k]
        d["positions_rating_without_it"] = positions_rating(rest, tuple(d["positions"]["regret"]))
        d["combined_without_it"] = combine([d["positions_rating_without_it"], tuple(d["games"]["rating"])])
    return {
        "points": points,
        "form": "rating linear in log(regret) between neighbouring agents (arena.yardstick.curve_rating)",
        "ladder_v2_ratings": LADDER_V2_RATINGS,
        "agents": table,
        "built": datetime.date.today().isoformat(),
        **machine(),
    }


def main(args: Args) -> None:
    path = suite_path(args.version)
    if args.stage == "all":
        t0 = time.time()
        positions, oracle_stats = build_positions(args)
        data = {
            "version": args.version,
            "definition": {
                "rules": "classic",
                "num_players": 2,
                "seed": args.seed,
                "oracle": f"search:{ORACLE_ROLLOUTS} (blueprint {SEARCH_BLUEPRINT}, no confidence rule)",
                "min_spread": MIN_SPREAD,
                "matchups": [list(m) for m in MATCHUPS],
                "ladder": "v2",
            },
            "built": datetime.date.today().isoformat(),
            "build": {**oracle_stats, "seconds": round(time.time() - t0, 1), **machine()},
            "positions": [p.to_json() for p in positions],
        }
        write(path, data)
        print(f"wrote {len(positions)} positions to {path}", file=sys.stderr)
    with open(path) as f:
        data = json.load(f)
    if args.stage in ("all", "games"):
        seed = derive_seed(args.seed, 7)
        data["definition"]["anchors"] = list(ANCHORS)
        data["definition"]["games"] = {
            "deals": args.deals,
            "seed": seed,
            "decisions_per_game": decisions_per_game(parse_rules("classic"), args.deals, seed),
        }
    data["calibration"] = {}
    write(path, data)
    data["calibration"] = calibrate(path)
    write(path, data)
    print(f"calibrated {path}", file=sys.stderr)


if __name__ == "__main__":
    main(tyro.cli(Args, description=__doc__))
