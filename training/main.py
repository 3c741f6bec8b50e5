"""Train a UNO agent with masked PPO (the batched learner, or sb3-contrib's MaskablePPO) against a mix of opponents, then measure it.

CleanRL's shape: one ``Args`` dataclass (a docstring per field, parsed with ``tyro``), then a
linear ``main`` whose pieces live in ``training/`` (guide: docs/training.md, "What it does, in
order"). ``python train.py`` and the installed ``uno-train`` both run it.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NamedTuple

import torch
import tyro
from stable_baselines3.common.logger import configure
from tqdm import tqdm  # type: ignore[import-untyped]

from agents.model_card import table_card, write_card
from agents.ppo import POLICY_HISTORY_FORMS, Activation, PolicyKind
from agents.registry import build_agent, parse_list
from training.batched_ppo import (
    PRECISIONS,
    BatchedPPO,
    PPOSettings,
    Precision,
    precision_note,
    resolve_precision,
)
from training.belief_inputs import (
    Beliefs,
    card_fields,
    check_beliefs,
    env_history,
    learner_agent,
    learner_env,
    start_from,
)
from training.expert import clone, label_positions, load_positions, save_positions
from training.league import League, league_members, saved_league
from training.opponents import (
    LEAGUE,
    OpponentGroup,
    PendingSnapshot,
    eval_line,
    eval_rows,
    final_eval_seed,
    final_table,
    final_title,
    opponent_groups,
    opponent_tables,
    parse_mix,
)
from training.run import (
    Every,
    Stopwatch,
    atomic_write,
    capture_rng,
    command_line,
    find_checkpoint,
    load_state,
    remove_partial,
    restore_rng,
    save_checkpoint,
    seed_everything,
    start_run,
    usable_cores,
    write_summary,
)
from training.sb3 import (
    LinearSchedule,
    WinsByKind,
    log_formats,
    make_model,
    update_threads,
    with_update_threads,
)
from uno_env import Agent, UnoRules, parse_rules
from uno_env.checks import check_int
from uno_env.compile_notice import announce_compiling
from uno_env.policy import history_length_of
from uno_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS_HELP
from uno_env.sb3_vec_env import UnoSB3VecEnv
from uno_env.spaces import MAX_HISTORY

HELP = """Train a UNO agent (masked PPO) against a mix of opponents, then print its evaluation table.

    python train.py                                     # 2 players, classic: minutes on 2 cores
    python train.py --opponent-mix "0.5*heuristic,0.5*self" --total-timesteps 20000000
    python train.py --num-players 4 --rules house --exp-name house4

