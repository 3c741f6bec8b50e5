"""Fit the belief network (``agents.beliefs.net``, ``NetBelief``): its training data, its training, its calibration.

    python -m training.fit_belief_net generate --games 8000 --seed 0 --out runs/belief_net/train.npz
    python -m training.fit_belief_net generate --games 1000 --seed 1 --out runs/belief_net/test.npz
    python -m training.fit_belief_net train --data runs/belief_net/train.npz --test runs/belief_net/test.npz

``generate`` plays classic rounds of ``--num-players`` between the ladder's agents (every
seating of ``--agents``, one per game slot) in one batched engine that keeps the history, and
at a share ``--keep`` of the decisions with two or more legal moves records, once for each
other seat, what the seat to act knows and, as the label, that seat's hand (``SAMPLE_FIELDS``;
the hand is ``Engine.hand_counts``: this script is the judge, not a player), with the agents' names. Seeded: the same flags give the same file.

``train`` fits the MLP of ``agents.beliefs.net`` on CPU (one torch thread) for the data's table
size: a Bernoulli loss per colour void and a categorical loss per card type's copies (counts
the seat can rule out masked out), then prints, on the held-out file, each head's log-loss
against the ``public`` belief's own prediction (a hypergeometric deal of the cards it allows,
mixed with ``--eps`` of the unconstrained deal so that its log-loss is finite), by the
predicted seat's agent; the reliability of the void probabilities in bins; and the gain of
``NetBelief``'s deal weights over ``public`` (importance weights over hands drawn from the
``public`` deal). It writes the weights (``--out``; with ``--save``, the shipped ``agents.beliefs.net.MODEL_PATHS``)
and their card (``agents.model_card``).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from pathlib import Path
from typing import Literal

import numpy as np
import tyro

from agents import make_agent
from agents.beliefs.net import (
    EVIDENCE_ROWS,
    MAX_COPIES,
    MODEL_PATHS,
    NET_ROWS,
    TRAINED_RULES,
    colour_sums,
    count_log_marginals,
    hypergeometric_voids,
    net_features,
    public_view,
    save_mlp,
    void_evidence,
)
from agents.model_card import commit_at, machine, table_card, utc, write_card
from uno_env import Engine, UnoRules
from uno_env.cards import NUM_CARD_TYPES, NUM_COLORS

LADDER = ("heuristic", "rlcard_rule", "greedy", "random")
# The recorded decisions, one row per (decision, other seat): each array's dtype, and what it holds.
SAMPLE_FIELDS = {
    "obs": (np.float32, "the observation of the seat to act"),
    "rows": (np.float16, "its last NET_ROWS history rows"),
    "counts": (np.float16, "the round's history counts"),
    "evidence": (np.float16, "the void evidence of its last EVIDENCE_ROWS rows about the other seat"),
    "label": (np.uint8, "the other seat's hand (the label)"),
    "me": (np.int64, "the agent to act, an index into the file's agents"),
    "other": (np.int64, "the other seat's agent"),
    "slot": (np.int8, "the other seat's relative slot"),
}


@dataclasses.dataclass
class Generate:
    """Record decisions of engine games with the other seat's hand as the label."""

    games: int = 8000
    """rounds to finish"""
    seed: int = 0
    agents: tuple[str, ...] = LADDER
    """agents.registry specs; every seating of them plays (one per game slot, cycled)"""
    num_players: Literal[2, 4] = 2
    """players per table (one network per table size)"""
    keep: float = 0.3
    """share of the decisions with two or more legal moves that are recorded"""
    batch_size: int = 256
    out: str = "runs/belief_net/train.npz"


