"""CFR, CFR+ and Deep CFR on ``python_mini_uno``: NashConv over iterations and CPU time, and the
NashConv of our agents' policies on the same game (docs/openspiel.md).

    python -m benchmarks.openspiel_mini [--iterations 100] [--out benchmarks/results/openspiel_mini]
    python -m benchmarks.openspiel_mini --solvers CFR CFR+ DeepCFR --iterations 16
    python -m benchmarks.openspiel_mini --quick

Deep CFR (OpenSpiel's PyTorch ``deep_cfr``) learns from the information state tensor alone, where
CFR keeps a table keyed by the information state string; its policy network's output, renormalised
over the legal actions, is the policy measured.

OpenSpiel's own ``cfr.CFRSolver`` / ``cfr.CFRPlusSolver`` run on the game; ``exploitability.nash_conv``
measures the average policy at log-spaced iterations (its CPU time is not counted in the
solver's). An agent of ``agents.registry`` (``heuristic``, ``rlcard_rule``, ``random``) becomes a
policy that puts all its weight on the action the agent picks from the seat's R11 observation
and legal mask (``random``: uniform over the legal actions); NashConv is the sum over both seats
of what a best response gains against it (exploitability is half of it, the game being zero-sum).
Writes ``OUT.md`` (tables), ``OUT.json`` and, with ``--plot``, a PNG of NashConv against
iterations and CPU seconds. Every figure is measured on each run.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import tyro
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr, exploitability

import uno_env.openspiel_game as osg
from agents import make_agent
from uno_env import NUM_ACTIONS


@dataclasses.dataclass
class Args:
    iterations: int = 100
    """CFR iterations of each solver."""
    colors: int = osg.MINI_DEFAULTS["colors"]
    ranks: int = osg.MINI_DEFAULTS["ranks"]
    copies: int = osg.MINI_DEFAULTS["copies"]
    hand_size: int = osg.MINI_DEFAULTS["hand_size"]
    max_turns: int = osg.MINI_DEFAULTS["max_turns"]
    solvers: tuple[str, ...] = ("CFR", "CFR+")
    """Which solvers run: CFR, CFR+, DeepCFR (none: only the agents' policies are measured)."""
    deep_cfr_iterations: int = 20
    """Deep CFR iterations (solver DeepCFR); NashConv every deep_cfr_every of them."""
    deep_cfr_every: int = 5
    deep_cfr_traversals: int = 50
    """Deep CFR tree traversals per player and iteration."""
    agents: tuple[str, ...] = ("heuristic", "rlcard_rule", "random")
    """agents.registry specs whose policies are measured."""
    out: str = "benchmarks/results/openspiel_mini"
    """Writes OUT.md and OUT.json."""
    plot: str | None = None
    """Also a PNG of the NashConv curves (docs/img/openspiel_cfr.png)."""
    quick: bool = False
    """Tiny sizes (a smoke test): 3 iterations, a 1-card-hand game."""
    seed: int = 0
    """Seeds Deep CFR's networks and its sampling."""


class AgentPolicy(os_policy.Policy):
    """An ``agents`` agent as an OpenSpiel policy: all weight on its action from the seat's R11
    observation (a function of the information state), or uniform for ``random``."""

    def __init__(self, game: Any, spec: str) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.spec = spec
        self.agent = None if spec == "random" else make_agent(spec, game.rules)

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        legal = state.legal_actions()
        if self.agent is None:
            return {a: 1.0 / len(legal) for a in legal}
        p = state.current_player()
        obs = np.asarray(state.observation_tensor(p), np.float32)[None]
        mask = np.zeros((1, NUM_ACTIONS), bool)
        mask[0, legal] = True
        # A fresh generator per call keeps the policy a function of what the seat sees.
        action = int(self.agent.act(obs, mask, np.random.default_rng(0))[0])
        return {a: float(a == action) for a in legal}


def _checkpoints(n: int) -> list[int]:
    points = {1, n}
    k = 1
    while k < n:
        points.add(k)
        k *= 2
    return sorted(points)


def run_solver(game: Any, plus: bool, iterations: int) -> list[dict[str, float]]:
    """(iteration, solver CPU seconds, NashConv) at log-spaced iterations."""
    cpu0 = time.process_time()
    solver = cfr.CFRPlusSolver(game) if plus else cfr.CFRSolver(game)
    solver_cpu = time.process_time() - cpu0
    rows = []
    marks = set(_checkpoints(iterations))
    for it in range(1, iterations + 1):
        t = time.process_time()
        solver.evaluate_and_update_policy()
        solver_cpu += time.process_time() - t
        if it in marks:
            nash = exploitability.nash_conv(game, solver.average_policy())
            rows.append({"iteration": it, "cpu_s": solver_cpu, "nash_conv": float(nash)})
            print(f"{'CFR+' if plus else 'CFR'} {it:5d} it  {solver_cpu:8.1f} s CPU  NashConv {nash:.4f}", flush=True)
    return rows


class _LegalPolicy(os_policy.Policy):
    """A callable policy renormalised over the legal actions (Deep CFR's network spreads some
    weight over illegal ones, and NashConv needs a distribution)."""

    def __init__(self, game: Any, probabilities: Any) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.probabilities = probabilities

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        probs = {a: float(p) for a, p in self.probabilities(state).items()}
        total = sum(probs.values())
        if total <= 0:
            return {a: 1.0 / len(probs) for a in probs}
        return {a: p / total for a, p in probs.items()}


def run_deep_cfr(game: Any, args: Args) -> list[dict[str, float]]:
    """(iteration, solver CPU seconds, NashConv) every ``deep_cfr_every`` iterations: each
    ``solve`` runs that many iterations and trains the policy network further."""
    import torch
    from open_spiel.python.pytorch import deep_cfr

    if args.deep_cfr_every < 1 or args.deep_cfr_iterations < args.deep_cfr_every:
        raise ValueError("deep_cfr_every must be at least 1 and at most deep_cfr_iterations")
    torch.set_num_threads(1)  # a shared machine
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Deep CFR samples chance and the other seat with the global generator
    cpu0 = time.process_time()
    solver = deep_cfr.DeepCFRSolver(
        game,
        policy_network_layers=(64, 64),
        advantage_network_layers=(64, 64),
        num_iterations=args.deep_cfr_every,
        num_traversals=args.deep_cfr_traversals,
        learning_rate=1e-3,
        batch_size_advantage=256,
        batch_size_strategy=256,
        memory_capacity=int(1e6),
        policy_network_train_steps=100,
        advantage_network_train_steps=20,
        seed=args.seed,
    )
    solver_cpu = time.process_time() - cpu0
    rows = []
    for it in range(args.deep_cfr_every, args.deep_cfr_iterations + 1, args.deep_cfr_every):
        t = time.process_time()
        solver.solve()
        solver_cpu += time.process_time() - t
        table = os_policy.tabular_policy_from_callable(game, _LegalPolicy(game, solver.action_probabilities))
        nash = exploitability.nash_conv(game, table)
        rows.append({"iteration": it, "cpu_s": solver_cpu, "nash_conv": float(nash)})
        print(f"DeepCFR {it:5d} it  {solver_cpu:8.1f} s CPU  NashConv {nash:.4f}", flush=True)
    return rows


def main(args: Args) -> dict[str, Any]:
    unknown = set(args.solvers) - {"CFR", "CFR+", "DeepCFR"}
    if unknown:
        raise ValueError(f"solvers are CFR, CFR+ and DeepCFR, got {sorted(unknown)}")
    if args.quick:
        args = dataclasses.replace(
            args,
            iterations=3,
            hand_size=1,
            max_turns=4,
            ranks=2,
            deep_cfr_iterations=2,
            deep_cfr_every=1,
            deep_cfr_traversals=8,
        )
    params = {k: getattr(args, k) for k in osg.MINI_DEFAULTS}
    game = pyspiel.load_game("python_mini_uno", params)
    probe = cfr.CFRSolver(game)
    infosets = len(probe.average_policy().state_lookup)
    report: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "load_1min_start": os.getloadavg()[0],
        "params": params,
        "args": {k: v for k, v in dataclasses.asdict(args).items() if k not in osg.MINI_DEFAULTS and k != "out"},
        "information_states": infosets,
        "solvers": {},
        "agents": {},
    }
    for name in args.solvers:
        if name == "DeepCFR":
            report["solvers"][name] = run_deep_cfr(game, args)
        else:
            report["solvers"][name] = run_solver(game, name == "CFR+", args.iterations)
    for spec in args.agents:
        t = time.process_time()
        nash = float(exploitability.nash_conv(game, AgentPolicy(game, spec)))
        report["agents"][spec] = {"nash_conv": nash, "cpu_s": time.process_time() - t}
        print(f"{spec:12s} NashConv {nash:.4f}", flush=True)
    report["load_1min_end"] = os.getloadavg()[0]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(report))
    if args.plot and report["solvers"]:
        plot(report, args.plot)
    print(markdown(report))
    return report


