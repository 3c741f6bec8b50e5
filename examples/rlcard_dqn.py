"""RLCard's DQN on ``uno-env``: RLCard's own training loop (rlcard 1.2.0, ``examples/run_rl.py``) on uno_env.

    pip install torch==2.13.0 && pip install -e ".[examples]" rlcard==1.2.0
    python examples/rlcard_dqn.py --episodes 5000

``import uno_env.rlcard_env`` registers ``uno-env`` in RLCard's registry; from there on this is
RLCard's ``run_rl.py`` with ``"uno"`` replaced by ``"uno-env"``: ``rlcard.make``, ``env.run``,
``rlcard.utils.reorganize``, ``DQNAgent.feed`` and ``tournament`` are RLCard's code, unchanged.
The differences from RLCard's own UNO (``rlcard.make("uno")``): the rules are ``uno_env``'s (any
rule set, ``--rules``; 2 to 10 players, ``--num-players``), the actions are uno_env's 116 ids (a wild
and its colour are two decisions), an illegal action raises instead of being replaced at random,
and payoffs are right for more than two players (``uno_env/rlcard_env.py``). ``--rules rlcard``
plays RLCard's own UNO rules (the ``rlcard`` preset, docs/rules.md), still with uno_env's
action ids and observation.

Truncation: a round that reaches ``rules.max_turns`` actions ends with payoff 0 for everybody
(RLCard's loop sees ``is_over()``). Untrained agents make long rounds; ``--max-turns`` caps them
(``turn_limit_rule="fewest_cards_wins"`` would make the cap a win for the fewest cards instead).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import rlcard
import torch
from rlcard.agents import DQNAgent
from rlcard.utils import reorganize, tournament

import uno_env.rlcard_env


@dataclass
class Args:
    episodes: int = 5000  # games of RLCard's env.run used for training
    num_players: int = 2
    rules: str = "classic"  # a preset name or JSON options (uno_env.parse_rules)
    max_turns: int = 500  # actions per round before truncation
    eval_every: int = 1000  # episodes between evaluations
    eval_games: int = 200  # games per evaluation (RLCard's tournament)
    seed: int = 0


class RandomLegal:
    """RLCard's agent protocol (``step``/``eval_step``/``use_raw``) with its own generator."""

    use_raw = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def step(self, state):
        return int(self.rng.choice(list(state["legal_actions"])))

    def eval_step(self, state):
        return self.step(state), {}


def parse_args() -> Args:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, value in vars(Args()).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(p.parse_args()))
    if args.episodes < 1 or args.eval_every < 1 or args.eval_games < 1 or args.max_turns < 1:
        p.error("--episodes, --eval-every, --eval-games and --max-turns must be at least 1")
    if not 2 <= args.num_players <= 10:
        p.error(f"--num-players must be in 2..10, got {args.num_players}")
    return args


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rules = uno_env.parse_rules(args.rules).replace(max_turns=args.max_turns)
    config = {"seed": args.seed, "game_num_players": args.num_players, "game_rules": rules}
    env, eval_env = (
        rlcard.make("uno-env", config=config),
        rlcard.make("uno-env", config={**config, "seed": args.seed + 1}),
    )

    agent = DQNAgent(
        num_actions=env.num_actions,
        state_shape=env.state_shape[0],
        mlp_layers=[128, 128],
        replay_memory_init_size=min(1000, 20 * args.episodes),
        device=torch.device("cpu"),
    )
    opponents = [RandomLegal(args.seed + s) for s in range(1, args.num_players)]
    env.set_agents([agent, *opponents])
    eval_env.set_agents([agent, *opponents])

    start, transitions = time.time(), 0
    for episode in range(1, args.episodes + 1):
        trajectories, payoffs = env.run(is_training=True)
        for ts in reorganize(trajectories, payoffs)[0]:  # seat 0's transitions
            agent.feed(ts)
            transitions += 1
        if episode % args.eval_every == 0 or episode == args.episodes:
            mean = tournament(eval_env, args.eval_games)[0]
            print(
                f"episode {episode}: mean payoff of the DQN seat over {args.eval_games} games vs random: {mean:+.3f} "
                f"({transitions} transitions, {time.time() - start:.0f} s)",
                flush=True,
            )
    print(f"done: trained {args.episodes} episodes ({transitions} transitions) in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
