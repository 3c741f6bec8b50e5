"""Tianshou's multi-agent API on ``uno_env.env()``: a masked DQN learner against Tianshou's random policy.

    python -m venv /tmp/uno_env_tianshou && . /tmp/uno_env_tianshou/bin/activate
    pip install torch==2.13.0 && pip install tianshou==2.0.1 && pip install -e .
    python examples/tianshou_multiagent.py --budget 20000

Its own virtualenv because tianshou 2.0.1 requires ``pandas<3`` and ``virtualenv<21`` (and so an
older ``filelock``), which would downgrade this project's main environment; ``bash .ci/install``
builds the venv (``.venvs/tianshou``) and ``tests/clients/test_examples.py`` runs this script with it. Tested with tianshou 2.0.1.

The pieces are Tianshou's own, as in its tic-tac-toe test: ``PettingZooEnv`` wraps
``uno_env.env()`` unchanged and turns each observation into ``{agent_id, obs, mask}``;
``MultiAgentOffPolicyAlgorithm`` gives each agent its algorithm: the learner (``DQN`` with a
``DiscreteQLearningPolicy``, whose greedy and epsilon-random actions both read ``obs.mask``, so
no illegal action is ever played) at seat ``--seat``, ``MARLRandomDiscreteMaskedOffPolicyAlgorithm``
(uniformly random legal moves) at every other seat. Training runs Tianshou's
``OffPolicyTrainer`` for ``--budget`` env steps; evaluation then plays ``--eval-rounds`` rounds
with the learner at each seat in turn and prints its win rate with a 95% Wilson interval. It
shows the wiring, not a strong agent: after the default 20000 env steps (302 rounds) the
learner won 196 of 400 rounds against the random player (0.49, 95% CI 0.44-0.54;
``--eval-rounds 200``, 2026-11-25, a shared 2-core machine), no better than random.

The default ``--rules`` turn ``allow_voluntary_draw`` off (docs/rules.md R4, the ES-official
reading: DRAW only when nothing can be played). Under ``classic``, where DRAW is always legal,
a round between uniformly random players lasted 815 to 2263 env steps (4 rounds measured);
20000 env steps held 10 training rounds and the greedy DQN then won none of 40 evaluation
rounds (after 6000 steps it drew or passed on 44% of its moves and 2 of 6 rounds reached
``max_turns``). With the default, a round takes tens of steps: 6000 env steps held 98 rounds.

Not ours (tianshou 2.0.1, read in its source):

* The multi-agent algorithms store one transition per env step, credited to the agent that
  acted: a learner's ``obs_next`` is the observation of whoever acts next (usually an
  opponent), and a reward that arrives on an opponent's move (the learner loses) reaches the
  learner only through the n-step return, which sums the learner's column of the reward vector
  over the next steps whoever takes them. Hence ``n_step_return_horizon`` above 1 here.
* ``tianshou.env.PettingZooEnv.reset`` calls ``env.last(self)``: the wrapper itself is passed as
  ``observe`` (truthy, so harmless).
* PettingZoo's Tianshou tutorials (pettingzoo 1.27 docs) are written for tianshou 0.5
  (``BasePolicy``, ``MultiAgentPolicyManager``, ``offpolicy_trainer``), which 2.x renamed or
  removed; this script is the 2.0.1 equivalent.
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import uno_env
from arena.ratings import wilson_interval

NUM_ENVS = 4  # training envs stepped together; --budget must reach one step in each
RULES = '{"allow_voluntary_draw": false}'  # rounds of tens of steps, not thousands (docstring)


def make_env(players: int, rules: str) -> PettingZooEnv:
    """``uno_env.env()`` under Tianshou's own wrapper, nothing between them."""
    return PettingZooEnv(uno_env.env(num_players=players, rules=rules))


def make_learner(env: PettingZooEnv) -> DQN:
    """A masked DQN for one seat (Tianshou's tic-tac-toe settings, smaller)."""
    net = Net(
        state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n, hidden_sizes=[128, 128]
    )
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0)
    return DQN(
        policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.95, n_step_return_horizon=3, target_update_freq=320
    )


def table(learner: DQN, seat: int, env: PettingZooEnv) -> MultiAgentOffPolicyAlgorithm:
    """The learner at ``seat``, Tianshou's random masked policy at every other seat."""
    algorithms = [
        learner if s == seat else MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
        for s in range(len(env.agents))
    ]
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env)


def evaluate(learner: DQN, args: argparse.Namespace) -> tuple[int, int]:
    """Wins and rounds with the learner greedy at each seat in turn, ``--eval-rounds`` rounds a seat."""
    wins = 0
    for seat in range(args.num_players):
        envs = DummyVectorEnv([lambda: make_env(args.num_players, args.rules)])
        envs.seed(args.seed + 1000 * (seat + 1))  # fresh deals, none of them seen in training
        collector = Collector[CollectStats](table(learner, seat, make_env(args.num_players, args.rules)), envs)
        stats = collector.collect(n_episode=args.eval_rounds, reset_before_collect=True)
        wins += int((stats.returns[:, seat] > 0).sum())  # R8: +1 to the winner, -1 to the others
        envs.close()
    return wins, args.eval_rounds * args.num_players


def main() -> None:
    """Train for ``--budget`` env steps, then print the learner's record with seats rotated."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--budget", type=int, default=20_000, help=f"env steps to train for, every seat's (>= {NUM_ENVS})"
    )
    parser.add_argument("--num-players", type=int, default=2, help="players at the table, 2-10")
    parser.add_argument("--rules", default=RULES, help="a preset or JSON options (uno_env.parse_rules)")
    parser.add_argument("--seat", type=int, default=0, help="the learner's seat in training, 0..num-players - 1")
    parser.add_argument("--eval-rounds", type=int, default=20, help="rounds played after training at each seat (>= 1)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.budget < NUM_ENVS or args.eval_rounds < 1:
        parser.error(f"--budget must be >= {NUM_ENVS} and --eval-rounds >= 1, got {args.budget} and {args.eval_rounds}")
    # Tianshou's episode statistics flatten the multi-agent returns (one column per seat) with a
    # warning at every collect; evaluate() reads the learner's column itself.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    try:
        env = make_env(args.num_players, args.rules)
    except ValueError as err:  # a bad --num-players or --rules: uno_env's message says what is allowed
        parser.error(str(err))
    if not 0 <= args.seat < args.num_players:
        parser.error(f"--seat must be in 0..{args.num_players - 1} (--num-players {args.num_players}), got {args.seat}")
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy and random policy draw from numpy's global RNG
    torch.manual_seed(args.seed)

    learner = make_learner(env)
    algorithm = table(learner, args.seat, env)
    envs = DummyVectorEnv([lambda: make_env(args.num_players, args.rules) for _ in range(NUM_ENVS)])
    envs.seed(args.seed)
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(20_000, NUM_ENVS), exploration_noise=True)
    collector.reset()
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=1,
            epoch_num_steps=args.budget,
            collection_step_num_env_steps=min(10 * NUM_ENVS, args.budget),
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.25,
            verbose=False,
            show_progress=False,
        )
    )
    print(f"trained {result.train_step} env steps ({result.train_episode} rounds, {result.update_step} updates)")

    wins, rounds = evaluate(learner, args)
    lo, hi = wilson_interval(wins, rounds)
    print(
        f"evaluation: {wins} wins in {rounds} rounds ({args.eval_rounds} at each seat) against "
        f"{args.num_players - 1} random, win rate {wins / rounds:.2f} (95% CI {lo:.2f}-{hi:.2f})"
    )


if __name__ == "__main__":
    main()
