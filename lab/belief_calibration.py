"""Calibration of the searches' beliefs: how likely are the true hidden hands under a belief vs uniform?

    python -m lab.belief_calibration --games 400 --num-players 2 --plot lab/results/beliefs.png

Method and columns: lab/results/beliefs.md.
"""

from __future__ import annotations

import dataclasses
import datetime
import os

import numpy as np
import tyro
from scipy.special import gammaln

from agents import make_agent
from agents.beliefs import make_belief
from agents.model_card import machine
from uno_env import Engine, UnoRules
from uno_env.cards import NUM_CARD_TYPES
from uno_env.observation import OBS_DISCARD, OBS_HAND

PHASES = ((0, 10), (10, 20), (20, 40), (40, 10**9))


def log_choose(n: np.ndarray | int, k: np.ndarray | int) -> np.ndarray:
    return gammaln(np.asarray(n) + 1.0) - gammaln(np.asarray(k) + 1.0) - gammaln(np.asarray(n) - np.asarray(k) + 1.0)


@dataclasses.dataclass
class Args:
    games: int = 400
    """rounds played (each to its end)"""
    num_players: int = 2
    agent: str = "heuristic"
    """the agents.registry spec playing every seat"""
    belief: str = "public"
    eps: float = 0.05
    """weight of the uniform deal in the judged mixture"""
    seed: int = 0
    batch_size: int = 200
    plot: str | None = None
    """also draw the mixture's gain by phase to this PNG (with --compare-players, both table sizes)"""
    compare_players: tuple[int, ...] = ()
    """more table sizes to measure (rows added to the table and the plot)"""


def measure(args: Args, num_players: int, rules: UnoRules) -> list[dict]:
    belief = make_belief(args.belief)
    agent = make_agent(args.agent, rules)
    deck = rules_deck(rules)
    rng = np.random.default_rng(args.seed)
    rows = {ph: {"decisions": 0, "hands": 0, "constrained": 0, "broken": 0, "gain": [], "mix": []} for ph in PHASES}
    played = 0
    while played < args.games:
        B = min(args.batch_size, args.games - played)
        engine = Engine(B, num_players, rules, seed=args.seed * 1000 + played)
        live = np.ones(B, bool)
        while live.any():
            actions = np.full(B, -1, np.int64)
            rows_live = np.flatnonzero(live)
            actions[rows_live] = agent.act(engine.observation[rows_live], engine.legal_mask[rows_live], rng)
            for b in rows_live:
                o = engine.observation[b]
                seat = int(engine.current_player[b])
                state = engine.game_state(int(b))
                ph = next(p for p in PHASES if p[0] <= state["turn"] < p[1])
                r = rows[ph]
                r["decisions"] += 1
                ex = belief.exclusions(o, seat)
                unseen = (
                    deck
                    - np.rint(o[OBS_HAND : OBS_HAND + NUM_CARD_TYPES])
                    - np.rint(o[OBS_DISCARD : OBS_DISCARD + NUM_CARD_TYPES])
                )
                k = int(unseen.sum())
                for p in range(num_players):
                    hand = state["hands"][p]
                    if p == seat or not hand:
                        continue
                    r["hands"] += 1
                    h = len(hand)
                    allowed = unseen.copy()
                    if ex is not None:
                        allowed[ex[p]] = 0
                    A = int(allowed.sum())
                    ok = ex is None or not any(ex[p, c] for c in hand)
                    gain = 0.0
                    if ex is not None and ex[p].any():
                        r["constrained"] += 1
                        gain = float(log_choose(k, h) - log_choose(A, h)) if ok and A >= h else -np.inf
                        if ok:
                            r["gain"].append(gain)
                        else:
                            r["broken"] += 1
                    r["mix"].append(float(np.log((1 - args.eps) * np.exp(gain) + args.eps)))
            engine.step(actions)
            live &= ~(engine.terminated | engine.truncated)
        played += B
    out = []
    for (lo, hi), r in rows.items():
        out.append(
            {
                "num_players": num_players,
                "phase": f"turns {lo}–{hi - 1}" if hi < 10**9 else f"turns {lo}+",
                "decisions": r["decisions"],
                "constrained_share": r["constrained"] / max(r["hands"], 1),
                "broken_share": r["broken"] / max(r["constrained"], 1),
                "gain_when_kept": float(np.mean(r["gain"])) if r["gain"] else float("nan"),
                "mixture_gain": float(np.mean(r["mix"])) if r["mix"] else float("nan"),
            }
        )
    return out


def rules_deck(rules: UnoRules) -> np.ndarray:
    from agents._tactics import rule_tables

    return rule_tables(rules)[0].astype(np.float64)


def main() -> None:
    args = tyro.cli(Args, description=__doc__)
    rules = UnoRules.preset("classic")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"{when}; {args.games} rounds of {args.agent} in every seat, preset classic, seed {args.seed}; belief "
        f"{args.belief}, mixture eps {args.eps}; {machine()}, "
        f"load {os.getloadavg()[0]:.1f}\n"
    )
    table = []
    for n in (args.num_players, *args.compare_players):
        table += measure(args, n, rules)
    head = (
        "| players | phase | decisions | other hands with an exclusion | of those, broken by the true hand | "
        "log-LR vs uniform when kept (nats) | mixture log-LR, all other hands (nats) |"
    )
    print(head)
    print("|---|---|---|---|---|---|---|")
    for f in table:
        line = (
            f"| {f['num_players']} | {f['phase']} | {f['decisions']} | {f['constrained_share']:.1%} | "
            f"{f['broken_share']:.1%} | {f['gain_when_kept']:.2f} | {f['mixture_gain']:+.3f} |"
        )
        print(line)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        sizes = sorted({f["num_players"] for f in table})
        width = 0.8 / len(sizes)
        phases = [f["phase"] for f in table if f["num_players"] == sizes[0]]
        for j, n in enumerate(sizes):
            ys = [f["mixture_gain"] for f in table if f["num_players"] == n]
            ax.bar(np.arange(len(ys)) + j * width, ys, width, label=f"{n} players")
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xticks(np.arange(len(phases)) + width * (len(sizes) - 1) / 2, phases)
        ax.set_ylabel("log-likelihood ratio vs uniform (nats)")
        ax.set_title(f"True hands under the '{args.belief}' belief (eps {args.eps}), {args.agent} games", fontsize=10)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
