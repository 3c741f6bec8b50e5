"""``train.py --backend rllib``: the same training on Ray RLlib (new API stack, PPO); needs the distributed extra.

Every seat is an RLlib agent; the ``learner`` module's seat is drawn per game and the other seats
play the opponent modules of ``--opponent-mix``. Steps count every seat's decisions (guide:
docs/sb3-rllib.md)."""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from agents import BASELINES
from agents.rllib_agent import LEARNER, SNAPSHOT, AgentRLModule, RLlibAgent, SelfPlayMapping
from arena.remote import init_ray
from uno_env import Agent, UnoRules
from uno_env.rllib import MaskedPPOTorchRLModule, UnoEnvRunner, UnoMultiAgentEnv, spaces

from .opponents import SELF, eval_line, eval_rows, final_eval_seed, final_table, final_title
from .run import Every, Stopwatch, seed_everything, start_run, write_summary

__all__ = ["rllib_config", "main_rllib"]


def rllib_config(args: Any, rules: UnoRules, mix: dict[str, float]) -> PPOConfig:
    """The RLlib ``PPOConfig`` of ``train.Args`` and its parsed ``--opponent-mix``; ValueError for a mix entry
    RLlib cannot play."""
    for kind in mix:
        if kind != SELF and kind not in BASELINES:
            raise ValueError(
                f"--opponent-mix: the rllib backend plays baselines {sorted(BASELINES)} and 'self' as "
                f"opponent modules; got {kind!r}"
            )
    obs_space, act_space = spaces(rules, args.num_players)
    network = RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        observation_space=obs_space,
        action_space=act_space,
        model_config={
            "fcnet_hiddens": list(args.hidden),
            "fcnet_activation": args.activation,
            "head_fcnet_hiddens": list(args.head),
            "vf_share_layers": True,
        },
    )
    modules = {LEARNER: network}
    weights = {}
    for kind, w in mix.items():
        mid = SNAPSHOT if kind == SELF else kind
        weights[mid] = w
        modules[mid] = (
            network
            if mid == SNAPSHOT
            else RLModuleSpec(
                module_class=AgentRLModule,
                observation_space=obs_space,
                action_space=act_space,
                model_config={"agent": mid, "rules": rules.to_dict(), "seed": args.seed},
            )
        )
    # Every runner samples n_steps env steps from each of its games per training batch.
    batch = args.num_envs * args.n_steps * max(args.num_env_runners, 1)
    lr: Any = [[0, args.learning_rate], [args.total_timesteps, 0.0]] if args.anneal_lr else args.learning_rate
    return (
        PPOConfig()
        .environment(
            UnoMultiAgentEnv, env_config={"num_players": args.num_players, "rules": rules.to_dict(), "seed": args.seed}
        )
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs,
            env_runner_cls=UnoEnvRunner,
            rollout_fragment_length=args.n_steps,
            num_cpus_per_env_runner=1,
        )
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=SelfPlayMapping(args.num_players, weights, args.seed),  # type: ignore[arg-type]
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(args.batch_size, batch),
            num_epochs=args.n_epochs,
            lr=lr,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            clip_param=args.clip_range,
            entropy_coeff=args.ent_coef,
            vf_loss_coeff=args.vf_coef,
            grad_clip=args.max_grad_norm,
        )
        .learners(num_learners=0)
        .debugging(seed=args.seed)
        .reporting(metrics_num_episodes_for_smoothing=100)
    )


def _refresh_snapshot(algo: Any) -> None:
    """Copy the learner's weights into the ``snapshot`` module, on the learner and every env runner."""
    algo.set_state({"learner_group": {"learner": {"rl_module": {SNAPSHOT: algo.get_module(LEARNER).get_state()}}}})
    algo.env_runner_group.sync_weights(
        from_worker_or_learner_group=algo.learner_group, policies=[SNAPSHOT], inference_only=True
    )