Writes runs/<exp-name>/model.zip (load it anywhere by its path). Every option: docs/training.md."""


# The rollout and update shape each backend runs when its option is left at 0. The batched learner's
# bigger rollouts, bigger minibatches and two epochs learn about as much per step as MaskablePPO's four
# epochs (lab/results/learning_per_step.md) in far less update time (docs/benchmarks.md, "Learner
# throughput"); sb3's and rllib's are the settings they always had.
_SB3_SHAPE = dict(num_envs=256, n_steps=64, batch_size=4096, n_epochs=4, total_timesteps=8_000_000)
BACKEND_DEFAULTS: dict[str, dict[str, int]] = {
    "batched": dict(num_envs=1024, n_steps=32, batch_size=8192, n_epochs=2, total_timesteps=10_000_000),
    "sb3": _SB3_SHAPE,
    "rllib": _SB3_SHAPE,
}


@dataclass
class Args:
    """Options of ``train.py`` / ``uno-train`` (their depth: docs/training.md#every-option)."""

    exp_name: str = "uno_ppo"
    """the run: <output_dir>/<exp_name>/"""
    output_dir: str = "runs"
    """directory holding the runs"""
    seed: int = 1
    """seed of everything random"""
    torch_threads: int = 1
    """torch threads of rollouts (0: default)"""
    env_threads: int = 1
    """threads stepping games and opponents"""
    update_threads: int = 0
    """torch threads of each update (0: every core on batched)"""
    num_players: int = 2
    """players per table (2-10)"""
    rules: Annotated[str, tyro.conf.arg(help=PRESETS_HELP)] = "classic"
    total_timesteps: int = 0
    """decisions to train on (0: the backend's)"""
    max_minutes: float = 0.0
    """wall-clock limit of the training loop in minutes (0: none); the run still saves and evaluates"""
    num_envs: int = 0
    """games at once (0: the backend's)"""
    n_steps: int = 0
    """steps per game per rollout (0: backend's)"""
    batch_size: int = 0
    """PPO minibatch size (0: the backend's)"""
    n_epochs: int = 0
    """passes over each rollout (0: backend's)"""
    learning_rate: float = 1e-3
    """Adam step size at the start (also the warm start's)"""
    anneal_lr: bool = True
    """decay the step size linearly to 0 over total_timesteps"""
    gamma: float = 0.999
    """discount factor (near 1: docs/training.md)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient (warm start too)"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    hidden: tuple[int, ...] = (256, 256)
    """widths of the shared trunk"""
    head: tuple[int, ...] = ()
    """widths of the policy and value layers after the trunk"""
    activation: Activation = "relu"
    """activation of the network"""
    privileged_critic: bool = False
    """the value function also sees every hand; the saved policy does not"""
    history: int = 0
    """public events the policy reads besides its observation (0: none; sb3 and batched backends)"""
    policy: PolicyKind = "mlp"
    """network: mlp (one MLP over everything) or seq (a transformer over the --history events beside it)"""
    beliefs: Beliefs = "none"
    """net: the policy also reads the belief network's reading of each other seat (classic, 2 or 4 players)"""
    device: str = "cpu"
    """torch device of the learner (cpu, cuda, cuda:N); the warm start's cloning needs cpu"""
    learner_seat: Literal["random"] | int = "random"
    """'random' (drawn per round) or a seat number"""
    reward: Literal["win", "score", "rank"] = "win"
    """the reward at a round's end (docs/spaces.md)"""
    opponent_mix: str = "0.5*heuristic,0.5*rlcard_rule"
    """opponents and their shares, WEIGHT*SPEC,...: agent specs, mixed tables a+b+c, 'self' or 'league'"""
    self_play_groups: int = 2
    """groups of 'self' games, each with its own snapshot"""
    snapshot_every: int = 500_000
    """steps between snapshots of the learner added to the pool of 'self' and 'league'"""
    snapshot_pool_size: int = 8
    """snapshots kept in the pool"""
    snapshot_latest_prob: float = 0.5
    """chance a self-play group plays the newest snapshot"""
    league_opponents: str = "random,rlcard_rule,greedy,heuristic"
    """the fixed members of the 'league', beside the learner's snapshots (agent specs)"""
    league_groups: int = 4
    """groups the 'league' games are split into, each drawing its own opponent per rollout"""
    league_power: float = 2.0
    """PFSP weighting: a member is drawn in proportion to (1 - win rate) ** league_power (0: uniform)"""
    league_window: int = 500
    """the learner's last rounds per league member that its win rate is estimated from"""
    bc_positions: int = 1_000_000
    """warm start: the most positions cloned from --bc-teacher before PPO (0: none)"""
    bc_teacher: str = "heuristic"
    """the agent spec labelling the warm start's positions"""
    bc_opponents: str = "rlcard_rule,heuristic,random"
    """opponents of the teacher's labelling games (agent specs or mixed tables a+b+c)"""
    bc_epochs: int = 4
    """passes of the cloning over the labelled positions"""
    bc_batch_size: int = 1024
    """minibatch size of the cloning"""
    bc_data: str = ""
    """an .npz of labelled positions: loaded when it exists, else written after labelling"""
    eval_every: int = 1_000_000
    """steps between evaluations during training (0: never)"""
    eval_games: int = 1000
    """games per evaluation opponent in those evaluations"""
    eval_opponents: str = "random,rlcard_rule,greedy,heuristic"
    """opponents of the evaluations (agent specs)"""
    final_eval_games: int = 10_000
    """games per evaluation opponent in the final table (0: skip it)"""
    deterministic_eval: bool = True
    """evaluate with the most likely legal action (False: sample from the policy)"""
    checkpoint_every: int = 2_000_000
    """steps between checkpoints in <run>/checkpoints/ (0: none)"""
    resume: str = ""
    """continue from a run directory, a checkpoints/ directory, a latest.json or a step_N.zip"""
    init: str = ""
    """start from a saved or shipped model's weights instead of the warm start"""
    progress: bool = True
    """show a progress bar"""
    tensorboard: bool = True
    """write TensorBoard logs to <run>/tb when tensorboard is installed"""
    backend: Literal["sb3", "batched", "rllib"] = "batched"
    """batched: masked PPO on the learner's device; sb3: MaskablePPO; rllib: Ray RLlib"""
    precision: Precision = "auto"
    """batched: auto (bf16 where the device has bf16 matrix units), fp32 or bf16"""
    num_env_runners: int = 1
    """rllib: Ray actors sampling games (0: sample on this process)"""
    address: str = ""
    """rllib: address of a running Ray cluster ('auto': this machine's); empty: a local Ray"""
    num_cpus: int = 2
    """rllib without --address: CPUs of the local Ray"""

    def __post_init__(self) -> None:
        # A field left at 0 takes its backend's value, so each backend's default run is its own best
        # measured shape and --backend sb3 runs exactly as before.
        for name, value in BACKEND_DEFAULTS.get(self.backend, {}).items():
            if getattr(self, name) == 0:
                setattr(self, name, value)


class Checked(NamedTuple):
    """What ``check_args`` read from the arguments, for ``main`` to build from."""

    rules: UnoRules
    mix: dict[str, float]
    """``--opponent-mix`` parsed: entry -> weight"""
    init: str
    """the model file ``--init`` names ("" without one)"""


def check_args(args: Args) -> Checked:
    """Refuse bad settings before anything is built or written (ValueError naming the setting); the rules and mix."""
    positive = [
        "num_envs",
        "n_steps",
        "batch_size",
        "n_epochs",
        "total_timesteps",
        "self_play_groups",
        "snapshot_pool_size",
        "snapshot_every",
        "eval_games",
        "num_cpus",
        "league_groups",
        "league_window",
        "bc_epochs",
        "bc_batch_size",
    ]
    for name in positive:
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    for name in [
        "eval_every",
        "final_eval_games",
        "checkpoint_every",
        "max_minutes",
        "torch_threads",
        "update_threads",
        "num_env_runners",
        "bc_positions",
        "league_power",
    ]:
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    if not 0 < args.learning_rate < 1:
        raise ValueError(f"--learning-rate must be in (0, 1), got {args.learning_rate}")
    if not 0 <= args.snapshot_latest_prob <= 1:
        raise ValueError(f"--snapshot-latest-prob must be in [0, 1], got {args.snapshot_latest_prob}")
    if args.backend == "rllib" and args.resume:
        raise ValueError(
            "--resume is for the sb3 and batched backends; an RLlib run restarts from its checkpoint with Algorithm.from_checkpoint"
        )
    if args.backend == "rllib" and args.bc_positions:
        raise ValueError(
            "--backend rllib has no warm start (--bc-positions is for the sb3 and batched backends): add --bc-positions 0"
        )
    if args.precision not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {args.precision!r}")
    if args.precision != "auto" and args.backend != "batched":
        raise ValueError(f"--precision is for the batched backend (--backend batched), got --backend {args.backend}")
    if args.privileged_critic and args.backend == "rllib":
        raise ValueError("--privileged-critic is for the sb3 and batched backends")
    if args.reward != "win" and args.backend == "rllib":
        raise ValueError("--reward is for the sb3 and batched backends (rllib's rounds pay win)")
    if not 0 <= args.history <= MAX_HISTORY:
        raise ValueError(
            f"--history must be in 0..{MAX_HISTORY} (public events the policy reads; 0: none), got {args.history}"
        )
    if args.history and (args.backend == "rllib" or args.privileged_critic):
        raise ValueError("--history is for the sb3 and batched backends, without --privileged-critic")
    if args.policy == "seq" and not args.history:
        raise ValueError(
            f"--policy seq reads the public history: give it --history K (events, 1..{MAX_HISTORY}; e.g. 32)"
        )
    check_device(args)
    mix = parse_mix(args.opponent_mix)
    check_int("--num-players", args.num_players, MIN_PLAYERS, MAX_PLAYERS)
    if args.learner_seat != "random" and not 0 <= args.learner_seat < args.num_players:
        raise ValueError(
            f"--learner-seat must be 'random' or a seat 0..{args.num_players - 1}, got {args.learner_seat!r}"
        )
    rules = parse_rules(args.rules)
    init = check_beliefs(args, rules, mix)
    return Checked(rules, mix, init)


def check_device(args: Args) -> None:
    """Refuse a torch device that this machine lacks, or one the run cannot use (ValueError)."""
    if args.device == "cpu":
        return
    try:
        device = torch.device(args.device)
    except RuntimeError as exc:
        raise ValueError(f"--device must be a torch device such as cpu, cuda or cuda:1, got {args.device!r}") from exc
    if device.type != "cuda" or not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count():
        raise ValueError(f"--device {args.device}: no such device here ({torch.cuda.device_count()} CUDA devices)")
    if args.backend == "rllib" or (warm_start_positions(args) and not args.resume):
        raise ValueError(
            f"--device {args.device} is for the sb3 and batched backends without a warm start: add --bc-positions 0"
        )


def build_env(
    args: Args, rules: UnoRules, groups: list[OpponentGroup], members: Sequence[Mapping[str, Agent]] = ()
) -> tuple[UnoSB3VecEnv, League]:
    """The training env of the opponent groups, and the league: the snapshot pool the ``self`` and ``league``
    groups draw from, with the fixed ``members`` of each league group (``league_members``)."""
    reads = max((history_length_of(a) for m in members for a in m.values()), default=0)
    for g in groups:
        if g.kind == LEAGUE and isinstance(g.agent, PendingSnapshot):
            g.agent.history_length = reads
    venv = UnoSB3VecEnv(
        args.num_envs,
        args.num_players,
        rules,
        seed=args.seed,
        learner_seat=args.learner_seat,
        opponents=[(g.agent, g.games) for g in groups],
        privileged=args.privileged_critic,
        history=env_history(args),
        history_form=POLICY_HISTORY_FORMS[args.policy],
        threads=args.env_threads,
        reward=args.reward,
    )
    league = League(
        venv,
        groups,
        members,
        args.snapshot_pool_size,
        args.league_window,
        args.league_power,
        args.snapshot_latest_prob,
        seed=args.seed,
    )
    return venv, league


def open_run(args: Args, model: Any, resume: Any, script: str) -> tuple[str, str]:
    """The run folder (``start_run``) with the model's logger; returns it and its checkpoints/ folder."""
    run_dir = start_run(args, script)
    checkpoint_dir = os.path.join(run_dir, "checkpoints")
    remove_partial(checkpoint_dir)  # temporaries of a write a kill interrupted
    if resume and os.path.isfile(os.path.join(run_dir, "progress.csv")):
        # SB3's CSV logger truncates progress.csv; keep the log of the steps before the checkpoint.
        os.replace(
            os.path.join(run_dir, "progress.csv"), os.path.join(run_dir, f"progress_before_{model.num_timesteps}.csv")
        )
    model.set_logger(configure(run_dir, log_formats(args.tensorboard)))
    return run_dir, checkpoint_dir


# Cloning a position costs about what a PPO step's update does (--bc-epochs and --n-epochs passes
# over each, 4 by default): one position per 8 steps keeps the warm start a small part of any run,
# and leaves the default run (and the shipped models' runs) at the full --bc-positions.
WARM_START_STEPS_PER_POSITION = 8


def update_thread_count(args: Args) -> int:
    """Torch threads of each update and of the warm start's cloning: ``--update-threads``, else every core on
    the batched backend (the games wait while it runs) and ``--torch-threads`` on the others (0: unchanged)."""
    return args.update_threads or (usable_cores() if args.backend == "batched" else 0)


def warm_start_positions(args: Args) -> int:
    """The positions the warm start clones on: ``--bc-positions`` scaled to the run (its docstring); none with ``--init``."""
    return 0 if args.init else min(args.bc_positions, args.total_timesteps // WARM_START_STEPS_PER_POSITION)


def warm_start(
    args: Args, model: Any, rules: UnoRules, teacher: Agent, opponents: Mapping[str, Sequence[Agent]]
) -> dict[str, Any]:
    """Expert iteration's first step: ``teacher`` (``--bc-teacher``) labels positions in games against
    ``opponents`` (``opponent_tables``; or ``--bc-data`` holds them), the policy is cloned on them (``training.expert``); returns
    the labelling and cloning figures."""
    watch = Stopwatch()
    positions = warm_start_positions(args)
    meta = {
        "teacher": args.bc_teacher,
        "opponents": args.bc_opponents,
        "rules": rules.to_dict(),
        "num_players": args.num_players,
        "seed": args.seed,
        "positions": positions,
        **({"history": args.history} if args.history else {}),
        **({"history_form": "tokens"} if POLICY_HISTORY_FORMS[args.policy] == "tokens" else {}),
    }
    if args.bc_data and os.path.isfile(args.bc_data):
        data, source = load_positions(args.bc_data, meta), f"loaded from {args.bc_data}"
    else:
        data = label_positions(
            teacher,
            opponents,
            rules,
            args.num_players,
            positions,
            seed=args.seed,
            history=args.history,
            history_form=POLICY_HISTORY_FORMS[args.policy],
        )
        source = f"labelled by {args.bc_teacher}"
        if args.bc_data:
            atomic_write(args.bc_data, lambda f: save_positions(f, data, meta))
    label_seconds, label_cpu = watch.seconds(), watch.cpu_seconds()
    with update_threads(update_thread_count(args)):  # the cloning is one long update
        stats: dict[str, Any] = clone(
            model.policy,
            data,
            args.bc_epochs,
            args.bc_batch_size,
            args.learning_rate,
            args.vf_coef,
            args.max_grad_norm,
            seed=args.seed,
        )
    stats.update(
        source=source,
        label_seconds=label_seconds,
        label_cpu_seconds=label_cpu,
        clone_seconds=watch.seconds() - label_seconds,
    )
    if positions < args.bc_positions:
        source += f" (--bc-positions {args.bc_positions:,} scaled to the run: --total-timesteps / 8)"
    print(
        f"warm start: {len(data):,} positions {source} ({label_seconds:.0f} s, {label_cpu:.0f} CPU-s), cloned in "
        f"{stats['clone_seconds']:.0f} s: held-out agreement with the teacher {stats['agreement_before']:.1%} -> "
        f"{stats['agreement_after']:.1%}"
    )
    return stats


def restore_run(resume: Any, model: Any, league: League) -> list[dict[str, Any]]:
    """Put back a checkpoint's run state (generators, snapshot pool and league, history); returns the history."""
    history: list[dict[str, Any]] = []
    restored = "weights only (no .state.pt beside it)"
    if resume.state:
        # After make_model: MaskablePPO.load reseeds the generators from the original seed.
        state = load_state(resume.state)
        restore_rng(state["rng"])
        league.load_state_dict(saved_league(state))
        history = state["history"]
        restored = f"run state restored ({league.describe()})"
    print(f"resumed from {resume.model} at step {model.num_timesteps:,}: {restored}")
    return history


def batched_learner(args: Args, model: Any, venv: Any, schedule: LinearSchedule, observers: list[Any]) -> BatchedPPO:
    """The batched backend's learner over ``model``'s policy (its precision printed first)."""
    precision = resolve_precision(args.precision, model.policy.device)
    print(precision_note(args.precision, precision, model.policy.device))
    # The model's settings: a new model's are the arguments', a resumed one's its checkpoint's (as on sb3).
    settings = PPOSettings(
        n_steps=model.n_steps,
        batch_size=model.batch_size,
        n_epochs=model.n_epochs,
        gamma=model.gamma,
        gae_lambda=model.gae_lambda,
        clip_range=float(model.clip_range(1.0)),
        ent_coef=model.ent_coef,
        vf_coef=model.vf_coef,
        max_grad_norm=model.max_grad_norm,
    )
    return BatchedPPO(model, venv, settings, lambda: schedule(1.0), precision, args.seed, observers)


def log_update(model: Any, stats: dict[str, float], seconds: float, trained: int) -> None:
    """One update's figures in the run's logs (SB3's keys, so progress.csv reads the same on either backend)."""
    for key, value in stats.items():
        model.logger.record(f"train/{key}", value)
    model.logger.record("time/fps", int(trained / max(seconds, 1e-9)))
    model.logger.record("time/total_timesteps", model.num_timesteps)
    model.logger.dump(model.num_timesteps)


def model_card(args: Args, rules: UnoRules, steps: int, script: str) -> dict[str, Any]:
    """The card saved beside every model of the run (``agents.model_card``): the table it is trained for,
    the command and arguments that made it, its step count."""
    command = command_line(args, script)
    fields = card_fields(args, rules)
    if args.backend == "batched":
        fields["precision"] = resolve_precision(args.precision, torch.device(args.device))
    return table_card(
        args.exp_name,
        rules,
        args.num_players,
        command,
        rules_name=args.rules,
        history=env_history(args),
        policy=args.policy,
        train_args=dataclasses.asdict(args),
        steps=int(steps),
        **fields,
    )


def progress_bar(args: Args, start_step: int) -> Any:
    """The training loop's progress bar (steps; off with ``--no-progress``)."""
    return tqdm(
        total=args.total_timesteps,
        initial=start_step,
        unit="step",
        unit_scale=True,
        disable=not args.progress,
        dynamic_ncols=True,
        mininterval=1.0,
    )


def learn_rollout(
    args: Args, model: Any, learner: BatchedPPO | None, callbacks: list[Any], seconds: float, trained: int
) -> None:
    """One rollout and its update on the run's backend (``learner`` for batched, else ``model.learn``)."""
    if learner is None:
        model.learn(args.num_envs * args.n_steps, reset_num_timesteps=False, log_interval=1, callback=callbacks)
    else:
        log_update(model, learner.learn_rollout(update_thread_count(args)), seconds, trained)


def run_summary(args: Args, model: Any, training: Stopwatch, start_step: int, model_path: str) -> dict[str, Any]:
    """The training figures of final_eval.json, printed as one line first."""
    trained, seconds, cpu = model.num_timesteps - start_step, training.seconds(), training.cpu_seconds()
    print(
        f"trained {trained:,} steps in {seconds / 60:.1f} min ({trained / max(seconds, 1e-9):,.0f} learner "
        f"steps/s wall, {trained / max(cpu, 1e-9):,.0f} per CPU-second of this process); model: {model_path}"
    )
    return {
        "args": dataclasses.asdict(args),
        "steps": model.num_timesteps,
        "train_seconds": seconds,
        "train_cpu_seconds": cpu,
        "steps_per_second": trained / max(seconds, 1e-9),
        "stopped_early": model.num_timesteps < args.total_timesteps,
        "start_step": start_step,
    }


def main(args: Args, script: str = "train.py") -> dict[str, Any]:
    """Train, save, evaluate (docs/training.md); returns what final_eval.json holds. ``script``: the
    command the run's command.txt and model card say made it (``train.py`` or ``uno-train``)."""
    rules, mix, init = check_args(args)
    clock = Stopwatch()
    # Every agent is built here, once, so that a bad spec fails before anything is written.
    evaluation = opponent_tables(args.eval_opponents, rules, args.num_players)
    if args.backend == "rllib":
        # Imported here: ray is a heavy optional dependency (the distributed extra).
        from training.rllib_trainer import main_rllib

        return main_rllib(args, rules, mix, evaluation, script)
    resume = find_checkpoint(args.resume) if args.resume else None
    groups = opponent_groups(
        mix,
        args.num_envs,
        rules,
        args.self_play_groups,
        args.league_groups,
        num_players=args.num_players,
    )
    members = league_members(parse_list(args.league_opponents), rules, groups)
    teacher = build_agent(args.bc_teacher, rules) if args.bc_positions else None
    bc_opponents = opponent_tables(args.bc_opponents, rules, args.num_players) if args.bc_positions else {}
    seed_everything(args.seed, args.torch_threads)
    # The categorical's argument checks are a noticeable share of an update and can never fail
    # here (masked logits).
    torch.distributions.Distribution.set_default_validate_args(False)
    venv, league = build_env(args, rules, groups, members)
    venv = learner_env(venv, args)
    schedule = LinearSchedule(args.learning_rate, args.total_timesteps, args.anneal_lr)
    model = make_model(args, venv, schedule, resume.model if resume else None)
    if init:
        start_from(model, init, args)
    if args.update_threads and args.backend == "sb3":
        with_update_threads(model, args.update_threads)
    run_dir, checkpoint_dir = open_run(args, model, resume, script)
    expert = None
    if teacher is not None and warm_start_positions(args) and not resume:
        expert = warm_start(args, model, rules, teacher, bc_opponents)
    league.start(model.policy, model.num_timesteps)
    wins = WinsByKind(groups)
    callbacks = [wins, league]
    history = restore_run(resume, model, league) if resume else []

    def evaluate(num_games: int, seed: int) -> list[dict[str, Any]]:
        learner = learner_agent(model.policy, args)
        return eval_rows(learner, evaluation, rules, num_games, seed)

    start_step = model.num_timesteps
    bar = progress_bar(args, start_step)
    snapshots, evals, checkpoints = (
        Every(n, start_step) for n in (args.snapshot_every, args.eval_every, args.checkpoint_every)
    )
    learner = batched_learner(args, model, venv, schedule, [wins, league]) if args.backend == "batched" else None
    training = Stopwatch(args.max_minutes)
    while model.num_timesteps < args.total_timesteps and not training.expired():
        schedule.done = model.num_timesteps
        learn_rollout(args, model, learner, callbacks, training.seconds(), model.num_timesteps - start_step)
        step = model.num_timesteps
        bar.update(step - bar.n)
        bar.set_postfix_str(wins.summary(), refresh=False)
        if snapshots.due(step):
            league.add_snapshot(model.policy, step)
        league.redraw()
        if evals.due(step):
            rows = evaluate(args.eval_games, seed=args.seed + step)
            history.append({"step": step, "minutes": training.seconds() / 60, "eval": rows})
            for row in rows:
                model.logger.record(f"eval/win_rate_{row['opponent']}", row["win_rate"])
            bar.write(eval_line(step, training.seconds() / 60, rows))
            if league_line := league.summary():
                bar.write(league_line)
        if checkpoints.due(step):
            state = {"rng": capture_rng(), "history": history, "league": league.state_dict()}
            card = model_card(args, rules, step, script)
            save_checkpoint(checkpoint_dir, step, model, state, card=card)
    bar.close()
    if model.num_timesteps < args.total_timesteps:
        print(f"stopped at {model.num_timesteps:,} steps: --max-minutes {args.max_minutes:g} reached")
    model_path = os.path.join(run_dir, "model.zip")
    atomic_write(model_path, lambda f: model.save(f))  # type: ignore[arg-type]  # sb3 saves to any binary file
    card = model_card(args, rules, model.num_timesteps, script)
    write_card(model_path, card)
    final = run_summary(args, model, training, start_step, model_path)
    final.update(
        history=history,
        resumed_from=resume.model if resume else None,
        warm_start=expert,
        league=league.summary(),
    )
    if args.final_eval_games:
        final["final_eval"] = evaluate(args.final_eval_games, seed=final_eval_seed(args.seed))
        print(final_table(final_title(args, model_path), final["final_eval"]))
    final["total_seconds"] = clock.seconds()
    write_summary(run_dir, final)
    print(f"\ntotal wall time {final['total_seconds'] / 60:.1f} min")
    venv.close()
    return final


def cli(argv: list[str] | None = None, script: str = "uno-train") -> None:
    """The command line: ``uno-train`` (the wheel's command) and ``python train.py`` (``script``)."""
    args = tyro.cli(Args, args=argv, prog=script, description=HELP)
    announce_compiling(script)
    try:
        main(args, script)
    except ValueError as exc:  # a bad setting: one line on stderr, not a traceback
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    cli(script="train.py")
