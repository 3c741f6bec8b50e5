"""Demo: random legal play over a batch, one whole game as a readable log, and steps per second."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated

import numpy as np
import tyro

from uno_env import Engine, UnoRules, describe_event, parse_rules, sample_legal
from uno_env.compile_notice import announce_compiling
from uno_env.rules import PRESETS_HELP


def play_logged_game(num_players: int, rules: UnoRules, seed: int) -> list[str]:
    """One game with random legal actions, as lines of log."""
    engine = Engine(1, num_players, rules, seed=seed, record=True)
    rng = np.random.default_rng(seed)
    while not (engine.terminated[0] or engine.truncated[0]):
        engine.step(sample_legal(engine.legal_mask, rng))
    state = engine.game_state(0)
    lines = [describe_event(e) for e in engine.record(0)["events"]]
    lines.append(f"final scores: {state['scores']} after {state['turn']} actions")
    return lines


def measure(num_envs: int, num_players: int, rules: UnoRules, seconds: float, seed: int) -> tuple[float, int]:
    """Steps per second of random legal play over a batch with auto-reset, and rounds finished."""
    engine = Engine(num_envs, num_players, rules, seed=seed, autoreset=True)
    rng = np.random.default_rng(seed)
    engine.step(sample_legal(engine.legal_mask, rng))  # compile/warm before timing
    steps = rounds = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            result = engine.step(sample_legal(engine.legal_mask, rng))
            rounds += int(result.terminated.sum() + result.truncated.sum())
        steps += 10 * num_envs
    return steps / (time.perf_counter() - start), rounds


@dataclass
class Args:
    """Options of ``uno-demo``."""

    num_players: int = 4
    """players per game (2-10)"""
    num_envs: int = 1024
    """games stepped together in the speed measurement"""
    seconds: float = 3.0
    """length of the speed measurement"""
    rules: Annotated[str, tyro.conf.arg(help=PRESETS_HELP)] = "classic"
    seed: int = 0
    """seed of the games and of the random moves"""


def main(argv: list[str] | None = None) -> None:
    """Print one logged game, then the engine's speed over a batch."""
    args = tyro.cli(Args, args=argv, description=__doc__)
    announce_compiling("uno-demo")
    try:
        _run(args)
    except ValueError as exc:  # a bad option: one line on stderr, not a traceback
        raise SystemExit(f"error: {exc}") from None


def _run(args: Args) -> None:
    rules = parse_rules(args.rules)
    print(f"== One game, {args.num_players} players, rules {args.rules!r}, random legal actions ==")
    for line in play_logged_game(args.num_players, rules, args.seed):
        print("  " + line)
    rate, rounds = measure(args.num_envs, args.num_players, rules, args.seconds, args.seed)
    print(f"\n== Engine: {args.num_envs} games x {args.num_players} players, random legal actions ==")
    print(f"{rate:,.0f} steps/s ({rounds} rounds finished in {args.seconds:.0f} s)")


if __name__ == "__main__":
    main()
