"""TorchRL on ``uno_env.env()``: TorchRL 0.14.1's ``PettingZooWrapper(use_mask=True)`` and a masked policy.

    pip install torch==2.13.0 && pip install -e ".[examples]" torchrl==0.14.1
    python examples/torchrl_pettingzoo.py --episodes 300

TorchRL wraps the PettingZoo AEC env unchanged (``torchrl.envs.libs.pettingzoo.PettingZooWrapper``,
TorchRL 0.14.1): each seat is a group (``player_0``, ``player_1``...) with its ``observation``,
``action_mask`` (True for legal actions) and ``mask`` (True on the steps where that seat is the
one to act; the other seats' actions are ignored). The policy is one MLP shared by every seat (self-play), wrapped
in TorchRL's ``ProbabilisticActor`` with ``MaskedCategorical``: illegal actions get probability
0. ``env.rollout`` plays a whole round; a REINFORCE update on each seat's decisions follows
(the return of a decision: its seat's final reward, +1/-1, 0 when truncated). Evaluation: seat 0's greedy
policy against a random legal seat.

Truncation: a round that reaches ``rules.max_turns`` actions is truncated (reward 0 for every
seat, ``truncated`` in the tensordict) and ``env.rollout`` stops there; ``--max-turns`` caps the
rounds of an untrained policy.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor

import uno_env


@dataclass
class Args:
    episodes: int = 300  # rounds played and learned from (self-play)
    num_players: int = 2
    max_turns: int = 300  # actions per round before truncation
    eval_rounds: int = 50  # rounds of seat 0 (greedy) against a random seat
    lr: float = 1e-3
    seed: int = 0


def parse_args() -> Args:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, value in vars(Args()).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(p.parse_args()))
    if args.episodes < 1 or args.eval_rounds < 1 or args.max_turns < 1:
        p.error("--episodes, --eval-rounds and --max-turns must be at least 1")
    if not 2 <= args.num_players <= 10:
        p.error(f"--num-players must be in 2..10, got {args.num_players}")
    return args


class Logits(nn.Module):
    """Observation -> logits; a seat with no legal action (not its turn) gets a harmless mask."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_size, 128), nn.Tanh(), nn.Linear(128, num_actions))

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # MaskedCategorical needs one allowed action per row; a waiting seat's action is ignored.
        return self.net(obs), torch.where(mask.any(-1, keepdim=True), mask, torch.ones_like(mask))


def actor_for(group: str, logits: Logits) -> ProbabilisticActor:
    """TorchRL's masked categorical actor reading one seat's keys of the tensordict."""
    module = TensorDictModule(
        logits,
        in_keys=[(group, "observation", "observation"), (group, "action_mask")],
        out_keys=[(group, "logits"), (group, "mask_ok")],
    )
    return ProbabilisticActor(
        module,
        in_keys={"logits": (group, "logits"), "mask": (group, "mask_ok")},
        out_keys=[(group, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(group, "action_log_prob"),
    )


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rules = {"max_turns": args.max_turns}
    env = PettingZooWrapper(env=uno_env.env(num_players=args.num_players, rules=rules), use_mask=True, seed=args.seed)
    groups = list(env.group_map)
    obs_size = env.observation_spec[groups[0], "observation", "observation"].shape[-1]
    logits = Logits(obs_size, uno_env.NUM_ACTIONS)
    actors = [actor_for(g, logits) for g in groups]

    def policy(td):
        for actor in actors:
            actor(td)
        return td

    optimizer = torch.optim.Adam(logits.parameters(), lr=args.lr)
    start, decisions = time.time(), 0
    for episode in range(1, args.episodes + 1):
        rollout = env.rollout(max_steps=args.max_turns + 1, policy=policy, break_when_any_done=True)
        losses = []
        for g in groups:
            acted = rollout[g, "mask"].reshape(-1)  # the steps where this seat was the one to act
            ret = rollout["next", g, "reward"].sum()  # the seat's reward for the round
            losses.append(-(ret * rollout[g, "action_log_prob"].reshape(-1)[acted]).sum())
            decisions += int(acted.sum())
        loss = torch.stack(losses).sum() / max(1, len(rollout))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if episode % max(1, args.episodes // 5) == 0:
            print(f"episode {episode}: {decisions} decisions, {time.time() - start:.0f} s", flush=True)

    # Evaluation in a plain PettingZoo loop: seat 0 greedy, the others random legal.
    game, rng, wins = uno_env.env(num_players=args.num_players, rules=rules), np.random.default_rng(args.seed), 0
    for r in range(args.eval_rounds):
        game.reset(seed=10_000 + r)
        for agent in game.agent_iter():
            obs, reward, term, trunc, _ = game.last()
            if term or trunc:
                wins += agent == "player_0" and reward > 0
                game.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            if agent == "player_0":
                with torch.no_grad():
                    scores = logits.net(torch.as_tensor(obs["observation"]))[legal]
                game.step(int(legal[int(scores.argmax())]))
            else:
                game.step(int(rng.choice(legal)))
    print(f"evaluation: seat 0 won {wins}/{args.eval_rounds} rounds against random seats")
    print(f"done: trained {args.episodes} episodes ({decisions} decisions) in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
