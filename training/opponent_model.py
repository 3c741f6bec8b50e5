"""Train the opponent model (``agents.opponent_model``) by behaviour cloning the ladder's agents.

    python -m training.opponent_model [--positions 60000] [--agents heuristic rlcard_rule greedy]
        [--exclude heuristic] [--save]

For each of ``--agents``, ``--positions`` of its decisions with a choice are labelled
(``training.expert.label_positions``: the agent is the teacher, in games against each of
``--opponents`` in turn); a share ``--test-share`` of each agent's positions is held out. An MLP
(D → hidden → hidden → 116) is fitted on CPU (one torch thread) by the cross-entropy of the
action taken under the softmax over the legal actions, and the held-out agreement (its most
likely action is the agent's) and log-loss per agent are printed. ``--exclude`` leaves agents
out of the training positions but keeps them in the held-out report: how the model does on an
agent it never saw. With ``--save`` it writes ``agents/pretrained/opponent_model.npz`` and its
card; otherwise ``--out``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import tyro

from agents.mlp import save_mlp
from agents.opponent_model import MODEL_PATH, OpponentModel
from training.mlp_card import command_line, write_mlp_card
from uno_env import NUM_ACTIONS, UnoRules


@dataclasses.dataclass
class Args:
    positions: int = 60_000
    """decisions with a choice labelled per agent"""
    agents: tuple[str, ...] = ("heuristic", "rlcard_rule", "greedy")
    """the agents.registry specs whose decisions are cloned"""
    opponents: tuple[str, ...] = ("heuristic", "rlcard_rule", "greedy", "random")
    """the specs they play against, in turn"""
    exclude: tuple[str, ...] = ()
    """agents kept out of training (still in the held-out report)"""
    test_share: float = 0.1
    """share of each agent's positions held out"""
    hidden: int = 256
    epochs: int = 4
    batch_size: int = 512
    learning_rate: float = 1e-3
    seed: int = 0
    out: str = "runs/opponent_model/opponent_model.npz"
    """where the weights go without --save"""
    save: bool = False
    """write the shipped weights (agents/pretrained/opponent_model.npz) and their card"""


def main(args: Args) -> dict:
    import torch

    from training.expert import label_positions

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    t0, cpu0 = time.time(), time.process_time()
    rules = UnoRules()
    rng = np.random.default_rng(args.seed)
    train_x, train_m, train_a, tests = [], [], [], {}
    for k, agent in enumerate(args.agents):
        data = label_positions(agent, list(args.opponents), rules, 2, args.positions, seed=args.seed * 1000 + k * 97)
        obs, mask, action = np.asarray(data.obs, np.float32), data.mask.astype(bool), data.action
        order = rng.permutation(len(action))
        n_test = int(round(args.test_share * len(action)))
        tests[agent] = (obs[order[:n_test]], mask[order[:n_test]], action[order[:n_test]])
        if agent not in args.exclude:
            keep = order[n_test:]
            train_x.append(obs[keep])
            train_m.append(mask[keep])
            train_a.append(action[keep])
        print(f"{agent}: {len(action)} positions labelled", flush=True)
    x, m, a = np.concatenate(train_x), np.concatenate(train_m), np.concatenate(train_a)
    mean = x.mean(0)
    scale = 1.0 / np.maximum(x.std(0), 1e-2)
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], args.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, NUM_ACTIONS),
    )
    opt = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    steps = args.epochs * (len(a) // args.batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1))
    X = (torch.from_numpy(x) - torch.from_numpy(mean)) * torch.from_numpy(scale)
    M, A = torch.from_numpy(m), torch.from_numpy(a)
    for epoch in range(args.epochs):
        perm = torch.randperm(len(A))
        total = 0.0
        for s in range(0, len(A) - args.batch_size + 1, args.batch_size):
            b = perm[s : s + args.batch_size]
            logits = net(X[b]).masked_fill(~M[b], -1e9)
            loss = torch.nn.functional.cross_entropy(logits, A[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(b)
        print(f"epoch {epoch + 1}: train log-loss {total / len(A):.4f} nats per decision", flush=True)
    layers = [
        (lin.weight.detach().numpy().T, lin.bias.detach().numpy()) for lin in net if isinstance(lin, torch.nn.Linear)
    ]
    path = MODEL_PATH if args.save else Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_mlp(path, mean, scale, layers)
    report = evaluate(OpponentModel(path), tests)
    report.update(
        train_positions=int(len(a)),
        train_minutes=round((time.time() - t0) / 60, 2),
        train_cpu_minutes=round((time.process_time() - cpu0) / 60, 2),
    )
    print(json.dumps(report, indent=1))
    if args.save:
        write_card(path, args, report)
    return report


def evaluate(model: OpponentModel, tests: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict:
    """Held-out agreement and log-loss per agent, against the uniform choice among the legal moves."""
    out: dict[str, dict[str, float]] = {}
    for agent, (obs, mask, action) in tests.items():
        z = np.where(mask, model.logits(obs).astype(np.float64), -np.inf)
        logp = z - np.logaddexp.reduce(z, axis=1, keepdims=True)
        out[agent] = {
            "positions": int(len(action)),
            "agreement": float((z.argmax(1) == action).mean()),
            "log_loss": float(-logp[np.arange(len(action)), action].mean()),
            "uniform_log_loss": float(np.log(mask.sum(1)).mean()),
        }
    return {"held_out": out}


def write_card(path: Path, args: Args, report: dict) -> None:
    command = command_line("training.opponent_model", args)
    what = "P(action | observation) of a seat of the ladder, 2 players, classic (agents.opponent_model)"
    write_mlp_card(path, "opponent_model", what, command, args, report)


if __name__ == "__main__":
    main(tyro.cli(Args))
