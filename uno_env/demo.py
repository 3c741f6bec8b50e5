"""Demo: random legal play over a batch, one whole game as a readable log, and steps per second."""

from __future__ import annotations

import argparse
import time

import numpy as np

from uno_env import Engine, UnoRules, describe_event, sample_legal


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--num-players", type=int, default=4)
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--preset", default="classic")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rules = UnoRules.preset(args.preset)
    print(f"== One game, {args.num_players} players, preset {args.preset!r}, random legal actions ==")
    for line in play_logged_game(args.num_players, rules, args.seed):
        print("  " + line)
    rate, rounds = measure(args.num_envs, args.num_players, rules, args.seconds, args.seed)
    print(f"\n== Engine: {args.num_envs} games x {args.num_players} players, random legal actions ==")
    print(f"{rate:,.0f} steps/s ({rounds} rounds finished in {args.seconds:.0f} s)")


if __name__ == "__main__":
    main()
