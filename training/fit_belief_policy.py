"""Fine-tune a trained policy into one that reads the round through the belief network.

    python -m training.fit_belief_policy                                  # from `pretrained`, 6M steps
    python -m training.fit_belief_policy --init runs/b1/model.zip --exp-name b2   # continue a run

The policy (``agents.belief_policy.BeliefPolicyAgent``) reads the observation and, per other
seat, the belief network's reading of the whole round (``agents.beliefs.net.policy_inputs``).
The run:

1. builds ``--num-envs`` games of ``UnoSB3VecEnv(history=EVIDENCE_ROWS)`` against the
   ``--opponents`` mix, wrapped so that the learner's observation is the observation followed
   by those inputs (``BeliefInputs``);
2. copies the ``--base`` policy's weights into a network as wide as the new input, with the new
   input columns at zero weight (``widen``): the run starts from the base policy's play, so it
   can only learn what the belief adds (or continues the ``--init`` run's model);
3. trains ``MaskablePPO`` for ``--total-timesteps`` learner decisions (or ``--max-minutes``), the
   learning rate annealed linearly to 0;
4. writes ``<output-dir>/<exp-name>/model.zip``, its card ``model.json`` (``agents.model_card``)
   and ``run.json`` (the arguments, command, commit, times, machine, steps and the mean result
   of the learner's recent rounds at every rollout).

``--ship RUN_DIR`` (no training) copies a finished run's model into ``agents/pretrained`` as
``belief_policy.zip`` (a 4-player run's as ``belief_policy-4p.zip``) with its card (``ship``):
the searches' ``"belief"`` blueprint at that table.

Why not ``train.py``: its models read the observation (or raw history rows) and it starts from
a random or cloned policy; this recipe widens a trained one, and its inputs need the belief
network, which the env layer cannot import. Measure the result with
``python -m benchmarks.search_agent --agents pretrained agents.belief_policy:... --duplicate``
(``benchmarks/results/training.md`` has the runs and their figures).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import tyro
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import VecEnvWrapper

from agents.belief_policy import input_size
from agents.beliefs.net import EVIDENCE_ROWS, MODEL_PATHS, POLICY_INPUTS, BeliefNet, policy_inputs
from agents.model_card import commit_at, machine, table_card, utc, write_card
from agents.ppo import load_model
from agents.pretrained import model_path
from uno_env import UnoRules
from uno_env.sb3_vec_env import UnoSB3VecEnv

from .opponents import LEAGUE, SELF, opponent_groups, parse_mix
from .sb3 import new_ppo


@dataclass
class Args:
    exp_name: str = "belief_policy"
    """name of the run: written to <output_dir>/<exp_name>/"""
    output_dir: str = "runs"
    """directory holding the runs"""
    base: str = "pretrained"
    """the trained policy to widen: a shipped model's name or a train.py model .zip of the same table"""
    init: str = ""
    """a model .zip of this recipe to continue instead (empty: widen --base)"""
    num_players: int = 2
    """players per table: 2 or 4 (a shipped belief network's)"""
    opponents: str = "0.5*heuristic,0.25*rlcard_rule,0.25*pretrained"
    """opponent mix, 'weight*spec,...': agents.registry specs that read observations, or mixed tables 'a+b+c' (one per other seat)"""
    total_timesteps: int = 6_000_000
    """learner decisions to train on"""
    max_minutes: float = 0.0
    """wall-clock limit in minutes (0: none)"""
    num_envs: int = 256
    """games played at once"""
    n_steps: int = 64
    """learner decisions per game per rollout"""
    batch_size: int = 4096
    """minibatch size of the PPO update"""
    n_epochs: int = 4
    """passes over each rollout"""
    learning_rate: float = 2e-4
    """Adam step size at the start, annealed linearly to 0 (lower than train.py's: a trained policy is tuned)"""
    gamma: float = 0.999
    """discount factor (train.py's)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.003
    """entropy bonus coefficient (pretrained's recipe)"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    seed: int = 5
    """seed of the games, the opponents and torch"""
    torch_threads: int = 1
    """torch CPU threads"""
    ship: str = ""
    """no training: copy this finished run's model into agents/pretrained as belief_policy.zip (4 players: belief_policy-4p.zip), with its card"""
    note: str = ""
    """with --ship: free text for the card, what the run does not record (the machine's load, say)"""


class BeliefInputs(VecEnvWrapper):
    """A history env's dict observations → the observation followed by ``policy_inputs`` (a Box).

    ``zero=True`` feeds zeros instead of the belief: the same run without what it reads (a control)."""

    def __init__(self, venv: UnoSB3VecEnv, num_players: int, zero: bool = False) -> None:
        space_in = venv.observation_space
        assert isinstance(space_in, spaces.Dict), "BeliefInputs wraps a history env (UnoSB3VecEnv(history=K))"
        box = space_in["observation"]
        assert isinstance(box, spaces.Box)
        width = POLICY_INPUTS * (num_players - 1)
        space = spaces.Box(
            np.concatenate([box.low, np.zeros(width, np.float32)]),
            np.concatenate([box.high, np.ones(width, np.float32)]),
            dtype=np.float32,
        )
        super().__init__(venv, observation_space=space)
        self.num_players, self.width, self.zero = num_players, width, zero
        self.net = BeliefNet(MODEL_PATHS[num_players])

    def inputs(self, o: dict[str, np.ndarray]) -> np.ndarray:
        """The wide observation of a dict observation (batched, or one game's as in ``terminal_observation``)."""
        obs, rows, counts = (np.asarray(o[k]) for k in ("observation", "history", "history_counts"))
        one = obs.ndim == 1
        if one:
            obs, rows, counts = obs[None], rows[None], counts[None]
        extra = (
            np.zeros((obs.shape[0], self.width), np.float32)
            if self.zero
            else policy_inputs(obs, rows, counts, self.net, self.num_players)
        )
        out = np.concatenate([obs, extra], axis=1)
        return out[0] if one else out

    def reset(self) -> np.ndarray:
        return self.inputs(self.venv.reset())  # type: ignore[arg-type]

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = self.inputs(info["terminal_observation"])
        return self.inputs(obs), rewards, dones, infos  # type: ignore[arg-type]

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()  # type: ignore[attr-defined]


def widen(model: MaskablePPO, base: MaskablePPO) -> None:
    """Copy ``base``'s weights into ``model``, whose input is wider: the extra input columns get
    zero weight and scale 1, so ``model`` acts and values exactly as ``base`` at the start."""
    mine = model.policy.state_dict()
    theirs = base.policy.state_dict()
    if set(mine) != set(theirs):
        raise ValueError("the base policy's layers differ from the new one's: widen a train.py model of the same shape")
    for key, value in theirs.items():
        if key.endswith("trunk.0.weight"):
            w = torch.zeros_like(mine[key])
            w[:, : value.shape[1]] = value
            mine[key] = w
        elif key.endswith(".scale"):
            s = torch.ones_like(mine[key])
            s[: value.shape[0]] = value
            mine[key] = s
        else:
            mine[key] = value
    model.policy.load_state_dict(mine)


def build(args: Args) -> tuple[MaskablePPO, BeliefInputs]:
    """The env and the model (widened from ``--base``, or ``--init``'s), ready to learn."""
    if args.num_players not in MODEL_PATHS:
        raise ValueError(f"--num-players must be one of {sorted(MODEL_PATHS)}, got {args.num_players}")
    rules = UnoRules()
    mix = parse_mix(args.opponents)
    if {SELF, LEAGUE} & set(mix):
        raise ValueError(
            f"--opponents names agents or mixed tables, not {SELF!r} or {LEAGUE!r}: got {args.opponents!r}"
        )
    opponents = [(g.agent, g.games) for g in opponent_groups(mix, args.num_envs, rules, num_players=args.num_players)]
    venv = BeliefInputs(
        UnoSB3VecEnv(
            args.num_envs,
            args.num_players,
            rules,
            learner_seat="random",
            opponents=opponents,
            seed=args.seed,
            history=EVIDENCE_ROWS,
        ),
        args.num_players,
    )
    base = load_model(args.base if args.base.endswith(".zip") else model_path(args.base))
    model = new_ppo(args, venv, LinearSchedule(args.learning_rate, 0.0, 1.0), base.policy_kwargs)
    if args.init:
        model.policy.load_state_dict(MaskablePPO.load(args.init, device="cpu").policy.state_dict())
    else:
        widen(model, base)
    return model, venv


class _Progress(BaseCallback):
    """Stops at the time limit; keeps the steps, seconds and mean result of recent rounds per rollout."""

    def __init__(self, max_minutes: float) -> None:
        super().__init__()
        self.max_minutes, self.start = max_minutes, time.time()
        self.log: list[list[Any]] = []

    def _on_step(self) -> bool:
        return not self.max_minutes or time.time() - self.start < 60 * self.max_minutes

    def _on_rollout_end(self) -> None:
        results = [e["r"] for e in self.model.ep_info_buffer or ()]
        mean = float(np.mean(results)) if results else None
        self.log.append([int(self.num_timesteps), round(time.time() - self.start, 1), mean])


def main(args: Args) -> str:
    """Train (module docs); returns the model's path."""
    torch.set_num_threads(args.torch_threads)
    out = os.path.join(args.output_dir, args.exp_name)
    os.makedirs(out, exist_ok=True)
    model, venv = build(args)
    progress = _Progress(args.max_minutes)
    cpu = time.process_time()
    started = utc()
    model.learn(args.total_timesteps, callback=progress)
    path = os.path.join(out, "model.zip")
    model.save(path)
    venv.close()
    run = {
        "args": asdict(args),
        "command": "python -m training.fit_belief_policy " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "commit": commit_at(time.time()),
        "started": started,
        "finished": utc(),
        "machine": machine(),
        "steps": int(model.num_timesteps),
        "minutes": round((time.time() - progress.start) / 60, 2),
        "cpu_minutes": round((time.process_time() - cpu) / 60, 2),
        "rollouts": progress.log,
    }
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(run, f, indent=1)
    write_card(path, policy_card(args.exp_name, run, model_file="model.zip"))
    print(f"{run['steps']:,} steps in {run['minutes']} min; the model is {path}")
    return path


def policy_card(name: str, run: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The card (``agents.model_card``) of a belief policy named ``name`` from its run's record
    ``run`` (``run.json``), then ``extra``."""
    args = Args(**run["args"])
    base = args.base if args.base.endswith(".zip") else model_path(args.base)
    rules = UnoRules()
    return table_card(
        name,
        rules,
        args.num_players,
        run["command"],
        rules_name="classic",
        history=EVIDENCE_ROWS,
        **{k: run[k] for k in ("commit", "started", "finished", "machine", "steps")},
        train_args=run["args"],
        train_minutes=run["minutes"],
        train_cpu_minutes=run["cpu_minutes"],
        input_size=input_size(rules, args.num_players),
        activation=load_model(base).policy_kwargs["features_extractor_kwargs"].get("activation", "relu"),
        **extra,
    )


def ship(run_dir: str, note: str = "", out_dir: str = "", name: str = "") -> str:
    """Copy ``run_dir``'s model into ``out_dir`` (default: the ``agents.pretrained`` folder) as
    ``NAME.zip``, with its card ``NAME.json`` (``policy_card``, with the model's size and hash and
    the ``note``). ``NAME`` defaults to ``belief_policy`` at 2 players, ``belief_policy-4p`` at 4.
    Returns the card's path."""
    with open(os.path.join(run_dir, "run.json")) as f:
        run = json.load(f)
    num_players = run["args"]["num_players"]
    name = name or ("belief_policy" if num_players == 2 else f"belief_policy-{num_players}p")
    out_dir = out_dir or os.path.dirname(os.path.abspath(model_path("pretrained")))
    model = os.path.join(out_dir, f"{name}.zip")
    shutil.copyfile(os.path.join(run_dir, "model.zip"), model)
    data = open(model, "rb").read()
    card = policy_card(
        name,
        run,
        model_file=f"{name}.zip",
        model_bytes=len(data),
        model_sha256=hashlib.sha256(data).hexdigest(),
        note=note,
    )
    return write_card(model, card)


if __name__ == "__main__":
    cli = tyro.cli(Args)
    if cli.ship:
        print(ship(cli.ship, cli.note))
    else:
        main(cli)
