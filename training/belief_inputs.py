"""``train.py --beliefs net`` and ``--init``: a policy that reads, besides its observation, the belief
network's reading of the round (guide: docs/training.md, "A policy that reads the belief network")."""

from __future__ import annotations

import inspect
import os
from typing import Any, Literal, get_args

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnvWrapper

from agents.belief_policy import BeliefPolicyAgent, input_size
from agents.beliefs.net import EVIDENCE_ROWS, MODEL_PATHS, POLICY_INPUTS, BeliefNet, policy_inputs, reads_rules
from agents.ppo import PPOAgent, load_model
from agents.pretrained import BELIEF_POLICIES, PRETRAINED, model_path
from uno_env import UnoRules

from .opponents import LEAGUE, SELF

__all__ = [
    "BELIEF_CHOICES",
    "BeliefInputs",
    "Beliefs",
    "card_fields",
    "check_beliefs",
    "env_history",
    "learner_agent",
    "learner_env",
    "start_from",
    "widen",
]

Beliefs = Literal["none", "net"]
"""What the policy reads besides its observation (``train.py --beliefs``)."""
BELIEF_CHOICES: tuple[str, ...] = get_args(Beliefs)


def check_beliefs(args: Any, rules: UnoRules, mix: dict[str, float]) -> str:
    """Refuse ``--beliefs`` and ``--init`` settings the run cannot keep (``mix``: the parsed ``--opponent-mix``),
    before anything is built; returns the model file ``--init`` names ("" without one)."""
    if args.beliefs not in BELIEF_CHOICES:
        raise ValueError(f"--beliefs must be one of {', '.join(BELIEF_CHOICES)}, got {args.beliefs!r}")
    if args.init and args.resume:
        raise ValueError("--init starts a new run from a model's weights; --resume continues a run: give one")
    if args.init and args.backend == "rllib":
        raise ValueError("--init is for the sb3 and batched backends")
    init = init_path(args.init) if args.init else ""
    if args.beliefs == "none":
        return init
    if args.num_players not in MODEL_PATHS:
        raise ValueError(
            f"--beliefs net reads a belief network, trained for {sorted(MODEL_PATHS)} players: "
            f"got --num-players {args.num_players}"
        )
    if not reads_rules(rules):
        raise ValueError(f"--beliefs net reads a belief network trained on classic rules, not --rules {args.rules}")
    if args.backend == "rllib" or args.privileged_critic or args.history or args.policy != "mlp":
        raise ValueError(
            "--beliefs net trains an MLP over the observation and the belief network's reading: the sb3 or batched "
            "backend, "
            "--policy mlp, no --history and no --privileged-critic"
        )
    if {SELF, LEAGUE} & set(mix):
        raise ValueError(
            f"--beliefs net plays agents or mixed tables, not {SELF!r} or {LEAGUE!r} (their snapshots would play "
            f"without the belief): got --opponent-mix {args.opponent_mix!r}"
        )
    if args.bc_positions and not args.init:
        raise ValueError(
            "--beliefs net has no cloned warm start (each position's history is too big to keep): "
            "add --bc-positions 0, or widen a trained policy with --init MODEL"
        )
    return init


def env_history(args: Any) -> int:
    """The history rows the learner's env keeps: the belief network's with beliefs, else ``--history``."""
    return EVIDENCE_ROWS if args.beliefs == "net" else int(args.history)


def learner_env(venv: Any, args: Any) -> Any:
    """The env the learner trains on: ``venv`` (a ``history=env_history(args)`` env) read through the belief."""
    return BeliefInputs(venv, args.num_players) if args.beliefs == "net" else venv


