#!/usr/bin/env python
"""What a seat's history costs and how long it must be: rows per round by agent, cost per step."""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents import make_agent
from agents.model_card import machine
from benchmarks._timing import add_ratio, fmt_rate, interleave, loadavg, summarize
from uno_env import Engine, UnoRules, sample_legal
from uno_env.engine import layout as L
from uno_env.engine.history import HISTORY_COUNTS_SIZE, HISTORY_SIZE, HISTORY_TOKEN_SIZE

KS = (32, 64, 128, 256)
AGENTS = ("random", "greedy", "rlcard_rule", "heuristic")


def rows_per_round(agent_name: str, players: int, rounds: int, seed: int) -> np.ndarray:
    """History rows of each of ``rounds`` rounds played to the end by ``agent_name`` at every seat."""
    e = Engine(rounds, players, UnoRules(max_turns=None), seed=seed, history=1)
    agent = make_agent(agent_name, num_players=players) if agent_name != "random" else None
    rng = np.random.default_rng(seed)
    done_at = np.zeros(rounds, np.int64)
    meta = e.arrays["history_meta"]
    for _ in range(100_000):
        live = ~(e.terminated | e.truncated)
        if not live.any():
            break
        actions = np.full(rounds, -1, np.int64)
        idx = np.flatnonzero(live)
        if agent is None:
            actions[idx] = sample_legal(e.legal_mask[idx], rng)
        else:
            actions[idx] = agent.act(e.observation[idx], e.legal_mask[idx], rng)
        e.step(actions)
        done_at[idx] = meta[idx, L.HM_COUNT]
    return done_at


class StepBench:
    """``Engine.step`` on random legal actions; ``read`` after every step, from the acting seat
    into reused arrays as an env does: None (nothing), ``"tokens"`` (``Engine.history_tokens``)
    or ``"rows"`` (``Engine.history``, the float rows and counts)."""

    def __init__(self, num_envs: int, history: int, read: str | None, seed: int = 0) -> None:
        self.engine = Engine(num_envs, 2, UnoRules(), seed=seed, history=history, autoreset=True)
        self.rng = np.random.default_rng(seed)
        self.read = read
        K = max(history, 1)
        self.out = (
            np.empty((num_envs, K, HISTORY_SIZE), np.float32),
            np.empty((num_envs, 10, HISTORY_COUNTS_SIZE), np.float32),
        )
        self.tokens = np.empty((num_envs, K, HISTORY_TOKEN_SIZE), np.int8)
        self.seats = np.zeros(num_envs, np.int64)
        self.steps_per_chunk = max(1, 4096 // num_envs)

    def chunk(self) -> int:
        e = self.engine
        for _ in range(self.steps_per_chunk):
            e.step(sample_legal(e.legal_mask, self.rng))
            if self.read == "tokens":
                self.seats[:] = e.current_player
                e.history_tokens(self.seats, out=self.tokens)
            elif self.read == "rows":
                self.seats[:] = e.current_player
                e.history(self.seats, out=self.out)
        return self.steps_per_chunk * e.num_envs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=1000, help="rounds per row of the first table (0: no first table)")
    p.add_argument("--runs", type=int, default=5, help="interleaved timing runs per row (medians reported)")
    p.add_argument("--seconds", type=float, default=1.0, help="seconds per timed run")
    p.add_argument("--history", type=int, default=128, help="K of the timed history")
    p.add_argument("--batches", type=int, nargs="+", default=[1, 256, 4096])
    args = p.parse_args(argv)
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# A seat's history: length and cost\n\n{start}; {machine()}, load at start {loadavg()}\n")
    if args.rounds > 0:
        print(f"## History rows per round (classic, {args.rounds} rounds per row, seed 0)\n")
        print("| agents | players | median | p90 | p99 | longest | " + " | ".join(f"K = {k} holds" for k in KS) + " |")
        print("|---|---:|---:|---:|---:|---:|" + "---:|" * len(KS))
        for players in (2, 4):
            for name in AGENTS:
                n = rows_per_round(name, players, args.rounds, seed=0)
                q = np.percentile(n, [50, 90, 99])
                held = " | ".join(f"{(n <= k).mean():.1%}" for k in KS)
                print(f"| {name} | {players} | {q[0]:.0f} | {q[1]:.0f} | {q[2]:.0f} | {n.max()} | {held} |")
    print(f"\n## Cost per step (2 players, random legal actions, K = {args.history})\n")
    print(f"{args.runs} interleaved runs of {args.seconds:g} s per row; steps/s are game steps (B per call)\n")
    print(
        "| B | plain step | + history | ratio | + tokens read every step | ratio | + rows read every step | ratio "
        "| CPU ratios |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for B in args.batches:
        benches = [
            StepBench(B, 0, None),
            StepBench(B, args.history, None),
            StepBench(B, args.history, "tokens"),
            StepBench(B, args.history, "rows"),
        ]
        for b in benches:  # compile and warm up outside the timing
            b.chunk()
        rows = [summarize(ms) for ms in interleave(benches, args.runs, args.seconds)]
        for r in rows[1:]:
            add_ratio(r, rows[0])
        cells = " | ".join(f"{fmt_rate(r['steps_per_s'])} | {r['ratio']:.2f}" for r in rows[1:])
        cpu = " / ".join(f"{r['cpu_ratio']:.2f}" for r in rows[1:])
        print(f"| {B} | {fmt_rate(rows[0]['steps_per_s'])} | {cells} | {cpu} |")
    print(f"\nload at end {loadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
