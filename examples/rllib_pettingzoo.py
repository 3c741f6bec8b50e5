"""RLlib PPO (new API stack) on the PettingZoo env, through RLlib's own ``PettingZooEnv`` wrapper.

    pip install torch==2.13.0 && pip install -e ".[examples]"
    python examples/rllib_pettingzoo.py --budget 20000

Every seat is played by one shared policy (self-play), RLlib's stock
``ActionMaskingTorchRLModule`` masks the illegal actions. Tested with ray 2.60.

The one adapter: RLlib's masking module reads the observation dict's keys ``"observations"``
and ``"action_mask"``, while PettingZoo's convention (and ``uno_env.env()``) is
``"observation"`` and ``"action_mask"``. ``ObservationsKey`` below renames the key; nothing else
changes. (``uno_env.rllib`` ships a faster path: ``UnoMultiAgentEnv``, whose dict already uses
``"observations"``, batched env runners and ``MaskedPPOTorchRLModule``; see ``train.py --backend``.)

Not ours: PettingZoo's RLlib tutorials (pettingzoo 1.27 docs) are written for RLlib's old API
stack (``PPOConfig().training(model=...)``, ``ModelV2``), which ray 2.60 no longer runs by
default; this script is the new-stack equivalent.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
from pettingzoo.utils import BaseWrapper

import uno_env


def _rename(obs: dict) -> dict:
    """PettingZoo's ``observation`` key under RLlib's name ``observations``."""
    return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


class ObservationsKey(BaseWrapper):
    """The adapter: ``{"observation", "action_mask"}`` -> ``{"observations", "action_mask"}``."""

    def observe(self, agent):
        """The wrapped env's observation with the key renamed."""
        return _rename(self.env.observe(agent))

    def observation_space(self, agent):
        """The wrapped env's observation space with the key renamed."""
        return gym.spaces.Dict(_rename(dict(self.env.observation_space(agent).spaces)))


def main() -> None:
    """Train PPO for ``--budget`` env steps and print the steps sampled and the mean episode length."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=20_000, help="env steps to train for (>= 256)")
    parser.add_argument("--num-players", type=int, default=2, help="players at the table, 2-10")
    parser.add_argument("--rules", default="classic", help="a preset or JSON options (uno_env.parse_rules)")
    args = parser.parse_args()
    if args.budget < 256:
        parser.error(f"--budget must be at least 256 env steps, got {args.budget}")

    # Imported after parsing: ray takes seconds to import and --help should not wait.
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    uno_env.env(
        num_players=args.num_players, rules=args.rules
    )  # a bad --num-players/--rules fails here, before Ray starts
    register_env(
        "uno", lambda cfg: PettingZooEnv(ObservationsKey(uno_env.env(num_players=args.num_players, rules=args.rules)))
    )
    batch = min(args.budget, 2000)
    config = (
        PPOConfig()
        # RLlib's env pre-check steps unmasked action_space.sample()s, which env() ends as illegal
        # moves (with PettingZoo's warning); the masked training below never makes one.
        .environment("uno", disable_env_checking=True)
        .env_runners(num_env_runners=0)  # sample in this process: the quickest start for a demo
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": [128, 128], "head_fcnet_hiddens": [64]},
                    )
                }
            )
        )
        .training(train_batch_size_per_learner=batch, minibatch_size=min(256, batch), num_epochs=2)
        .learners(num_learners=0)
        .debugging(seed=0)
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        algo = config.build_algo()
        steps = 0
        while steps < args.budget:
            result = algo.train()
            steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
            length = result["env_runners"].get("episode_len_mean", float("nan"))
            print(f"iteration {result['training_iteration']}: {steps} env steps, mean episode length {length:.1f}")
        algo.stop()
    finally:
        ray.shutdown()
    print(f"done: trained {steps} env steps")


if __name__ == "__main__":
    main()
