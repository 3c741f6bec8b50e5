"""Scaling of the engine (steps/s against batch size and player count), memory per game, and the plot."""

from __future__ import annotations

import tracemalloc
from collections.abc import Sequence
from typing import Any

import numpy as np

from uno_env import Engine, sample_legal


def _engine(batch: int, players: int, seed: int):
    return Engine(batch, players, seed=seed, autoreset=True)


def engine_bytes_per_game(players: int, batch: int = 64) -> dict[str, float]:
    """Bytes per game of the engine's state arrays and of its output buffers."""
    e = _engine(batch, players, 0)
    state = sum(a.nbytes for a in e.state_arrays)
    outputs = sum(
        a.nbytes
        for a in (
            e.observation,
            e.final_observation,
            e.legal_mask,
            e.current_player,
            e.rewards,
            e.terminated,
            e.truncated,
        )
    )
    return {"state_bytes_per_game": state / batch, "output_bytes_per_game": outputs / batch}


def traced_peak_per_game(players: int, batch: int, steps: int = 20) -> float:
    """tracemalloc peak (bytes) of building an Engine of ``batch`` games and stepping it, per game."""
    rng = np.random.default_rng(0)
    _engine(1, players, 0)  # load the numba cache outside the trace
    tracemalloc.start()
    try:
        e = _engine(batch, players, 0)
        for _ in range(steps):
            e.step(sample_legal(e.legal_mask, rng))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / batch


def rlcard_traced_peak_per_game(players: int, seed: int = 0) -> float:
    """tracemalloc peak (bytes) of one RLCard ``UnoGame``: built, dealt, played to its end."""
    from rlcard.games.uno.game import UnoGame

    rng = np.random.default_rng(seed)
    tracemalloc.start()
    try:
        game = UnoGame(num_players=players)
        game.np_random = np.random.RandomState(seed)
        game.init_game()
        while not game.is_over():
            legal = game.get_legal_actions()
            game.step(legal[int(rng.random() * len(legal))])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return float(peak)


def memory_rows(players: Sequence[int], batch: int, rlcard: bool) -> list[dict[str, Any]]:
    """One row per player count: our bytes per game (arrays, traced peak) and RLCard's traced peak."""
    rows = []
    for p in players:
        row: dict[str, Any] = {"players": p, "batch": batch, **engine_bytes_per_game(p)}
        row["traced_peak_bytes_per_game"] = traced_peak_per_game(p, batch)
        if rlcard:
            row["rlcard_traced_peak_bytes_per_game"] = rlcard_traced_peak_per_game(p)
        rows.append(row)
    return rows


def plot(batch_rows: list[dict[str, Any]], player_rows: list[dict[str, Any]], path: str, title: str = "") -> None:
    """Two panels (steps/s vs batch size, vs players), RLCard's UnoGame as the reference.

    Solid and dashed lines are wall-clock medians; dotted ones the CPU-time medians (steadier on a
    shared machine)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ours = [r for r in batch_rows if r["impl"] == "uno_env"]
    ax1.plot([r["batch"] for r in ours], [r["steps_per_s"] for r in ours], "o-", label="uno_env Engine (2 players)")
    ax1.plot(
        [r["batch"] for r in ours],
        [r["cpu_steps_per_s"] for r in ours],
        "o:",
        color="C0",
        alpha=0.6,
        label="uno_env Engine, CPU-time rate",
    )
    ax1.fill_between(
        [r["batch"] for r in ours],
        [r["min_steps_per_s"] for r in ours],
        [r["max_steps_per_s"] for r in ours],
        alpha=0.2,
    )
    for r in batch_rows:
        if r["impl"] == "rlcard":
            ax1.axhline(r["steps_per_s"], color="C3", ls="--", label=f"RLCard UnoGame ({r['players']} players)")
            ax1.axhline(r["cpu_steps_per_s"], color="C3", ls=":", alpha=0.6, label="RLCard UnoGame, CPU-time rate")
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log")
    ax1.set_xlabel("batch size (games per Engine)")
    ax1.set_ylabel("game steps per second (median)")
    ax1.set_title("throughput vs batch size")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend()
    for impl, style, color in (("uno_env", "o-", "C0"), ("rlcard", "s--", "C3")):
        rows = [r for r in player_rows if r["impl"] == impl]
        if rows:
            label = f"uno_env Engine (batch {rows[0]['batch']})" if impl == "uno_env" else "RLCard UnoGame (batch 1)"
            ax2.plot([r["players"] for r in rows], [r["steps_per_s"] for r in rows], style, color=color, label=label)
    ax2.set_yscale("log")
    ax2.set_xlabel("players")
    ax2.set_ylabel("game steps per second (median)")
    ax2.set_title("throughput vs player count")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend()
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
