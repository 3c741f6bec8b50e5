"""What the round's history tells about a hidden hand: nats per hand over ``public``, through the round.

    python -m benchmarks.history_information [--games 60] [--opponents heuristic rlcard_rule greedy]
        [--beliefs net replay-heuristic] [--plot benchmarks/results/history_information.png]

Two-player rounds (classic, seeded) of ``--observer`` against each of ``--opponents`` are played
to their end. At a share ``--keep`` of the observer's decisions with a choice, each belief with
soft evidence (``agents.beliefs``) is judged on the opponent's true hand, read from the engine
(this script is the judge, not a player): ``--candidates`` deals are made from the observer's
information set by ``public`` (``Engine.resample_hidden`` with its exclusions, as the searches
deal), and the true hand's gain is ``log w(true) - log mean w(candidates)``: the log-ratio of
the belief's density to ``public``'s at the true hand (the mean estimates the normaliser; with
few candidates it is biased upwards when the weights are very uneven). Its mean over decisions
is the information the belief adds to ``public``, in nats per hidden hand.

``replay-heuristic`` models the opponent by ``HeuristicAgent``'s own code: against ``heuristic``
it is the true policy (the upper bound of what the round's decisions tell); against the other
opponents, and for ``net`` (the belief network), the model is generic. Decisions where a belief
weighs nothing (no decision of the opponent yet, or a round the replay cannot follow:
``agents.beliefs.replay_heuristic``) count as 0 for it, and their share is shown.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import time
from typing import Any

import numpy as np
import tyro

from agents import make_agent
from agents.beliefs import PublicBelief, log_weights_of, make_belief
from uno_env import Engine, UnoRules

PHASES = ((0, 10), (10, 20), (20, 40), (40, 10**9))


@dataclasses.dataclass
class Args:
    games: int = 60
    """rounds per opponent"""
    observer: str = "heuristic"
    """the agents.registry spec of the seat whose information set is judged"""
    opponents: tuple[str, ...] = ("heuristic", "rlcard_rule", "greedy")
    """the agents.registry specs of the other seat, one block of rounds each"""
    beliefs: tuple[str, ...] = ("net", "replay-heuristic")
    """beliefs with soft evidence to judge (agents.beliefs.BELIEFS)"""
    keep: float = 0.5
    """share of the observer's decisions with a choice that are judged"""
    candidates: int = 128
    """deals from public per judged decision (the normaliser's sample)"""
    seed: int = 0
    plot: str | None = None
    """also draw the mean gain by phase of the round to this PNG"""
    json: str | None = None
    """also write the figures to this JSON file"""
    from_json: str | None = None
    """measure nothing: draw --plot from the figures of an earlier --json"""


def history_of(belief: Any, engine: Engine, i: int, seat: int) -> Any:
    """The round so far as ``seat`` saw it in game i, in the form ``belief`` reads (``history_form``)."""
    if getattr(belief, "history_form", "events") == "events":
        return engine.history_events(i, seat)
    rows, counts = engine.history(seat, games=[i])
    return rows[i].copy(), counts[i].copy()