@dataclasses.dataclass
class Train:
    """Fit the network and print its held-out calibration."""

    data: str = "runs/belief_net/train.npz"
    test: str = "runs/belief_net/test.npz"
    hidden: int = 256
    epochs: int = 6
    batch_size: int = 512
    learning_rate: float = 1e-3
    seed: int = 0
    exclude_agents: tuple[str, ...] = ()
    """train without the samples whose other seat is one of these agents (held out to judge generalisation)"""
    eps: float = 0.05
    """weight of the unconstrained deal in the public baseline (finite log-loss where public is wrong)"""
    proposals: int = 256
    """hands drawn from the public deal to estimate the deal weights' normaliser"""
    weight_samples: int = 4000
    """held-out decisions on which the deal weights are judged"""
    save: bool = False
    """write the weights to agents/pretrained/belief_net.npz and the card beside them"""
    out: str = "runs/belief_net/net.npz"
    """where the weights go without --save"""


def generate(args: Generate) -> dict[str, np.ndarray]:
    """The recorded decisions (module docs) as arrays."""
    if not 0 < args.keep <= 1:
        raise SystemExit(f"--keep must be in (0, 1], got {args.keep}")
    rules, n = UnoRules.preset("classic"), args.num_players
    agents = [make_agent(spec, rules) for spec in args.agents]
    seatings = np.array(list(itertools.product(range(len(agents)), repeat=n)), np.int64)
    B = args.batch_size
    seat_agent = seatings[np.arange(B) % len(seatings)]  # [B, n]
    engine = Engine(B, n, rules, seed=args.seed, autoreset=True, history=EVIDENCE_ROWS)
    rng = np.random.default_rng(args.seed)
    out: dict[str, list[np.ndarray]] = {k: [] for k in SAMPLE_FIELDS}
    finished = 0
    games = np.arange(B)
    while finished < args.games:
        obs, mask, cur = engine.observation, engine.legal_mask, engine.current_player.astype(np.int64)
        pick = (mask.sum(1) >= 2) & (rng.random(B) < args.keep)
        if pick.any():
            idx = np.flatnonzero(pick)
            rows, counts = engine.history(cur, games=pick)
            hands = engine.hand_counts(idx)
            for k in range(1, n):  # one sample per other seat, in relative slot k
                them = (cur[idx] + k) % n
                sample = {
                    "obs": obs[idx],
                    "rows": rows[idx, :NET_ROWS],
                    "counts": counts[idx, :n],
                    "evidence": void_evidence(rows[idx], k),
                    "label": hands[np.arange(idx.size), them],
                    "me": seat_agent[idx, cur[idx]],
                    "other": seat_agent[idx, them],
                    "slot": np.full(idx.size, k),
                }
                for key, (dtype, _) in SAMPLE_FIELDS.items():
                    out[key].append(np.array(sample[key], dtype))  # a copy: the engine's arrays move on
        actions = np.empty(B, np.int64)
        for a, agent in enumerate(agents):
            rows_a = np.flatnonzero(seat_agent[games, cur] == a)
            if rows_a.size:
                actions[rows_a] = agent.act(obs[rows_a], mask[rows_a], rng)
        r = engine.step(actions)
        finished += int((r.terminated | r.truncated).sum())
    data = {k: np.concatenate(v) for k, v in out.items()}
    data["agents"] = np.array(args.agents)
    data["num_players"] = np.array(n)
    data["generate_args"] = np.array(json.dumps(dataclasses.asdict(args)))
    return data


# --- the baseline and the losses -----------------------------------------------------------


def public_count_logp(unseen: np.ndarray, allowed: np.ndarray, sizes: np.ndarray, eps: float) -> np.ndarray:
    """log P(k copies of type t) for k = 0..MAX_COPIES under the public deal mixed with ``eps``
    of the unconstrained one (hypergeometric marginals): float [N, 57, MAX_COPIES + 1]."""
    p = (1 - eps) * np.exp(count_log_marginals(allowed, sizes)) + eps * np.exp(count_log_marginals(unseen, sizes))
    with np.errstate(divide="ignore"):
        return np.log(p)


def public_void_p(unseen: np.ndarray, allowed: np.ndarray, sizes: np.ndarray, eps: float) -> np.ndarray:
    """P(colour void) [N, 4] under the same mixture."""
    return (1 - eps) * hypergeometric_voids(allowed, sizes) + eps * hypergeometric_voids(unseen, sizes)


