"""Steps per second of the PettingZoo AEC loop over ``uno_v0`` (a script that prints a table).

    python -m benchmarks.env_loop --steps 100000 --num-players 2 4 --wrapped

Rows: docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable

import numpy as np
import tyro

import uno_env
from benchmarks._timing import interleave, loadavg, print_profile, summarize


def wrapped_raw_env(num_players: int):
    """``raw_env`` under the wrappers PettingZoo classic envs use (for comparison only)."""
    from pettingzoo.utils import wrappers

    e = uno_env.raw_env(num_players=num_players)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class AECBench:
    """The AEC loop as a bench (``chunk()`` plays ``steps_per_chunk`` AEC steps, game to game).

    ``decisions`` counts the steps that chose an action; ``chunk`` returns all steps (the
    ``None`` steps of finished agents too) unless ``count_decisions`` (the suite compares
    decisions with RLCard's ``env.step`` calls, which has no ``None`` steps)."""

    def __init__(
        self,
        env,
        seed: int,
        steps_per_chunk: int = 1000,
        count_decisions: bool = False,
        label: str = "",
        players: int = 2,
    ) -> None:
        self.env, self.steps_per_chunk, self.count_decisions = env, steps_per_chunk, count_decisions
        self.impl, self.players, self.batch = label, players, 1
        self.rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        self._iter = iter(env.agent_iter())
        self.decisions = self.games = 0

    def chunk(self) -> int:
        env, rng = self.env, self.rng
        steps = decisions = 0
        while steps < self.steps_per_chunk:
            if next(self._iter, None) is None:  # game over: every agent had its last step
                self.games += 1
                env.reset()
                self._iter = iter(env.agent_iter())
                continue
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[int(rng.random() * legal.size)])
                decisions += 1
            env.step(action)
            steps += 1
        self.decisions += decisions
        return decisions if self.count_decisions else steps


class RLCardEnvBench:
    """RLCard's env loop: ``rlcard.make('uno')``, a random legal action from ``state['legal_actions']``,
    ``env.step``, ``env.reset`` when ``env.is_over()`` (2 players: RLCard's UNO env has no other count)."""

    def __init__(self, seed: int, steps_per_chunk: int = 1000) -> None:
        import rlcard

        self.impl, self.players, self.batch = "rlcard env", 2, 1
        self.env = rlcard.make("uno", config={"seed": seed})
        self.state, _ = self.env.reset()
        self.rng = np.random.default_rng(seed)
        self.steps_per_chunk = steps_per_chunk
        self.decisions = self.games = 0

    def chunk(self) -> int:
        env, rng, state = self.env, self.rng, self.state
        for _ in range(self.steps_per_chunk):
            legal = list(state["legal_actions"])
            state, _player = env.step(legal[int(rng.random() * len(legal))])
            if env.is_over():
                self.games += 1
                state, _player = env.reset()
        self.state = state
        self.decisions += self.steps_per_chunk
        return self.steps_per_chunk


@dataclasses.dataclass
class Args:
    steps: int = 100_000
    """AEC steps per timed run"""
    runs: int = 5
    """timed runs per row (median reported)"""
    num_players: tuple[int, ...] = (2, 4)
    """player counts"""
    wrapped: bool = False
    """also time raw_env under the three wrappers"""
    profile: bool = False
    """cProfile one run of each env and print the top entries"""


def main() -> None:
    """Time every row and print the table."""
    args = tyro.cli(Args, description=__doc__)
    if args.steps < 1 or args.runs < 1 or not args.num_players:
        raise SystemExit("--steps and --runs must be positive and --num-players must name a player count")

    envs: list[tuple[str, Callable[[int], object]]] = [
        ("raw_env", lambda n: uno_env.raw_env(num_players=n)),
        ("env()", lambda n: uno_env.env(num_players=n)),
    ]
    if args.wrapped:
        envs.append(("wrapped raw_env", wrapped_raw_env))

    rows = [(name, n, make(n)) for n in args.num_players for name, make in envs]
    benches = [AECBench(env, seed=12345, steps_per_chunk=args.steps) for _, _, env in rows]
    for bench in benches:
        bench.chunk()  # warm-up: numba cache load, branch caches
    results = [summarize(ms) for ms in interleave(benches, args.runs, 0.0)]
    print(
        f"uno_env {uno_env.__version__}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"{args.runs} runs x {args.steps} steps, interleaved, median reported; load average {loadavg()}"
    )
    print()
    # CPU-time rates are shown too: on a shared machine they move less than wall-clock ones.
    print("| env | players | steps/s (wall, median) | µs/step | steps/s (CPU time, median) | runs (wall, k steps/s) |")
    print("|---|---|---|---|---|---|")
    for (name, n, _), r in zip(rows, results, strict=True):
        runs_text = " ".join(f"{x / 1e3:.0f}" for x in r["runs_steps_per_s"])
        wall = r["steps_per_s"]
        print(f"| {name} | {n} | {wall:,.0f} | {1e6 / wall:.2f} | {r['cpu_steps_per_s']:,.0f} | {runs_text} |")

    if args.profile:
        for (name, n, _), bench in zip(rows, benches, strict=True):
            if n == args.num_players[0]:
                print_profile(bench.chunk, f"{name}, {n} players, {args.steps} steps")


if __name__ == "__main__":
    main()