class BeliefInputs(VecEnvWrapper):
    """A history env's dict observations → the observation followed by ``policy_inputs`` (a Box).

    ``zero=True`` feeds zeros instead of the belief: the same run without what it reads (a control)."""

    def __init__(self, venv: Any, num_players: int, zero: bool = False) -> None:
        space_in = venv.observation_space
        if not isinstance(space_in, spaces.Dict) or not isinstance(box := space_in["observation"], spaces.Box):
            raise ValueError("BeliefInputs wraps a history env (UnoSB3VecEnv(history=K))")
        width = POLICY_INPUTS * (num_players - 1)
        space = spaces.Box(
            np.concatenate([box.low, np.zeros(width, np.float32)]),
            np.concatenate([box.high, np.ones(width, np.float32)]),
            dtype=np.float32,
        )
        super().__init__(venv, observation_space=space)
        self.num_players, self.width, self.zero = num_players, width, zero
        self.net = BeliefNet(MODEL_PATHS[num_players], num_players)

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

    # A checkpoint pickles the model's update hook (training.sb3.with_update_threads) and with it
    # this env; VecEnvWrapper keeps its class's members, which pickle cannot take.
    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "class_attributes"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.class_attributes = dict(inspect.getmembers(self.__class__))


def learner_agent(policy: Any, args: Any, name: str = "ppo") -> Any:
    """The live ``policy`` as the agent the run's evaluations seat: it reads what the learner reads."""
    deterministic = args.deterministic_eval
    if args.beliefs == "net":
        return BeliefPolicyAgent(policy, args.num_players, deterministic=deterministic, name=name)
    return PPOAgent(policy, deterministic=deterministic, name=name)


def card_fields(args: Any, rules: UnoRules) -> dict[str, Any]:
    """What a model's card adds for its ``--beliefs``: nothing, or the beliefs, the input width and the activation
    (``BeliefPolicyAgent`` reads them)."""
    if args.beliefs == "none":
        return {}
    return {
        "beliefs": args.beliefs,
        "input_size": input_size(rules, args.num_players),
        "activation": args.activation,
    }


def init_path(init: str) -> str:
    """The model file ``--init`` names: a shipped model's name or a path (ValueError when there is no such file)."""
    path = model_path(init) if init in PRETRAINED + BELIEF_POLICIES else init
    if not os.path.isfile(path):
        raise ValueError(
            f"--init {init}: no such model file; give a run's model.zip or a shipped model "
            f"({', '.join(PRETRAINED + BELIEF_POLICIES)})"
        )
    return path


def start_from(model: Any, path: str, args: Any) -> None:
    """``--init``: ``model`` takes the weights of the saved model at ``path`` (``check_beliefs``' reading of
    ``args.init``); with ``--beliefs net`` one that reads only the observation is widened (``widen``). ValueError
    when the networks differ."""
    base = load_model(path)
    activation = base.policy_kwargs.get("features_extractor_kwargs", {}).get("activation", "relu")
    if activation != args.activation:
        raise ValueError(f"--init {args.init} was trained with --activation {activation}: give the same")
    widen(model, base, allow=args.beliefs == "net", name=args.init)


def widen(model: Any, base: Any, allow: bool = True, name: str = "the base policy") -> None:
    """Copy ``base``'s weights into ``model``; where ``model`` reads more inputs (``allow``), the extra input
    columns get zero weight and scale 1, so ``model`` acts and values exactly as ``base`` at the start."""
    mine = model.policy.state_dict()
    theirs = base.policy.state_dict()
    if set(mine) != set(theirs):
        raise ValueError(
            f"{name}'s layers differ from this run's network ({sorted(set(mine) ^ set(theirs))[:3]}...): "
            "give a train.py model of the same network (--policy, --hidden, --head, --privileged-critic)"
        )
    for key, value in theirs.items():
        want = mine[key]
        first = key.endswith(("trunk.0.weight", ".scale"))
        wider = first and allow and want.shape[:-1] == value.shape[:-1] and want.shape[-1] > value.shape[-1]
        if want.shape == value.shape:
            mine[key] = value
        elif wider and key.endswith(".scale"):
            mine[key] = torch.cat([value, torch.ones(want.shape[-1] - value.shape[-1], dtype=want.dtype)])
        elif wider:
            mine[key] = torch.cat([value, torch.zeros(*want.shape[:-1], want.shape[-1] - value.shape[-1])], dim=-1)
        else:
            raise ValueError(
                f"{name}'s {key} is {tuple(value.shape)}, this run's {tuple(want.shape)}: give a model of the same "
                "--hidden and --head (and, to widen, one that reads the observation alone, for --beliefs net)"
            )
    model.policy.load_state_dict(mine)