def measure(args: Args, opponent: str, rules: UnoRules) -> dict[str, Any]:
    """Gains per belief and phase against one opponent (module docs)."""
    beliefs = {name: make_belief(name, rules) for name in args.beliefs}
    public = PublicBelief()
    agents = [make_agent(args.observer, rules), make_agent(opponent, rules)]
    rng = np.random.default_rng(args.seed)
    judge_rng = np.random.default_rng([args.seed, 1])  # the judge's draws leave the games as they were
    history = max(int(getattr(b, "history_length", 0)) for b in beliefs.values())
    cand = Engine(args.candidates + 1, 2, rules, seed=0)
    gains: dict[str, dict[tuple[int, int], list[float]]] = {n: {ph: [] for ph in PHASES} for n in beliefs}
    weighed = {n: 0 for n in beliefs}
    cpu = {n: 0.0 for n in beliefs}
    judged = 0
    for g in range(args.games):
        engine = Engine(1, 2, rules, seed=args.seed * 100_000 + g, history=history)
        observer_seat = g % 2  # the observer takes each seat in turn
        while not (engine.terminated[0] or engine.truncated[0]):
            seat = int(engine.current_player[0])
            m = engine.legal_mask[0]
            if seat == observer_seat and m.sum() >= 2 and judge_rng.random() < args.keep:
                judged += 1
                o = engine.observation[0]
                k = np.arange(args.candidates + 1)
                cand.copy_games(engine, np.zeros(k.size, np.int64), k)
                cand.resample_hidden(k[1:], seat, judge_rng, exclude=public.exclusions(o, seat))
                hands = cand.hand_counts(k)  # row 0: the true hands
                ph = next(p for p in PHASES if p[0] <= engine.game_state(0)["turn"] < p[1])
                for name, belief in beliefs.items():
                    t0 = time.process_time()
                    w = log_weights_of(belief, o, seat, hands, history_of(belief, engine, 0, seat))
                    cpu[name] += time.process_time() - t0
                    gain = 0.0
                    if w is not None and np.isfinite(w[1:]).any():
                        weighed[name] += 1
                        gain = float(w[0] - (np.logaddexp.reduce(w[1:]) - np.log(args.candidates)))
                    gains[name][ph].append(gain)
            a = agents[0 if seat == observer_seat else 1].act(engine.observation, engine.legal_mask, rng)
            engine.step(a)
    rows = []
    for name in beliefs:
        every = np.array([x for ph in PHASES for x in gains[name][ph]])
        finite = every[np.isfinite(every)]
        rows.append(
            {
                "opponent": opponent,
                "belief": name,
                "judged": judged,
                "weighed_share": weighed[name] / max(judged, 1),
                "mean_gain": float(finite.mean()) if finite.size else float("nan"),
                "true_ruled_out": int(np.isneginf(every).sum()),
                "by_phase": {f"{a}-{b}": _mean(gains[name][(a, b)]) for a, b in PHASES},
                "cpu_ms_per_query": 1000 * cpu[name] / max(judged, 1),
            }
        )
    return {"rows": rows}


def _mean(xs: list[float]) -> float:
    """Mean over the decisions whose true hand the belief did not rule out (counted apart)."""
    x = np.array(xs)
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")


def main(args: Args) -> None:
    if args.from_json:
        with open(args.from_json) as f:
            plot(json.load(f)["rows"], args.plot or "history_information.png")
        return
    rules = UnoRules()
    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = os.getloadavg()[0]
    rows = []
    for opponent in args.opponents:
        rows += measure(args, opponent, rules)["rows"]
    load1 = os.getloadavg()[0]
    print(
        f"\n{started:%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"1-minute load {load0:.1f} at start, {load1:.1f} at end; observer {args.observer}, {args.games} rounds "
        f"per opponent, keep {args.keep}, {args.candidates} public deals per decision, seed {args.seed}\n"
    )
    heads = [f"turns {a}-{b}" if b < 10**9 else f"turns {a}+" for a, b in PHASES]
    print(
        "| opponent | belief | decisions | weighed | mean gain (nats/hand) | "
        + " | ".join(heads)
        + " | CPU ms per query |"
    )
    print("|---|---|---:|---:|---:|" + "---:|" * len(heads) + "---:|")
    for r in rows:
        by = " | ".join(f"{v:+.3f}" for v in r["by_phase"].values())
        print(
            f"| {r['opponent']} | `{r['belief']}` | {r['judged']} | {r['weighed_share']:.0%} | {r['mean_gain']:+.3f} | "
            f"{by} | {r['cpu_ms_per_query']:.1f} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "args": dataclasses.asdict(args),
                    "rows": rows,
                    "started": f"{started:%Y-%m-%d %H:%M}",
                    "load": [load0, load1],
                },
                f,
                indent=1,
            )
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")


def plot(rows: list[dict[str, Any]], path: str) -> None:
    """The mean gain by phase of the round, one panel per opponent, one line per belief."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heads = [f"turns {a}-{b}" if b < 10**9 else f"turns {a}+" for a, b in PHASES]

    opponents = list(dict.fromkeys(r["opponent"] for r in rows))
    fig, axes = plt.subplots(1, len(opponents), figsize=(4 * len(opponents), 3.6), sharey=True, squeeze=False)
    for ax, opponent in zip(axes[0], opponents, strict=True):
        for r in rows:
            if r["opponent"] == opponent:
                ax.plot(heads, list(r["by_phase"].values()), marker="o", label=r["belief"])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_title(f"against {opponent}")
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_ylabel("nats per hidden hand over public")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("What the round's history tells about the other hand (2 players)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main(tyro.cli(Args))