def bernoulli_nll(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return -(y * np.log(p) + (1 - y) * np.log1p(-p))


def count_mask(unseen: np.ndarray) -> np.ndarray:
    """Bool [N, 57, MAX_COPIES + 1]: the counts a hand can hold (at most the unseen copies)."""
    return np.arange(MAX_COPIES + 1)[None, None, :] <= unseen[:, :, None]


def train(args: Train) -> None:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    t0, cpu0 = time.time(), time.process_time()

    def load(path: str, exclude: tuple[str, ...] = ()):
        with np.load(path) as f:
            d = {k: f[k] for k in f.files}
        names = [str(a) for a in d["agents"]]
        keep = ~np.isin(np.array(names)[d["other"]], exclude) if exclude else np.ones(d["label"].shape[0], bool)
        idx = np.flatnonzero(keep)

        # Built in slices into float16: the features of a million decisions do not fit twice in float32.
        def features(j: np.ndarray) -> np.ndarray:
            return net_features(d["obs"][j], d["rows"][j], d["counts"][j], d["evidence"][j], d["slot"][j])

        x = np.empty((idx.size, features(idx[:1]).shape[1]), np.float16)
        for s in range(0, idx.size, 50_000):
            j = idx[s : s + 50_000]
            x[s : s + j.size] = features(j)
        unseen, allowed, sizes = public_view(d["obs"][keep], d["slot"][keep])
        other = np.array(names)[d["other"][keep]]
        info = {"num_players": int(d["num_players"]), "generate": json.loads(str(d["generate_args"]))}
        return x, d["label"][keep].astype(np.int64), unseen, allowed, sizes, other, info

    x, y, unseen, _, _, _, data_info = load(args.data, args.exclude_agents)
    xt, yt, unseen_t, allowed_t, sizes_t, other_t, test_info = load(args.test)
    if data_info["num_players"] != test_info["num_players"]:
        raise SystemExit(f"--data and --test are of {data_info['num_players']} and {test_info['num_players']} players")
    sample = x[np.random.default_rng(args.seed).choice(len(x), size=min(len(x), 100_000), replace=False)]
    mean = sample.astype(np.float32).mean(0)
    scale = 1.0 / np.maximum(sample.astype(np.float32).std(0), 1e-2)
    n_in = x.shape[1]
    n_out = NUM_COLORS + NUM_CARD_TYPES * (MAX_COPIES + 1)
    net = torch.nn.Sequential(
        torch.nn.Linear(n_in, args.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, n_out),
    )
    opt = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    X = torch.from_numpy(x)
    mean_t, scale_t = torch.from_numpy(mean), torch.from_numpy(scale)
    held = np.random.default_rng(args.seed + 1).choice(len(xt), size=min(len(xt), 5000), replace=False)
    Xh = (torch.from_numpy(xt[held]).float() - mean_t) * scale_t
    vh = torch.from_numpy((colour_sums(yt[held]) == 0).astype(np.float32))
    ch, mh = torch.from_numpy(np.minimum(yt[held], MAX_COPIES)), torch.from_numpy(count_mask(unseen_t[held]))
    void_y = torch.from_numpy((colour_sums(y) == 0).astype(np.float32))
    count_y = torch.from_numpy(np.minimum(y, MAX_COPIES))
    cmask = torch.from_numpy(count_mask(unseen))
    steps = args.epochs * (len(X) // args.batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1))

    def losses(out, vy, cy, cm):
        void = torch.nn.functional.binary_cross_entropy_with_logits(out[:, :NUM_COLORS], vy, reduction="none").sum(1)
        logits = out[:, NUM_COLORS:].reshape(-1, NUM_CARD_TYPES, MAX_COPIES + 1).masked_fill(~cm, -1e9)
        count = torch.nn.functional.cross_entropy(logits.transpose(1, 2), cy, reduction="none").sum(1)
        return void, count

    for epoch in range(args.epochs):
        perm = torch.randperm(len(X))
        tot = 0.0
        for s in range(0, len(X) - args.batch_size + 1, args.batch_size):
            b = perm[s : s + args.batch_size]
            void, count = losses(net((X[b].float() - mean_t) * scale_t), void_y[b], count_y[b], cmask[b])
            loss = (void + count).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += float(loss.detach()) * len(b)
        with torch.no_grad():
            hv, hc = losses(net(Xh), vh, ch, mh)
        print(
            f"epoch {epoch + 1}: train loss {tot / len(X):.4f}, held-out {float((hv + hc).mean()):.4f} nats per decision",
            flush=True,
        )

    layers = [(m.weight.detach().numpy().T, m.bias.detach().numpy()) for m in net if isinstance(m, torch.nn.Linear)]
    num_players = data_info["num_players"]
    path = MODEL_PATHS[num_players] if args.save else Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_mlp(path, mean, scale, layers)
    train_minutes, cpu_minutes = (time.time() - t0) / 60, (time.process_time() - cpu0) / 60
    report = evaluate(path, num_players, xt, yt, unseen_t, allowed_t, sizes_t, other_t, args)
    report.update(
        num_players=num_players,
        data=data_info["generate"],
        test_data=test_info["generate"],
        samples=int(len(X)),
        test_samples=int(len(xt)),
        train_minutes=round(train_minutes, 2),
        train_cpu_minutes=round(cpu_minutes, 2),
    )
    write_card(path, net_card(path, args, report))


def evaluate(path, num_players, x, y, unseen, allowed, sizes, other, args: Train) -> dict:
    """Held-out log-loss against public, reliability of the voids, the deal weights' gain: printed, and returned."""
    from agents.beliefs.net import BeliefNet, NetBelief

    net = BeliefNet(path)
    vl, cl = net(x)
    cm = count_mask(unseen)
    cl = np.where(cm, cl, -np.inf)
    clogp = cl - np.logaddexp.reduce(cl, axis=-1, keepdims=True)
    yk = np.minimum(y, MAX_COPIES)
    net_count = -np.take_along_axis(clogp, yk[:, :, None], -1)[..., 0].sum(1)
    plogp = public_count_logp(unseen, allowed, sizes, args.eps)
    pub_count = -np.take_along_axis(plogp, yk[:, :, None], -1)[..., 0].sum(1)
    void = (colour_sums(y) == 0).astype(np.float64)
    p_net = 1 / (1 + np.exp(-vl.astype(np.float64)))
    p_pub = public_void_p(unseen, allowed, sizes, args.eps)
    net_void, pub_void = bernoulli_nll(p_net, void).sum(1), bernoulli_nll(p_pub, void).sum(1)

    print("\nHeld-out log-loss, nats per hidden hand (lower is better), by the other seat's agent:\n")
    print("| other seat | decisions | voids: public | voids: net | gain | copies per type: public | net | gain |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for name in [*sorted(set(other)), "all"]:
        s = np.ones(len(y), bool) if name == "all" else other == name
        r = [pub_void[s].mean(), net_void[s].mean(), pub_count[s].mean(), net_count[s].mean()]
        rows.append({"other": name, "decisions": int(s.sum()), "void_public": r[0], "void_net": r[1]})
        rows[-1].update(count_public=r[2], count_net=r[3])
        print(
            f"| {name} | {s.sum()} | {r[0]:.3f} | {r[1]:.3f} | {r[0] - r[1]:+.3f} | {r[2]:.3f} | {r[3]:.3f} | "
            f"{r[2] - r[3]:+.3f} |"
        )
    print("\nReliability of P(colour void), all (seat, colour) pairs of the held-out decisions:\n")
    print(
        "| predicted | pairs (net) | voids observed (net) | mean predicted (net) | pairs (public) | observed (public) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    edges = np.array([0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0001])
    reliability = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sn, sp = (p_net >= lo) & (p_net < hi), (p_pub >= lo) & (p_pub < hi)
        fn = void[sn].mean() if sn.any() else float("nan")
        fp = void[sp].mean() if sp.any() else float("nan")
        mn = p_net[sn].mean() if sn.any() else float("nan")
        reliability.append(
            [float(lo), float(min(hi, 1)), int(sn.sum()), float(fn), float(mn), int(sp.sum()), float(fp)]
        )
        print(f"| {lo:.2f}–{min(hi, 1):.2f} | {sn.sum()} | {fn:.3f} | {mn:.3f} | {sp.sum()} | {fp:.3f} |")
    found = (p_net > 0.5) & (void > 0)
    print(
        f"\nVoids: {void.mean():.1%} of (seat, colour) pairs; net P > 0.5 finds {found.sum() / max(void.sum(), 1):.1%} "
        f"of them at {found.sum() / max((p_net > 0.5).sum(), 1):.1%} precision"
    )
    gains = weight_gains(NetBelief(models={num_players: path}), num_players, x, y, allowed, sizes, args)
    return {"by_agent": rows, "reliability": reliability, "weight_gain": gains}


def weight_gains(belief, num_players, x, y, allowed, sizes, args: Train) -> dict:
    """The gain in nats per hand of the deal weights over public: log w(true) − log mean w(h_m),
    h_m drawn from the public deal (only decisions whose true hand respects public's exclusions,
    where both are finite), for each weighting mode."""
    rng = np.random.default_rng(args.seed)
    ok = np.flatnonzero((y <= allowed).all(1))
    pick = rng.choice(ok, size=min(args.weight_samples, ok.size), replace=False)
    out = {}
    for mode in ("voids", "types", "both"):
        belief.mode = mode
        g = []
        for j in pick:
            theta_v, theta_t = belief.tilts(x[j : j + 1], allowed[j : j + 1], sizes[j : j + 1], num_players)
            pool = np.repeat(np.arange(NUM_CARD_TYPES), allowed[j])
            hands = np.zeros((args.proposals, NUM_CARD_TYPES), np.int64)
            for m in range(args.proposals):
                np.add.at(hands[m], rng.choice(pool, size=sizes[j], replace=False), 1)
            lw = belief.hand_log_weights(hands, theta_v[0], theta_t[0])
            lt = belief.hand_log_weights(y[j : j + 1], theta_v[0], theta_t[0])[0]
            g.append(lt - (np.logaddexp.reduce(lw) - np.log(lw.size)))
        out[mode] = float(np.mean(g))
        print(f"deal weights ({mode}): {np.mean(g):+.3f} nats per hand over public ({len(g)} held-out decisions)")
    return out


def net_card(path: Path, args: Train, report: dict) -> dict:
    """The card of the network at ``path`` (``agents.model_card``): its table, the command and
    arguments that trained it (``python -m training.fit_belief_net train``, ``--save`` or
    ``--out``, and the other flags), where and when, and its held-out ``report``."""
    flags = []
    for k, v in dataclasses.asdict(args).items():
        if k in ("save", "out") or isinstance(v, bool) or v is None or v == ():
            continue
        flags.append(f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, tuple) else v}")
    n = report["num_players"]
    return table_card(
        path.stem,
        TRAINED_RULES,
        n,
        " ".join(["python -m training.fit_belief_net train", "--save" if args.save else f"--out {args.out}", *flags]),
        rules_name="classic",
        history=EVIDENCE_ROWS,
        model_file=path.name,
        model_bytes=path.stat().st_size,
        what=f"P(colour void) and copies per card type of another seat's hand, {n} players, classic (agents.beliefs.net)",
        train_args=dataclasses.asdict(args),
        commit=commit_at(time.time()),
        finished=utc(),
        machine=machine(),
        evaluation=report,
    )


def main() -> None:
    args = tyro.extras.subcommand_cli_from_dict({"generate": Generate, "train": Train})
    if isinstance(args, Generate):
        t0 = time.time()
        data = generate(args)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.out, **data)  # type: ignore[arg-type]  # numpy's stub reads a key as allow_pickle
        print(f"{data['label'].shape[0]} decisions from {args.games} rounds in {time.time() - t0:.0f} s -> {args.out}")
    else:
        train(args)


if __name__ == "__main__":
    main()
