"""Train a UNO agent with sb3-contrib's MaskablePPO against a pool of opponents, then measure it.

    python train.py                                   # the default run (2 players, classic)
    python train.py --total-timesteps 20000000 --opponent-mix "heuristic:0.5,self:0.5"
    python train.py --num-players 4 --rules house --exp-name house4
    python train.py --resume runs/uno_ppo/checkpoints/step_4000000.zip --total-timesteps 12000000
    python train.py --help                            # every option, with its meaning

CleanRL's shape: one ``Args`` dataclass (a docstring per field; parsed with ``tyro`` when it is
installed, else with an argparse built from the same fields), then a linear ``main``.

What it does, in order: seeds everything; builds a ``PoolVecEnv`` (``agents/pool.py``):
``num_envs`` games in one batched engine per opponent group, the learner seated at random,
the opponents (baseline agents and frozen snapshots of the learner for self-play, shares
set by ``--opponent-mix``) played in-batch; trains ``MaskablePPO`` one rollout at a time,
updating a progress bar, refreshing the self-play snapshots, printing an evaluation against
the baselines every ``--eval-every`` steps (``agents.arena.play_match``, seats rotated),
writing CSV (and TensorBoard, when installed) logs and checkpoints; saves
``runs/<exp_name>/model.zip`` with ``args.json`` beside it; and ends with the evaluation table
of the trained agent against every baseline (``--final-eval-games`` games each, seats
rotated, 95% Wilson intervals), also saved as ``final_eval.json``.

``--backend rllib`` trains the same way on Ray RLlib (new API stack, PPO) instead: every seat
of a game is an RLlib agent; the seat of the ``learner`` module is drawn per game and the other
seats play the opponent modules of ``--opponent-mix`` (the baselines as fixed modules, ``self``
a frozen ``snapshot`` of the learner refreshed every ``--snapshot-every`` steps); illegal
logits are masked (``uno_env.rllib.MaskedPPOTorchRLModule``). ``--num-env-runners`` Ray actors
sample, each stepping its ``--num-envs`` games in one batched engine; the learner updates on
this process. Without ``--address`` a local Ray with ``--num-cpus`` CPUs is started; with it
the run joins that cluster. Steps count env steps (every seat's decisions, the opponents'
too). It saves ``runs/<exp_name>/checkpoint`` (load it with
``agents.rllib_agent.RLlibAgent("runs/<exp_name>/checkpoint")`` or name it in evaluate.py):

    python train.py --backend rllib --num-env-runners 2 --total-timesteps 2000000
    python train.py --backend rllib --address auto --num-env-runners 32   # on a Ray cluster

The observation is scaled inside the policy (``agents.ppo.UnoFeatures``), so a saved model
needs nothing but its ``.zip`` to play: ``agents.ppo.PPOAgent("runs/uno_ppo/model.zip")``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib.util
import inspect
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Args:
    exp_name: str = "uno_ppo"
    """name of the run: everything is written to <output_dir>/<exp_name>/"""
    output_dir: str = "runs"
    """directory holding the runs"""
    seed: int = 1
    """seed of python, numpy, torch, the games and the opponents"""
    torch_threads: int = 1
    """torch CPU threads (0: torch's default). One: the network is small, and on a busy 2-core
    machine two threads were measured 10x slower (they wait on each other)"""
    num_players: int = 2
    """players per table (2-10)"""
    rules: str = "classic"
    """a preset name (classic, official, swap_hands, house) or a JSON dict of options over classic"""
    total_timesteps: int = 8_000_000
    """learner decisions to train on (all games together); the default takes ~11 CPU-minutes here"""
    max_minutes: float = 0.0
    """wall-clock limit of the training loop in minutes (0: none); the run stops early, says so,
    and still saves and evaluates (a capped run is no longer reproducible from the seed)"""
    num_envs: int = 256
    """games played at once (the learner's seat in each); rllib: games of each env runner (one engine)"""
    n_steps: int = 64
    """learner decisions per game per rollout (rollout size = num_envs * n_steps); rllib: env steps per
    game per runner in each training batch (batch = num_envs * n_steps * max(1, num_env_runners))"""
    batch_size: int = 4096
    """minibatch size of the PPO update"""
    n_epochs: int = 4
    """passes over each rollout"""
    learning_rate: float = 1e-3
    """Adam step size at the start"""
    anneal_lr: bool = True
    """decay the step size linearly to 0 over total_timesteps"""
    gamma: float = 0.999
    """discount factor (a won round is +1, a lost one -1, at its end). Near 1 on purpose: with a
    stronger discount, an agent that loses most rounds early on gains by dragging them out
    (drawing instead of playing), and it can get stuck there"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    hidden: tuple[int, ...] = (256, 256)
    """widths of the trunk shared by the policy and the value heads (agents.ppo.UnoFeatures)"""
    head: tuple[int, ...] = ()
    """widths of the separate policy and value layers after the trunk (none: linear heads)"""
    activation: str = "relu"
    """activation of the network: relu, tanh or silu"""
    learner_seat: str = "random"
    """the learner's seat: 'random' (drawn per round) or a seat number"""
    opponent_mix: str = "rlcard_rule:0.85,random:0.15"
    """opponent kinds and their shares of the games, 'name:weight,...'; kinds: random,
    rlcard_rule, greedy, heuristic, self (frozen snapshots of the learner). The default aims at
    the figure that matters (beating rlcard_rule); the random games give the untrained learner
    rounds it can win. For a broader agent: 'rlcard_rule:0.4,heuristic:0.3,self:0.3'"""
    self_play_groups: int = 2
    """groups the 'self' games are split into, each playing its own snapshot"""
    snapshot_every: int = 500_000
    """steps between snapshots of the learner added to the self-play pool"""
    snapshot_pool_size: int = 8
    """snapshots kept; a self-play group gets the newest with probability snapshot_latest_prob,
    else a uniformly drawn one"""
    snapshot_latest_prob: float = 0.5
    """probability that a self-play group plays the newest snapshot"""
    eval_every: int = 1_000_000
    """steps between evaluations against the baselines during training (0: never)"""
    eval_games: int = 1000
    """games per baseline in those evaluations"""
    eval_opponents: str = "random,rlcard_rule,greedy,heuristic"
    """baselines of the evaluations (comma-separated names)"""
    final_eval_games: int = 10_000
    """games per baseline in the final evaluation table (0: skip it)"""
    deterministic_eval: bool = True
    """evaluate with the most likely legal action (False: sample from the policy)"""
    checkpoint_every: int = 2_000_000
    """steps between checkpoints in <run>/checkpoints/ (0: none)"""
    resume: str = ""
    """a checkpoint (.zip) to continue from: its weights, optimizer state, step count and PPO
    settings (network, n_steps, batch size... come from the checkpoint, the learning-rate
    schedule and everything else from these arguments); total_timesteps counts from the start
    of the original run"""
    progress: bool = True
    """show a progress bar"""
    tensorboard: bool = True
    """write TensorBoard logs to <run>/tb when tensorboard is installed (skipped quietly otherwise)"""
    backend: str = "sb3"
    """'sb3' (MaskablePPO in this process) or 'rllib' (Ray RLlib PPO, needs the distributed extra)"""
    num_env_runners: int = 1
    """rllib: Ray actors sampling games (0: sample on this process), each with --num-envs games"""
    address: str = ""
    """rllib: address of a running Ray cluster ('auto': the one started on this machine by
    'ray start'); empty: start a local Ray with --num-cpus CPUs"""
    num_cpus: int = 2
    """rllib without --address: CPUs of the local Ray (each env runner takes one)"""


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` from the command line (``tyro`` when installed, else argparse over the same fields)."""
    return parse_dataclass(Args, argv, __doc__)


def parse_dataclass(cls: type, argv: list[str] | None = None, doc: str | None = None) -> Any:
    """A dataclass instance from the command line: ``tyro.cli`` when tyro is installed, else an
    argparse built from the fields (``--a-name``, ``--flag/--no-flag``, tuples as
    space-separated values, the field docstrings as help)."""
    if importlib.util.find_spec("tyro") is not None:
        import tyro

        return tyro.cli(cls, args=argv, description=doc)
    docs = _field_docs(cls)
    parser = argparse.ArgumentParser(description=doc, formatter_class=_HelpFormatter)
    for f in dataclasses.fields(cls):
        flags = [f"--{f.name.replace('_', '-')}"]
        help_text = " ".join(docs.get(f.name, "").split())
        kind = str(f.type)
        if kind == "bool":
            parser.add_argument(*flags, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=f.default, help=help_text)
        elif kind.startswith("tuple"):
            parser.add_argument(*flags, dest=f.name, type=int, nargs="*", default=f.default, help=help_text)
        else:
            parser.add_argument(*flags, dest=f.name, type={"int": int, "float": float, "str": str}[kind],
                                default=f.default, help=help_text)
    values = vars(parser.parse_args(argv))
    for f in dataclasses.fields(cls):
        if str(f.type).startswith("tuple"):
            values[f.name] = tuple(values[f.name])
    return cls(**values)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults in the help, and the module docstring kept as written."""


def _field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (what tyro shows as help)."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body
    docs = {}
    for a, b in zip(body, body[1:]):
        if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr) and isinstance(getattr(b, "value", None), ast.Constant):
            docs[a.target.id] = str(b.value.value)
    return docs


class LinearSchedule:
    """Learning rate ``lr * (1 - done / total)``; ``done`` is set by the loop (picklable, unlike a closure)."""

    def __init__(self, lr: float, total: int, anneal: bool) -> None:
        self.lr, self.total, self.anneal, self.done = lr, max(int(total), 1), anneal, 0

    def __call__(self, _progress_remaining: float) -> float:
        if not self.anneal:
            return self.lr
        return self.lr * max(1.0 - self.done / self.total, 0.0)


def check_args(args: Args) -> None:
    """Refuse bad settings before anything is built (ValueError naming the setting)."""
    positive = ["num_envs", "n_steps", "batch_size", "n_epochs", "total_timesteps", "self_play_groups",
                "snapshot_pool_size", "snapshot_every", "eval_games"]
    for name in positive:
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    for name in ["eval_every", "final_eval_games", "checkpoint_every", "max_minutes", "torch_threads"]:
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if not 0 < args.learning_rate < 1:
        raise ValueError(f"--learning-rate must be in (0, 1), got {args.learning_rate}")
    if args.backend not in ("sb3", "rllib"):
        raise ValueError(f"--backend must be 'sb3' or 'rllib', got {args.backend!r}")
    if args.num_env_runners < 0 or args.num_cpus < 1:
        raise ValueError(f"--num-env-runners must be >= 0 and --num-cpus >= 1, got {args.num_env_runners} and "
                         f"{args.num_cpus}")
    if args.learner_seat != "random" and not args.learner_seat.isdigit():
        raise ValueError(f"--learner-seat must be 'random' or a seat number, got {args.learner_seat!r}")


def make_rules(text: str) -> Any:
    """A ``UnoRules`` from a preset name or a JSON dict of options (over classic)."""
    from uno_env import UnoRules

    text = text.strip()
    if text.startswith("{"):
        try:
            options = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--rules: not a preset name nor valid JSON options ({exc}): {text!r}") from None
        return UnoRules.from_dict(options)
    return UnoRules.preset(text)


def eval_rows(learner: Any, names: list[str], rules: Any, num_players: int, num_games: int, seed: int) -> list[dict[str, Any]]:
    """The learner against each baseline in ``names``; with n players, n-1 copies of the baseline."""
    from agents.registry import make_agent
    from agents.tournament import play_table

    rows = []
    for name in names:
        table = [learner] + [make_agent(name, rules) for _ in range(num_players - 1)]
        r = play_table(table, num_games, rules=rules, seed=seed)
        lo, hi = r.ci95[0]
        rows.append({"opponent": name, "games": r.games, "wins": int(r.wins[0]), "win_rate": float(r.win_rate[0]),
                     "ci95": [lo, hi], "mean_points": float(r.mean_points[0]),
                     "opponent_mean_points": float(r.mean_points[1:].mean()), "truncated": r.truncated})
    return rows


def eval_line(step: int, minutes: float, rows: list[dict[str, Any]]) -> str:
    """One line of a periodic evaluation."""
    return f"step {step:>11,} ({minutes:4.1f} min): " + ", ".join(
        f"{r['opponent']} {r['win_rate']:.1%} [{r['ci95'][0]:.1%}, {r['ci95'][1]:.1%}]" for r in rows)


def print_final_table(args: Args, model_path: str, rows: list[dict[str, Any]]) -> None:
    """The final evaluation as a Markdown table."""
    title = (f"{model_path} vs each baseline: {args.num_players} players, rules {args.rules}, "
             f"{args.final_eval_games:,} games each, seats rotated, "
             f"{'deterministic' if args.deterministic_eval else 'sampled'} actions")
    print("\n" + title + "\n")
    print("| opponent | games | wins | win rate | 95% CI | mean points | opponent's mean points |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for r in rows:
        print(f"| {r['opponent']} | {r['games']:,} | {r['wins']:,} | {r['win_rate']:.1%} | "
              f"{r['ci95'][0]:.1%} – {r['ci95'][1]:.1%} | {r['mean_points']:.1f} | {r['opponent_mean_points']:.1f} |")


def eval_names_of(args: Args) -> list[str]:
    """The baselines of --eval-opponents (ValueError for an unknown one)."""
    from agents.registry import BASELINES

    names = [n.strip() for n in args.eval_opponents.split(",") if n.strip()]
    for name in names:
        if name not in BASELINES:
            raise ValueError(f"--eval-opponents: unknown baseline {name!r}; allowed: {sorted(BASELINES)}")
    return names


def start_run(args: Args) -> str:
    """Create the run directory (and its checkpoints/) with args.json; seed python, numpy and
    torch (the games and opponents are seeded from args.seed where they are built); set torch's
    threads. Returns the run directory."""
    import torch

    run_dir = os.path.join(args.output_dir, args.exp_name)
    os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
    with open(os.path.join(run_dir, "args.json"), "w") as f:
        json.dump(dataclasses.asdict(args), f, indent=2)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    return run_dir


def main(args: Args) -> dict[str, Any]:
    """Train, save, evaluate; returns the final evaluation (also written to final_eval.json)."""
    check_args(args)
    if args.backend == "rllib":
        return main_rllib(args)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure

    from agents.pool import PoolVecEnv, SelfPlayOpponent, SnapshotPool, parse_mix
    from agents.ppo import PPOAgent, UnoFeatures, UnoMaskablePolicy
    from agents.registry import BASELINES, make_agent

    t_start = time.time()
    run_dir = start_run(args)
    # The categorical's argument checks cost ~10% of an update and can never fail here (masked logits).
    torch.distributions.Distribution.set_default_validate_args(False)
    rng = np.random.default_rng(args.seed)
    rules = make_rules(args.rules)
    learner_seat: int | str = args.learner_seat if args.learner_seat == "random" else int(args.learner_seat)
    mix = parse_mix(args.opponent_mix, allowed=[*BASELINES, "self"])
    eval_names = eval_names_of(args)

    # Self-play opponents are PPOAgents over frozen copies of the policy, which exists only once
    # the env does: the groups get placeholders, filled in after the model is built.
    self_play: list[SelfPlayOpponent] = []

    def opponent_for(kind: str, group: int) -> Any:
        if kind == "self":
            self_play.append(SelfPlayOpponent())
            return self_play[-1]
        return make_agent(kind, rules)

    venv = PoolVecEnv(args.num_envs, mix, opponent_for, num_players=args.num_players, rules=rules,
                      learner_seat=learner_seat, groups_per_kind={"self": args.self_play_groups}, seed=args.seed)
    schedule = LinearSchedule(args.learning_rate, args.total_timesteps, args.anneal_lr)
    if args.resume:
        model = MaskablePPO.load(args.resume, env=venv, device="cpu")
        model.learning_rate = schedule
        model.lr_schedule = schedule
        print(f"resumed from {args.resume} at step {model.num_timesteps:,}")
    else:
        model = MaskablePPO(
            UnoMaskablePolicy, venv, learning_rate=schedule, n_steps=args.n_steps, batch_size=args.batch_size,
            n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
            ent_coef=args.ent_coef, vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, seed=args.seed,
            device="cpu", verbose=0,
            policy_kwargs=dict(
                features_extractor_class=UnoFeatures,
                features_extractor_kwargs=dict(hidden=tuple(args.hidden), activation=args.activation),
                net_arch=dict(pi=list(args.head), vf=list(args.head)),
                activation_fn={"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "silu": torch.nn.SiLU}[args.activation],
            ),
        )
    log_formats = ["csv"]
    if args.tensorboard and importlib.util.find_spec("tensorboard") is not None:
        log_formats.append("tensorboard")
    model.set_logger(configure(run_dir, log_formats))
    pool = SnapshotPool(args.snapshot_pool_size, args.snapshot_latest_prob)
    pool.add(model.policy)
    for opponent in self_play:
        opponent.agent = PPOAgent.frozen(model.policy, deterministic=False, name="self")

    def evaluate(num_games: int, seed: int) -> list[dict[str, Any]]:
        """The learner (its current weights) against each baseline; with n players, n-1 copies of it."""
        learner = PPOAgent(model.policy, deterministic=args.deterministic_eval, name="ppo")
        return eval_rows(learner, eval_names, rules, args.num_players, num_games, seed)

    from tqdm import tqdm

    rollout = args.num_envs * args.n_steps
    start_step = model.num_timesteps
    bar = tqdm(total=args.total_timesteps, initial=start_step, unit="step", unit_scale=True,
               disable=not args.progress, dynamic_ncols=True, mininterval=1.0)
    next_eval = (start_step // args.eval_every + 1) * args.eval_every if args.eval_every else None
    next_ckpt = (start_step // args.checkpoint_every + 1) * args.checkpoint_every if args.checkpoint_every else None
    next_snap = start_step + args.snapshot_every
    stopped_early = False
    t_train = time.time()
    cpu_train = time.process_time()
    history = []
    while model.num_timesteps < args.total_timesteps:
        if args.max_minutes and time.time() - t_train > 60 * args.max_minutes:
            stopped_early = True
            break
        schedule.done = model.num_timesteps
        model.learn(rollout, reset_num_timesteps=False, log_interval=1)
        step = model.num_timesteps
        bar.update(step - bar.n)
        wr = {k: venv.results(k) for k in mix}
        bar.set_postfix_str(" ".join(f"{k} {w / max(n, 1):.0%}" for k, (w, n) in wr.items()), refresh=False)
        if step >= next_snap:
            pool.add(model.policy)
            for opponent in self_play:
                opponent.agent.load_state(pool.sample(rng))
            next_snap += args.snapshot_every
        if next_eval is not None and step >= next_eval:
            rows = evaluate(args.eval_games, seed=args.seed + step)
            history.append({"step": step, "minutes": (time.time() - t_train) / 60, "eval": rows})
            for row in rows:
                model.logger.record(f"eval/win_rate_{row['opponent']}", row["win_rate"])
            bar.write(eval_line(step, (time.time() - t_train) / 60, rows))
            next_eval += args.eval_every
        if next_ckpt is not None and step >= next_ckpt:
            model.save(os.path.join(run_dir, "checkpoints", f"step_{step}.zip"))
            next_ckpt += args.checkpoint_every
    bar.close()
    train_seconds = time.time() - t_train
    train_cpu = time.process_time() - cpu_train
    trained = model.num_timesteps - start_step
    if stopped_early:
        print(f"stopped at {model.num_timesteps:,} steps: --max-minutes {args.max_minutes:g} reached")
    model_path = os.path.join(run_dir, "model.zip")
    model.save(model_path)
    print(f"trained {trained:,} steps in {train_seconds / 60:.1f} min ({trained / max(train_seconds, 1e-9):,.0f} "
          f"learner steps/s wall, {trained / max(train_cpu, 1e-9):,.0f} per CPU-second of this process); "
          f"model: {model_path}")

    final: dict[str, Any] = {"args": dataclasses.asdict(args), "steps": model.num_timesteps,
                             "train_seconds": train_seconds, "train_cpu_seconds": train_cpu,
                             "steps_per_second": trained / max(train_seconds, 1e-9),
                             "stopped_early": stopped_early, "history": history}
    if args.final_eval_games:
        rows = evaluate(args.final_eval_games, seed=args.seed + 10**9)
        final["final_eval"] = rows
        print_final_table(args, model_path, rows)
    final["total_seconds"] = time.time() - t_start
    with open(os.path.join(run_dir, "final_eval.json"), "w") as f:
        json.dump(final, f, indent=2)
    print(f"\ntotal wall time {final['total_seconds'] / 60:.1f} min")
    venv.close()
    return final


def rllib_config(args: Args, rules: Any) -> Any:
    """The RLlib ``PPOConfig`` of ``--backend rllib`` (module docstring)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.pool import parse_mix
    from agents.registry import BASELINES
    from agents.rllib_agent import LEARNER, SNAPSHOT, AgentRLModule, SelfPlayMapping
    from uno_env.rllib import MaskedPPOTorchRLModule, UnoEnvRunner, UnoMultiAgentEnv, spaces

    obs_space, act_space = spaces(rules, args.num_players)
    network = RLModuleSpec(module_class=MaskedPPOTorchRLModule, observation_space=obs_space, action_space=act_space,
                           model_config={"fcnet_hiddens": list(args.hidden), "fcnet_activation": args.activation,
                                         "head_fcnet_hiddens": list(args.head), "vf_share_layers": True})
    mix = {(SNAPSHOT if kind == "self" else kind): w
           for kind, w in parse_mix(args.opponent_mix, allowed=[*BASELINES, "self"]).items()}
    modules = {LEARNER: network}
    for mid in mix:
        modules[mid] = network if mid == SNAPSHOT else RLModuleSpec(
            module_class=AgentRLModule, observation_space=obs_space, action_space=act_space,
            model_config={"agent": mid, "rules": rules.to_dict(), "seed": args.seed})
    # Every runner samples n_steps env steps from each of its games per training batch.
    batch = args.num_envs * args.n_steps * max(args.num_env_runners, 1)
    lr: Any = [[0, args.learning_rate], [args.total_timesteps, 0.0]] if args.anneal_lr else args.learning_rate
    return (
        PPOConfig()
        .environment(UnoMultiAgentEnv, env_config={"num_players": args.num_players, "rules": rules.to_dict(),
                                                   "seed": args.seed})
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs,
                     env_runner_cls=UnoEnvRunner, rollout_fragment_length=args.n_steps, num_cpus_per_env_runner=1)
        .multi_agent(policies=set(modules), policy_mapping_fn=SelfPlayMapping(args.num_players, mix, args.seed),
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(train_batch_size_per_learner=batch, minibatch_size=min(args.batch_size, batch),
                  num_epochs=args.n_epochs, lr=lr, gamma=args.gamma, lambda_=args.gae_lambda,
                  clip_param=args.clip_range, entropy_coeff=args.ent_coef, vf_loss_coeff=args.vf_coef,
                  grad_clip=args.max_grad_norm)
        .learners(num_learners=0)
        .debugging(seed=args.seed)
        .reporting(metrics_num_episodes_for_smoothing=100)
    )


def main_rllib(args: Args) -> dict[str, Any]:
    """``--backend rllib``: train with RLlib PPO on Ray, save the checkpoint, evaluate like the sb3 path."""
    from agents.rllib_agent import LEARNER, SNAPSHOT, RLlibAgent

    rules = make_rules(args.rules)
    eval_names = eval_names_of(args)
    if args.resume:
        raise ValueError("--resume is for the sb3 backend; an RLlib run restarts from its checkpoint with "
                         "Algorithm.from_checkpoint")
    t_start = time.time()
    run_dir = start_run(args)
    init_ray(args.address, args.num_cpus)
    config = rllib_config(args, rules)
    algo = config.build_algo()
    has_snapshot = SNAPSHOT in config.policies

    def refresh_snapshot() -> None:
        algo.set_state({"learner_group": {"learner": {"rl_module": {SNAPSHOT: algo.get_module(LEARNER).get_state()}}}})
        algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, policies=[SNAPSHOT],
                                           inference_only=True)

    if has_snapshot:
        refresh_snapshot()
    steps, history, iterations = 0, [], []
    next_snap = args.snapshot_every
    next_eval = args.eval_every if args.eval_every else None
    next_ckpt = args.checkpoint_every if args.checkpoint_every else None
    t_train, cpu_train = time.time(), time.process_time()
    stopped_early = False
    learner = RLlibAgent(module=algo.get_module(LEARNER), deterministic=args.deterministic_eval, name="rllib")
    while steps < args.total_timesteps:
        if args.max_minutes and time.time() - t_train > 60 * args.max_minutes:
            stopped_early = True
            break
        t0 = time.time()
        result = algo.train()
        runners = result["env_runners"]
        steps = int(runners["num_env_steps_sampled_lifetime"])
        timers = result.get("timers", {})
        iterations.append({"iteration": int(result["training_iteration"]), "env_steps": steps,
                           "seconds": time.time() - t0, "sample_seconds": timers.get("env_runner_sampling_timer"),
                           "learn_seconds": timers.get("learner_update_timer"),
                           # An env step that raised (an illegal action would): RLlib counts it and resets.
                           "env_step_failures": int(runners.get("num_env_step_failures_lifetime", 0)),
                           "learner_return_mean": runners.get("module_episode_returns_mean", {}).get(LEARNER)})
        if args.progress:
            ret = iterations[-1]["learner_return_mean"]
            print(f"iteration {iterations[-1]['iteration']}: {steps:,} env steps, "
                  f"{int(runners['num_env_steps_sampled']) / iterations[-1]['seconds']:,.0f} steps/s, learner mean "
                  f"return {'n/a' if ret is None else f'{ret:+.3f}'}", flush=True)
        if has_snapshot and steps >= next_snap:
            refresh_snapshot()
            next_snap += args.snapshot_every
        if next_eval is not None and steps >= next_eval:
            rows = eval_rows(learner, eval_names, rules, args.num_players, args.eval_games, args.seed + steps)
            history.append({"step": steps, "minutes": (time.time() - t_train) / 60, "eval": rows})
            print(eval_line(steps, (time.time() - t_train) / 60, rows), flush=True)
            next_eval += args.eval_every
        if next_ckpt is not None and steps >= next_ckpt:
            algo.save_to_path(os.path.abspath(os.path.join(run_dir, "checkpoints", f"step_{steps}")))
            next_ckpt += args.checkpoint_every
    train_seconds, train_cpu = time.time() - t_train, time.process_time() - cpu_train
    model_path = os.path.join(run_dir, "checkpoint")
    algo.save_to_path(os.path.abspath(model_path))
    print(f"trained {steps:,} env steps in {train_seconds / 60:.1f} min ({steps / max(train_seconds, 1e-9):,.0f} "
          f"env steps/s wall, {train_cpu:.1f} CPU-s on this process); checkpoint: {model_path}")
    final: dict[str, Any] = {"args": dataclasses.asdict(args), "backend": "rllib", "steps": steps,
                             "train_seconds": train_seconds, "train_cpu_seconds": train_cpu,
                             "steps_per_second": steps / max(train_seconds, 1e-9), "stopped_early": stopped_early,
                             "iterations": iterations, "history": history}
    if args.final_eval_games:
        final["final_eval"] = eval_rows(learner, eval_names, rules, args.num_players, args.final_eval_games,
                                        args.seed + 10**9)
        print_final_table(args, model_path, final["final_eval"])
    final["total_seconds"] = time.time() - t_start
    with open(os.path.join(run_dir, "final_eval.json"), "w") as f:
        json.dump(final, f, indent=2)
    algo.stop()
    return final


def run_script(main_fn: Any, parse_fn: Any) -> None:
    """A script's ``__main__``: parse the arguments, run, and turn a bad setting (ValueError)
    into ``error: ...`` on stderr with exit status 1 instead of a traceback."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        main_fn(parse_fn())
    except ValueError as exc:
        sys.exit(f"error: {exc}")


def init_ray(address: str = "", num_cpus: int = 2) -> None:
    """Join the Ray cluster at ``address`` (``auto``: the one started on this machine with
    ``ray start``), or with no address start a local Ray limited to ``num_cpus`` CPUs. A Ray
    already initialised in this process is reused as it is."""
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address)
    else:
        # address="local": always a fresh local Ray, even when a `ray start` cluster (or its
        # stale /tmp/ray/ray_current_cluster file) is on this machine; joining one is --address.
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)


if __name__ == "__main__":
    run_script(main, parse_args)
