"""A CleanRL-style single-file PPO with action masking on ``UnoVectorEnv`` (every game in one batched engine).

    pip install torch==2.13.0 && pip install -e .
    python examples/cleanrl_masked_ppo.py --budget 200000

Everything is in this file, in CleanRL's order: the env, the agent (an MLP actor and critic),
the rollout, generalised advantage estimation, the clipped PPO update. Masking is one line: the
logits of illegal actions are set to -1e8 before the categorical distribution, in rollouts and
in the update alike (the mask is stored with each step). ``UnoVectorEnv(autoreset_mode="same_step")`` resets in the
same step (gymnasium's ``SAME_STEP`` mode), so ``next_done`` marks the first step of a new
round and the stored value of a finished round is never bootstrapped across it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

from uno_env import UnoVectorEnv


class Agent(nn.Module):
    """Actor and critic MLPs over the flat observation; the actor's logits are masked."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            nn.Linear(obs_size, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 1)
        )
        self.actor = nn.Sequential(
            nn.Linear(obs_size, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, num_actions)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """The critic's value of each observation."""
        return self.critic(x).squeeze(-1)

    def act(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        """(action, log-probability, entropy, value), sampling only legal actions."""
        logits = torch.where(mask, self.actor(x), torch.tensor(-1e8))  # the masking
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)


def main() -> None:
    """Train for ``--budget`` learner steps; print each update's mean reward per finished round."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=200_000, help="learner steps in total (>= num-envs * num-steps)")
    p.add_argument("--num-envs", type=int, default=64, help="games in the batch")
    p.add_argument("--num-steps", type=int, default=64, help="steps per game per rollout")
    p.add_argument("--num-players", type=int, default=2, help="players at the table, 2-10 (random opponents)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    batch = args.num_envs * args.num_steps
    if args.num_envs < 1 or args.num_steps < 1 or args.budget < batch:
        p.error(
            f"--num-envs and --num-steps must be >= 1 and --budget >= num-envs * num-steps ({batch}), got "
            f"{args.num_envs}, {args.num_steps}, {args.budget}"
        )
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    gamma, lam, clip, epochs, minibatches, lr = 0.99, 0.95, 0.2, 4, 4, 2.5e-4

    # SAME_STEP: an ended game's next observation is already the new round's, as the GAE loop expects.
    envs = UnoVectorEnv(num_envs=args.num_envs, num_players=args.num_players, autoreset_mode="same_step")
    obs_size, num_actions = envs.single_observation_space.shape[0], int(envs.single_action_space.n)
    agent = Agent(obs_size, num_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, obs_size))
    masks = torch.zeros((args.num_steps, args.num_envs, num_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs, rewards, dones, values, ends = (torch.zeros((args.num_steps, args.num_envs)) for _ in range(5))

    next_obs, _ = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.as_tensor(next_obs), torch.as_tensor(envs.action_masks())
    next_done = torch.zeros(args.num_envs)
    start, steps = time.time(), 0
    for update in range(1, args.budget // batch + 1):
        for t in range(args.num_steps):
            obs[t], masks[t], dones[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs, next_mask)
            actions[t], logprobs[t], values[t] = action, logprob, value
            o, r, term, trunc, _ = envs.step(action.numpy())
            rewards[t] = torch.as_tensor(r)
            next_obs, next_mask = torch.as_tensor(o), torch.as_tensor(envs.action_masks())
            next_done = ends[t] = torch.as_tensor(np.logical_or(term, trunc), dtype=torch.float32)
        steps += batch

        with torch.no_grad():  # generalised advantage estimation
            advantages = torch.zeros_like(rewards)
            last, next_value = 0.0, agent.value(next_obs)
            for t in reversed(range(args.num_steps)):
                not_done = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + gamma * following * not_done - values[t]
                advantages[t] = last = delta + gamma * lam * not_done * last
            returns = advantages + values

        b = {
            "obs": obs.reshape(batch, -1),
            "masks": masks.reshape(batch, -1),
            "actions": actions.reshape(-1),
            "logprobs": logprobs.reshape(-1),
            "adv": advantages.reshape(-1),
            "ret": returns.reshape(-1),
        }
        size = batch // minibatches
        for _ in range(epochs):
            for idx in torch.randperm(batch).split(size):
                _, newlog, entropy, newvalue = agent.act(b["obs"][idx], b["masks"][idx], b["actions"][idx])
                ratio = (newlog - b["logprobs"][idx]).exp()
                adv = (b["adv"][idx] - b["adv"][idx].mean()) / (b["adv"][idx].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                v_loss = 0.5 * ((newvalue - b["ret"][idx]) ** 2).mean()
                loss = pg_loss + 0.5 * v_loss - 0.01 * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()

        ended = ends > 0  # the steps that ended a round: +1 won, -1 lost, 0 truncated
        mean = rewards[ended].mean().item() if ended.any() else float("nan")
        print(
            f"update {update}: {steps} steps, {int(ended.sum())} rounds ended, mean reward {mean:+.2f}, "
            f"{steps / (time.time() - start):,.0f} steps/s"
        )
    print(f"done: trained {steps} learner steps")


if __name__ == "__main__":
    main()
