"""A tournament of UNO agents: win rates with 95% intervals, mean points, ratings, a JSON file and plots.

    python evaluate.py                                              # the four baselines, 2 players, classic
    python evaluate.py --agents random,heuristic,runs/uno_ppo/model.zip --games 10000
    python evaluate.py --agents heuristic,rlcard_rule,greedy,random --num-players 4 --rules house
    python evaluate.py --help

CleanRL's shape: one ``Args`` dataclass, a linear ``main``. Agents are named as in
``agents.registry.make_agent``: ``random``, ``rlcard_rule``, ``greedy``, ``heuristic``, or the
path of a model saved by ``train.py`` or of an RLlib checkpoint directory (``train.py
--backend rllib``), optionally ``label=path``; repeat a name to seat it
twice (``random,random``: an agent against itself).

With 2 players every pairing plays ``--games`` games; with n players every table of n distinct
entries of ``--agents`` does. Seats are rotated (game g puts the table's agent i in seat
``(i + g) % n``), all games of a table run in one batched engine, and everything is
reproducible from ``--seed`` (see ``agents.tournament``, which also documents the counting
and the Bradley–Terry ratings on the Elo scale).

**Chunks and Ray.** Each table's games are played in chunks of ``--chunk-games`` games; chunk
c of table t is seeded from ``(seed, t, c)`` alone (chunk 0 from ``(seed, t)``, as
``agents.tournament.tournament`` seeds its tables), so the table is a function of ``--seed``,
``--games``, ``--batch-size`` and ``--chunk-games`` and never of where the chunks run. With
``--ray`` the chunks are Ray tasks (``ray.remote(play_table)``) spread over a local Ray
(``--num-cpus``) or the cluster at ``--address``; without it they run one after the other
here. Both give exactly the same table for the same arguments. A chunk is a unit of work:
with ``--chunk-games`` >= ``--games`` (the default for up to 10,000 games) a table is one
chunk and the results equal those of ``tournament``.

    python evaluate.py --games 100000 --chunk-games 10000 --ray                  # local Ray, 2 CPUs
    python evaluate.py --games 100000 --chunk-games 10000 --ray --address auto   # a running cluster

Output: a Markdown table on stdout; ``<output_dir>/tournament.json`` (configuration, every
table, pooled numbers per agent, pairwise counts, ratings); ``<output_dir>/win_rates.png``
(the row agent's win rate in the games it shared with the column agent) and
``<output_dir>/ratings.png`` (ratings with 95% intervals), drawn with matplotlib's Agg backend.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Args:
    agents: str = "random,rlcard_rule,greedy,heuristic"
    """comma-separated agents: random, rlcard_rule, greedy, heuristic, a saved model path or an RLlib
    checkpoint directory (train.py --backend rllib), optionally as label=path"""
    num_players: int = 2
    """players per table (2-10); with n > 2 every table of n distinct entries plays"""
    rules: str = "classic"
    """a preset name (classic, official, swap_hands, house) or a JSON dict of options over classic"""
    games: int = 10_000
    """games per pairing (2 players) or per table"""
    seed: int = 0
    """seed of the games and the agents' random choices"""
    batch_size: int = 1024
    """games played at once per table (results depend on it, as on the seed)"""
    deterministic: bool = True
    """saved models play their most likely legal action (False: sample from the policy)"""
    anchor: str = "random"
    """agent whose rating is fixed at --anchor-rating (the mean is used when it does not play)"""
    anchor_rating: float = 1000.0
    """rating of the anchor agent"""
    output_dir: str = "runs/eval"
    """where tournament.json and the PNG plots go"""
    plots: bool = True
    """draw win_rates.png and ratings.png"""
    torch_threads: int = 1
    """torch CPU threads for saved models (0: torch's default)"""
    chunk_games: int = 10_000
    """games per unit of work (a table of more games is split into chunks, each seeded on its
    own); results depend on it, never on --ray or the number of workers"""
    ray: bool = False
    """play the chunks as Ray tasks (needs the distributed extra)"""
    address: str = ""
    """with --ray: address of a running Ray cluster ('auto': the one started on this machine by
    'ray start'); empty: start a local Ray with --num-cpus CPUs"""
    num_cpus: int = 2
    """with --ray and no --address: CPUs of the local Ray"""


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` from the command line (``tyro`` when installed, else argparse; see train.py)."""
    from train import parse_dataclass

    return parse_dataclass(Args, argv, __doc__)


def build_agent(spec: str, rules: Any, deterministic: bool = True) -> Any:
    """``agents.registry.make_agent``, plus RLlib checkpoint directories written by
    ``train.py --backend rllib`` (``label=dir`` names them)."""
    from agents.registry import make_agent

    label, path = spec.split("=", 1) if "=" in spec else (None, spec)
    if os.path.isdir(path):
        from agents.rllib_agent import RLlibAgent

        return RLlibAgent(path, deterministic=deterministic, name=label)
    return make_agent(spec, rules, deterministic=deterministic)


def chunk_plan(num_agents: int, num_players: int, games: int, chunk_games: int, seed: int) -> list[tuple[int, tuple[int, ...], int, int]]:
    """Every unit of work ``(table, agent indices, games, seed)``: each table of ``num_players``
    distinct agents split into chunks of ``chunk_games`` games; chunk 0 of table t is seeded
    like ``tournament``'s table t, chunk c > 0 from ``(that seed, c)``."""
    from agents.tournament import hash_seed

    plan = []
    for t, idx in enumerate(itertools.combinations(range(num_agents), num_players)):
        table_seed = hash_seed(seed, t)
        for c, start in enumerate(range(0, games, chunk_games)):
            plan.append((t, idx, min(chunk_games, games - start), table_seed if c == 0 else hash_seed(table_seed, c)))
    return plan


def merge_tables(parts: list[Any]) -> Any:
    """One ``TableResult`` from the chunks of a table (counts summed; seconds summed over chunks)."""
    from agents.tournament import TableResult

    first = parts[0]
    return TableResult(first.names, sum(p.games for p in parts), sum(p.wins for p in parts),
                       sum(p.points for p in parts), sum(p.beat for p in parts), sum(p.truncated for p in parts),
                       sum(p.steps for p in parts), sum(p.seconds for p in parts))


def chunked_tournament(agents: list[Any], games: int, num_players: int, rules: Any, seed: int, batch_size: int,
                       chunk_games: int, anchor: str | None, anchor_rating: float, names: list[str],
                       progress: Any = None, ray_address: str | None = None, num_cpus: int = 2) -> Any:
    """``agents.tournament.tournament`` played chunk by chunk (module docstring): here, or as Ray
    tasks when ``ray_address`` is not None ("" starts a local Ray with ``num_cpus`` CPUs)."""
    from agents.tournament import TournamentResult, bradley_terry, play_table

    if len(agents) < num_players:
        raise ValueError(f"{num_players} players need at least {num_players} agents (repeat a name to seat it "
                         f"twice), got {len(agents)}")
    plan = chunk_plan(len(agents), num_players, games, chunk_games, seed)
    calls = [([agents[i] for i in idx], n, s, [names[i] for i in idx]) for _, idx, n, s in plan]
    if ray_address is None:
        parts = [play_table(a, n, rules=rules, seed=s, batch_size=batch_size, names=nm) for a, n, s, nm in calls]
    else:
        import ray

        from train import init_ray

        init_ray(ray_address, num_cpus)
        # Each table's agents go to the object store once; its chunks get a reference, not a copy each.
        seated = {idx: ray.put([agents[i] for i in idx]) for _, idx, _, _ in plan}
        remote = ray.remote(num_cpus=1)(play_table)
        futures = [remote.remote(seated[idx], n, rules=rules, seed=s, batch_size=batch_size,
                                 names=[names[i] for i in idx]) for _, idx, n, s in plan]
        parts = ray.get(futures)
    by_table: dict[int, tuple[list[int], list[Any]]] = {}
    for (t, idx, _, _), part in zip(plan, parts):
        by_table.setdefault(t, (list(idx), []))[1].append(part)
    tables = [(idx, merge_tables(chunks)) for idx, chunks in by_table.values()]
    if progress is not None:
        for _, r in tables:
            progress(r)
    n = len(names)
    beat = np.zeros((n, n), np.int64)
    for idx, r in tables:
        beat[np.ix_(idx, idx)] += r.beat
    anchor_idx = names.index(anchor) if anchor in names else None
    ratings, se = bradley_terry(beat, anchor=anchor_idx, anchor_rating=anchor_rating)
    config = {"num_games": int(games), "num_players": int(num_players), "seed": int(seed),
              "batch_size": int(batch_size), "chunk_games": int(chunk_games), "anchor_rating": anchor_rating,
              "rules": rules.to_dict(), "ray": ray_address is not None}
    return TournamentResult(names, int(num_players), tables, ratings, se,
                            names[anchor_idx] if anchor_idx is not None else None, config)


def plot_results(result: Any, output_dir: str) -> list[str]:
    """The win-rate heat map and the rating bars as PNG files; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = result.names
    n = len(names)
    beat, met = result.pairwise()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(met > 0, beat / np.maximum(met, 1), np.nan)
    paths = []
    size = max(4.0, 0.9 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size + 1.0, size))
    im = ax.imshow(rate, cmap="RdBu", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), names, rotation=45, ha="right")
    ax.set_yticks(range(n), names)
    for i in range(n):
        for j in range(n):
            if not np.isnan(rate[i, j]):
                ax.text(j, i, f"{rate[i, j]:.0%}", ha="center", va="center",
                        color="white" if abs(rate[i, j] - 0.5) > 0.3 else "black", fontsize=9)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    what = "games won against the opponent" if result.num_players == 2 else "games won with the opponent at the table"
    per = "pairing" if result.num_players == 2 else "table"
    ax.set_title(f"Win rate: {what}\n{result.num_players} players, {result.config['num_games']:,} games per {per}")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    paths.append(os.path.join(output_dir, "win_rates.png"))
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    order = np.argsort(-result.ratings)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.8 * n + 2.0), 4.0))
    ax.bar(range(n), result.ratings[order], yerr=1.96 * result.rating_se[order], capsize=4, color="tab:blue")
    ax.set_xticks(range(n), [names[i] for i in order], rotation=30, ha="right")
    ax.set_ylabel("rating (Elo scale)")
    anchor = f"{result.anchor} = {result.config['anchor_rating']:g}" if result.anchor else "mean = 1000"
    ax.set_title(f"Bradley–Terry ratings, 95% intervals ({anchor})")
    lo = float(np.min(result.ratings - 2 * result.rating_se))
    ax.set_ylim(bottom=min(0.0, lo - 50.0))
    fig.tight_layout()
    paths.append(os.path.join(output_dir, "ratings.png"))
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def main(args: Args) -> Any:
    """Run the tournament; print the Markdown tables; write the JSON and the plots."""
    from agents.registry import BASELINES
    from agents.tournament import unique_names
    from train import make_rules

    specs = [s.strip() for s in args.agents.split(",") if s.strip()]
    for name in ("games", "chunk_games", "batch_size", "num_cpus"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    rules = make_rules(args.rules)
    if args.torch_threads and any(s not in BASELINES for s in specs):
        import torch  # saved models only

        torch.set_num_threads(args.torch_threads)
    agents = [build_agent(s, rules, deterministic=args.deterministic) for s in specs]
    names = unique_names(agents)
    t0 = time.time()

    def progress(r: Any) -> None:
        print(f"  {' vs '.join(r.names)}: {r.games:,} games in {r.seconds:.1f} s", file=sys.stderr, flush=True)

    result = chunked_tournament(agents, args.games, num_players=args.num_players, rules=rules, seed=args.seed,
                                batch_size=args.batch_size, chunk_games=args.chunk_games, anchor=args.anchor,
                                anchor_rating=args.anchor_rating, names=names, progress=progress,
                                ray_address=args.address if args.ray else None, num_cpus=args.num_cpus)
    result.config.update({"agents": specs, "rules_arg": args.rules, "deterministic": args.deterministic,
                          "seconds": time.time() - t0})
    print(f"\n{args.num_players} players, rules {args.rules}, {args.games:,} games per "
          f"{'pairing' if args.num_players == 2 else 'table'}, seats rotated, seed {args.seed}\n")
    print(result.markdown())
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, "tournament.json")
    with open(path, "w") as f:
        json.dump({"args": dataclasses.asdict(args), **result.to_dict()}, f, indent=2)
    written = [path]
    if args.plots:
        written += plot_results(result, args.output_dir)
    print("\nwrote " + ", ".join(written))
    return result


if __name__ == "__main__":
    from train import run_script

    run_script(main, parse_args)