def markdown(r: dict[str, Any]) -> str:
    lines = [
        f"# CFR and Deep CFR on python_mini_uno ({r['date']})",
        "",
        f"Machine: {r['machine']}, 1-minute load {r['load_1min_start']:.1f} at the start and "
        f"{r['load_1min_end']:.1f} at the end (a shared machine: CPU seconds are the figure to read).",
        f"Game: `python_mini_uno` {r['params']}: {r['information_states']} information states.",
        "Command: `python -m benchmarks.openspiel_mini` with the arguments below (this file is its output).",
        f"Arguments: {r['args']}",
        "",
        "| solver | iterations | solver CPU s | NashConv | exploitability |",
        "|---|---|---|---|---|",
    ]
    for name, rows in r["solvers"].items():
        for row in rows:
            lines.append(
                f"| {name} | {row['iteration']} | {row['cpu_s']:.1f} | {row['nash_conv']:.4f} | {row['nash_conv'] / 2:.4f} |"
            )
    lines += ["", "| policy | NashConv | exploitability |", "|---|---|---|"]
    for spec, a in r["agents"].items():
        lines.append(f"| {spec} | {a['nash_conv']:.4f} | {a['nash_conv'] / 2:.4f} |")
    for name, rows in r["solvers"].items():
        last = rows[-1]
        lines.append(
            f"| {name} after {last['iteration']} iterations | {last['nash_conv']:.4f} | {last['nash_conv'] / 2:.4f} |"
        )
    return "\n".join(lines) + "\n"


def plot(r: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for name, rows in r["solvers"].items():
        its = [row["iteration"] for row in rows]
        cpu = [row["cpu_s"] for row in rows]
        nash = [row["nash_conv"] for row in rows]
        axes[0].loglog(its, nash, marker="o", label=name)
        axes[1].loglog(cpu, nash, marker="o", label=name)
    for spec, a in r["agents"].items():
        for ax in axes:
            ax.axhline(a["nash_conv"], linestyle="--", linewidth=1, color="gray")
            ax.annotate(spec, (ax.get_xlim()[0], a["nash_conv"]), fontsize=8, va="bottom")
    axes[0].set_xlabel("iterations")
    axes[1].set_xlabel("solver CPU seconds")
    for ax in axes:
        ax.set_ylabel("NashConv")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"python_mini_uno {r['params']} ({r['information_states']} information states)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main(tyro.cli(Args))
