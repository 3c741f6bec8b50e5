"""The pieces of ``train.py``'s MaskablePPO run: the model, its learning-rate schedule, its logs, win counts per opponent kind."""

from __future__ import annotations

import collections
import contextlib
import importlib.util
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from agents.ppo import ACTIVATIONS, POLICY_EXTRACTORS, UnoMaskablePolicy, UnoPrivilegedPolicy

from .batched_ppo import rounds_won
from .opponents import OpponentGroup

__all__ = [
    "LinearSchedule",
    "WinsByKind",
    "log_formats",
    "make_model",
    "new_ppo",
    "update_threads",
    "with_update_threads",
]


class LinearSchedule:
    """Learning rate ``lr * (1 - done / total)``; ``done`` is set by the loop (picklable, unlike a closure)."""

    def __init__(self, lr: float, total: int, anneal: bool) -> None:
        self.lr, self.total, self.anneal, self.done = lr, max(int(total), 1), anneal, 0

    def __call__(self, _progress_remaining: float) -> float:
        if not self.anneal:
            return self.lr
        return self.lr * max(1.0 - self.done / self.total, 0.0)


def make_model(args: Any, venv: Any, schedule: LinearSchedule, resume: str | None = None) -> MaskablePPO:
    """``MaskablePPO`` for ``train.Args``: resumed from the ``.zip`` ``resume`` (its network and PPO
    settings, this schedule), else new."""
    if resume:
        model = MaskablePPO.load(resume, env=venv, device=getattr(args, "device", "cpu"))
        model.learning_rate = schedule
        model.lr_schedule = schedule
        return model
    privileged = getattr(args, "privileged_critic", False)
    policy_kwargs: dict[str, Any] = dict(
        features_extractor_class=POLICY_EXTRACTORS[getattr(args, "policy", "mlp")],
        features_extractor_kwargs=dict(hidden=tuple(args.hidden), activation=args.activation),
        net_arch=dict(pi=list(args.head), vf=list(args.head)),
        activation_fn=ACTIVATIONS[args.activation],
    )
    if privileged:
        policy_kwargs["actor_inputs"] = venv.actor_inputs
    return new_ppo(args, venv, schedule, policy_kwargs, UnoPrivilegedPolicy if privileged else UnoMaskablePolicy)


def new_ppo(
    args: Any, venv: Any, learning_rate: Any, policy_kwargs: dict[str, Any], policy: type = UnoMaskablePolicy
) -> MaskablePPO:
    """A new ``MaskablePPO`` with the PPO settings of ``args`` (``n_steps``, ``batch_size``,
    ``n_epochs``, ``gamma``, ``gae_lambda``, ``clip_range``, ``ent_coef``, ``vf_coef``,
    ``max_grad_norm``, ``seed``) on ``args.device`` (default the CPU): ``train.py``'s."""
    return MaskablePPO(
        policy,
        venv,
        learning_rate=learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_range,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        seed=args.seed,
        device=getattr(args, "device", "cpu"),
        verbose=0,
        policy_kwargs=policy_kwargs,
    )


@contextlib.contextmanager
def update_threads(threads: int) -> Iterator[None]:
    """Run the block on ``threads`` torch threads (0: the current count), then restore the count."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads or before)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def with_update_threads(model: MaskablePPO, threads: int) -> None:
    """Run ``model``'s PPO updates on ``threads`` torch threads; the rollouts keep the current count.

    The games are idle while the network updates, so the update can use every core; the
    rollouts' small forward passes gain nothing from threads."""
    update = model.train

    def train_threaded() -> None:
        with update_threads(threads):
            update()

    model.train = train_threaded  # type: ignore[method-assign]


class WinsByKind(BaseCallback):
    """The learner's last ``window`` finished rounds per opponent kind (won or not), read from each env step."""

    def __init__(self, groups: Sequence[OpponentGroup], window: int = 1000) -> None:
        super().__init__()
        self.kind_of_game = np.array([g.kind for g in groups for _ in range(g.games)], dtype=object)
        self.recent: dict[str, collections.deque[float]] = {g.kind: collections.deque(maxlen=window) for g in groups}

    def _on_step(self) -> bool:
        dones = self.locals["dones"]
        self.record(rounds_won(self.locals["infos"], dones), dones)
        return True

    def record(self, won: np.ndarray, dones: np.ndarray) -> None:
        """Count the rounds that ended this step, won or not."""
        if dones.any():
            for i in np.flatnonzero(dones):
                self.recent[self.kind_of_game[i]].append(bool(won[i]))

    def summary(self) -> str:
        """``kind rate`` per opponent kind, for the progress bar."""
        return " ".join(f"{k} {sum(r) / max(len(r), 1):.0%}" for k, r in self.recent.items())


def log_formats(tensorboard: bool) -> list[str]:
    """CSV, plus TensorBoard when asked for and installed (skipped quietly otherwise)."""
    return ["csv", "tensorboard"] if tensorboard and importlib.util.find_spec("tensorboard") is not None else ["csv"]
