"""sb3-contrib ``MaskablePPO`` on the Gymnasium env ``uno_env/Uno-v0`` (``UnoEnv``), built the way SB3 users do.

    pip install torch==2.13.0 && pip install -e ".[examples]"
    python examples/sb3_maskable_ppo.py --budget 20000

``make_vec_env("uno_env/Uno-v0")`` gives SB3's ``DummyVecEnv`` of ``UnoEnv`` (one seat learns,
the others are ``--opponent``); ``MaskablePPO`` reads the legal actions from
``UnoEnv.action_masks()``. Then a few evaluation rounds with the masks, printed as wins/losses.
For the fast path (one batched engine for every game) use ``uno_env.sb3_vec_env.UnoSB3VecEnv``
as ``train.py`` does. Tested with stable-baselines3 / sb3-contrib 2.9.2.

Not ours: PettingZoo's SB3 action-masking tutorial (pettingzoo 1.27 docs) carries a
``gymnasium <= 0.29.1`` version guard from the pre-1.0 API, which the gymnasium 1.x installed
with this project does not meet; this script needs no wrapper of that tutorial because
``UnoEnv`` is a plain Gymnasium env with ``action_masks()``.
"""

from __future__ import annotations

import argparse

import numpy as np
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env

import uno_env
from agents.registry import AGENT_SPECS, make_agent


def main() -> None:
    """Train for ``--budget`` learner steps, then print the result of ``--eval-rounds`` rounds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=20_000, help="learner steps to train for (>= 64)")
    parser.add_argument("--opponent", default="random", help=f"the other seats' agent: {AGENT_SPECS}")
    parser.add_argument("--eval-rounds", type=int, default=20, help="rounds played after training (>= 1)")
    args = parser.parse_args()
    if args.budget < 64 or args.eval_rounds < 1:
        parser.error(f"--budget must be >= 64 and --eval-rounds >= 1, got {args.budget} and {args.eval_rounds}")
    opponent = make_agent(args.opponent, uno_env.parse_rules("classic"))

    # The issue-16 line: SB3 asks this env for render_mode="rgb_array"; UnoEnv has it.
    venv = make_vec_env(uno_env.gym_env.ENV_ID, n_envs=4, seed=0, env_kwargs={"opponents": opponent})
    n_steps = max(16, min(256, args.budget // 4))
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=min(64, 4 * n_steps), seed=0, device="cpu")
    model.learn(args.budget)
    print(f"trained {model.num_timesteps} learner steps")

    wins = rounds = 0
    obs = venv.reset()
    while rounds < args.eval_rounds:
        action, _ = model.predict(obs, action_masks=get_action_masks(venv), deterministic=True)
        obs, rewards, dones, _ = venv.step(action)
        wins += int(np.sum(rewards[dones] > 0))
        rounds += int(np.sum(dones))
    print(f"evaluation: {wins} wins in {rounds} rounds against {args.opponent}")


if __name__ == "__main__":
    main()
