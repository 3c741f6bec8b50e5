"""Build a yardstick suite (``arena/yardstick_<version>.json``): positions, the oracle's values, calibration.

    python -m tools.yardstick_build                     # positions and oracle, then calibration
    python -m tools.yardstick_build --stage games       # the games part's definition, then calibration
    python -m tools.yardstick_build --stage calibrate   # calibration only, on the stored positions

The stages: docs/benchmarks.md; the suite: docs/yardstick.md.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Literal

import tyro

from agents.model_card import machine as card_machine
from agents.registry import SEARCH_BLUEPRINT, make_agent
from arena import derive_seed, play
from arena.ladder import LADDER_V2, check_rung_weights, load_reference
from arena.yardstick import (
    MATCHUPS,
    MIN_SPREAD,
    ORACLE_ROLLOUTS,
    Position,
    combine,
    draw_positions,
    leave_one_out,
    load_suite,
    positions_rating,
    rate,
    suite_path,
)
from uno_env import parse_rules

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


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def build_positions(args: Args) -> tuple[list[Position], dict[str, Any]]:
    """The suite's positions and oracle values (``arena.yardstick.draw_positions``, which --fresh runs too)."""
    try:
        return draw_positions(parse_rules("classic"), args.positions, args.seed, ORACLE_ROLLOUTS, _say, rounds=1)
    except ValueError as exc:
        raise SystemExit(f"{exc} (raise the candidates)") from None


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
    # LADDER_V2_RATINGS["pretrained"] is the rating of the weights v2's games were played with; later
    # weights have no rating on this scale, so a calibration with them is refused here.
    check_rung_weights(LADDER_V2, 2, load_reference(LADDER_V2)["players"]["2"])
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
