"""AgileRL's evolutionary DQN population on ``UnoVectorEnv`` (agilerl==2.58.0, its own ``train_off_policy``).

    python -m venv /tmp/uno_env_agilerl && /tmp/uno_env_agilerl/bin/pip install torch==2.13.0
    /tmp/uno_env_agilerl/bin/pip install agilerl==2.58.0 peft==0.21.0 transformers==5.14.1
    /tmp/uno_env_agilerl/bin/pip install -e .
    /tmp/uno_env_agilerl/bin/python examples/agilerl_dqn_population.py --steps 100000

AgileRL (tested with 2.58.0) runs in a venv of its own: it requires pettingzoo 1.26 and newer
``packaging``/``idna`` than this project's environment holds (ray[rllib] pins gymnasium 1.2.2;
AgileRL pulls gymnasium 1.4). agilerl 2.58.0 imports ``peft`` (and through it ``transformers``)
on ``import agilerl.algorithms`` but declares them only in its ``llm``/``all`` extras: installed
above at the versions those extras pin. Its PettingZoo curriculum tutorial is hard-wired to Connect Four;
its single-agent trainer needs only a gymnasium vector env, so the adapter is the env itself:

* ``UnoVectorEnv(autoreset_mode="same_step")``: ``train_off_policy`` stores
  ``(obs, action, reward, next_obs, done)`` per step and never drops the step after an episode
  end, so it needs the reset in the same step (a NEXT_STEP env would give it a transition from
  the last observation of one round to the first of the next);
* ``infos["action_mask"]`` (int8, one row per game) is what ``train_off_policy`` reads and
  passes to ``DQN.get_action(obs, epsilon, action_mask=...)``: the learner only plays legal moves.

The learner plays seat 0 against random seats (``uno_env.RandomAgent``). AgileRL's DQN target
takes the max over every action of the next state (it stores no next mask); that is AgileRL's
choice, not the env's. Truncation: a round that reaches ``--max-turns`` actions ends with
reward 0 and ``truncated``; AgileRL bootstraps through it (``done`` is ``terminated`` only).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import torch
from agilerl.components.replay_buffer import ReplayBuffer
from agilerl.hpo.mutation import Mutations
from agilerl.hpo.tournament import TournamentSelection
from agilerl.training.train_off_policy import train_off_policy
from agilerl.utils.utils import create_population

from uno_env import UnoVectorEnv


@dataclass
class Args:
    steps: int = 100_000  # env steps per agent (AgileRL's max_steps)
    population: int = 4
    num_envs: int = 16
    evo_steps: int = 10_000  # steps between evolutions (tournament + mutation)
    num_players: int = 2
    max_turns: int = 500
    seed: int = 0


def parse_args() -> Args:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, value in vars(Args()).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(p.parse_args()))
    if min(args.steps, args.population, args.num_envs, args.evo_steps, args.max_turns) < 1:
        p.error("--steps, --population, --num-envs, --evo-steps and --max-turns must be at least 1")
    if args.evo_steps < args.num_envs:
        p.error(f"--evo-steps must be >= --num-envs ({args.num_envs}), got {args.evo_steps}")
    return args


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.set_num_threads(1)
    env = UnoVectorEnv(
        args.num_envs, num_players=args.num_players, rules={"max_turns": args.max_turns}, autoreset_mode="same_step"
    )
    env.reset(seed=args.seed)
    init_hp = {"BATCH_SIZE": 64, "LR": 1e-3, "GAMMA": 0.99, "LEARN_STEP": 1, "TAU": 1e-3, "POP_SIZE": args.population}
    pop = create_population(
        "DQN",
        net_config={"head_config": {"hidden_size": [128]}},
        INIT_HP=init_hp,
        observation_space=env.single_observation_space,
        action_space=env.single_action_space,
        population_size=args.population,
        num_envs=args.num_envs,
    )
    trained, fitnesses = train_off_policy(
        env,
        "uno_env/Uno-v0",
        "DQN",
        pop,
        memory=ReplayBuffer(max_size=50_000),
        init_hp=init_hp,
        max_steps=args.steps,
        evo_steps=args.evo_steps,
        eval_loop=1,
        learning_delay=min(1000, args.steps // 2),
        tournament=TournamentSelection(tournament_size=2, elitism=True, population_size=args.population),
        mutation=Mutations(
            no_mutation=0.4, architecture=0.2, new_layer_prob=0.2, parameters=0.2, activation=0, rl_hp=0.2
        ),
        verbose=False,
    )
    last = [float(np.ravel(f)[-1]) for f in fitnesses]  # each agent's fitness history, or its last value
    print(f"fitness (mean return of the last evaluation) per agent: {[round(f, 3) for f in last]}")
    print(f"done: trained a population of {len(trained)} DQN agents for {args.steps} steps each")


if __name__ == "__main__":
    main()