def _iteration(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """The figures kept of one ``algo.train()`` result."""
    runners = result["env_runners"]
    timers = result.get("timers", {})
    return {
        "iteration": int(result["training_iteration"]),
        "env_steps": int(runners["num_env_steps_sampled_lifetime"]),
        "seconds": seconds,
        "sample_seconds": timers.get("env_runner_sampling_timer"),
        "learn_seconds": timers.get("learner_update_timer"),
        # An env step that raised (an illegal action would): RLlib counts it and resets.
        "env_step_failures": int(runners.get("num_env_step_failures_lifetime", 0)),
        "learner_return_mean": runners.get("module_episode_returns_mean", {}).get(LEARNER),
        "steps_per_second": int(runners["num_env_steps_sampled"]) / max(seconds, 1e-9),
    }


def main_rllib(
    args: Any, rules: UnoRules, mix: dict[str, float], evaluation: dict[str, list[Agent]], script: str
) -> dict[str, Any]:
    """Train with RLlib PPO on Ray, save the checkpoint, evaluate against ``evaluation`` (``opponent_tables``) like
    the sb3 path; returns final_eval.json's data (``script``: the command command.txt names)."""
    clock = Stopwatch()
    seed_everything(args.seed, args.torch_threads)
    run_dir = start_run(args, script)
    snapshots, evals, checkpoints = Every(args.snapshot_every), Every(args.eval_every), Every(args.checkpoint_every)
    init_ray(args.address, args.num_cpus)
    config = rllib_config(args, rules, mix)
    algo = config.build_algo()
    has_snapshot = SNAPSHOT in config.policies
    if has_snapshot:
        _refresh_snapshot(algo)
    learner = RLlibAgent(module=algo.get_module(LEARNER), deterministic=args.deterministic_eval, name="rllib")
    training, steps, history, iterations = Stopwatch(args.max_minutes), 0, [], []
    while steps < args.total_timesteps and not training.expired():
        t0 = time.time()
        iterations.append(_iteration(algo.train(), time.time() - t0))
        steps = iterations[-1]["env_steps"]
        if args.progress:
            ret = iterations[-1]["learner_return_mean"]
            print(
                f"iteration {iterations[-1]['iteration']}: {steps:,} env steps, "
                f"{iterations[-1]['steps_per_second']:,.0f} steps/s, learner mean return "
                f"{'n/a' if ret is None else f'{ret:+.3f}'}",
                flush=True,
            )
        if snapshots.due(steps) and has_snapshot:
            _refresh_snapshot(algo)
        if evals.due(steps):
            rows = eval_rows(learner, evaluation, rules, args.eval_games, args.seed + steps)
            history.append({"step": steps, "minutes": training.seconds() / 60, "eval": rows})
            print(eval_line(steps, training.seconds() / 60, rows), flush=True)
        if checkpoints.due(steps):
            algo.save_to_path(os.path.abspath(os.path.join(run_dir, "checkpoints", f"step_{steps}")))
    seconds, cpu = training.seconds(), training.cpu_seconds()
    model_path = os.path.join(run_dir, "checkpoint")
    algo.save_to_path(os.path.abspath(model_path))
    print(
        f"trained {steps:,} env steps in {seconds / 60:.1f} min ({steps / max(seconds, 1e-9):,.0f} env steps/s "
        f"wall, {cpu:.1f} CPU-s on this process); checkpoint: {model_path}"
    )
    final: dict[str, Any] = {
        "args": dataclasses.asdict(args),
        "backend": "rllib",
        "steps": steps,
        "train_seconds": seconds,
        "train_cpu_seconds": cpu,
        "steps_per_second": steps / max(seconds, 1e-9),
        "stopped_early": steps < args.total_timesteps,
        "iterations": iterations,
        "history": history,
    }
    if args.final_eval_games:
        final["final_eval"] = eval_rows(learner, evaluation, rules, args.final_eval_games, final_eval_seed(args.seed))
        print(final_table(final_title(args, model_path), final["final_eval"]))
    final["total_seconds"] = clock.seconds()
    write_summary(run_dir, final)
    algo.stop()
    return final
