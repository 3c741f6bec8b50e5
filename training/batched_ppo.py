"""The batched learner (``train.py --backend batched``): masked PPO whose rollout buffer, GAE and
minibatches live on the learner's device, with bf16 autocast where the hardware has bf16 matrix units.

It trains the policy of a ``MaskablePPO`` (so its checkpoints, cards and every loader stay as they
are) on ``UnoSB3VecEnv``: one forward pass per engine call over every game, one host copy of the
actions per step, no per-step ``.item()``. Guide: docs/training.md, "The batched learner"."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
import torch

__all__ = [
    "PRECISIONS",
    "BatchedPPO",
    "PPOSettings",
    "Precision",
    "bf16_matrix_units",
    "resolve_precision",
    "rounds_won",
    "sample_masked",
]

Precision = Literal["auto", "fp32", "bf16"]
"""``train.py --precision``: ``auto`` is bf16 where ``bf16_matrix_units`` says so, else fp32."""
PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16")

# Masked logits: far below any real logit, yet finite so that 0 * log p stays 0 in the entropy.
MASKED_LOGIT = -1e8


@functools.cache
def _cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux lists them (empty where /proc/cpuinfo is absent)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def bf16_matrix_units(device: torch.device) -> bool:
    """Whether ``device`` multiplies bf16 matrices in hardware: a bf16 GPU, or a CPU with AMX or AVX512-BF16."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu":
        return bool({"amx_bf16", "avx512_bf16"} & _cpu_flags()) and torch.backends.mkldnn.is_available()
    return False


def resolve_precision(precision: str, device: torch.device) -> str:
    """``fp32`` or ``bf16`` for ``--precision`` on ``device`` (``auto``: bf16 where it has bf16 matrix units)."""
    if precision == "auto":
        return "bf16" if bf16_matrix_units(device) else "fp32"
    return precision


def precision_note(precision: str, chosen: str, device: torch.device) -> str:
    """The start-of-run line saying which precision the learner runs in and why."""
    if precision != "auto":
        return f"precision: {chosen} on {device} (--precision {precision})"
    why = "bf16 matrix units" if chosen == "bf16" else "no bf16 matrix units"
    return f"precision: {chosen} on {device} ({why}; --precision fp32|bf16 overrides)"


@dataclass(frozen=True)
class PPOSettings:
    """The PPO hyper-parameters of one run (``train.Args``'s fields of the same names)."""

    n_steps: int
    batch_size: int
    n_epochs: int
    gamma: float
    gae_lambda: float
    clip_range: float
    ent_coef: float
    vf_coef: float
    max_grad_norm: float


class StepObserver(Protocol):
    """What sees each env step's results (``WinsByKind``, ``League``): the rounds that ended, and which were won."""

    def record(self, won: np.ndarray, dones: np.ndarray) -> None: ...


def rounds_won(infos: Sequence[dict[str, Any]], dones: np.ndarray) -> np.ndarray:
    """Which games' rounds ended in a win this step, bool [num_envs], from ``UnoSB3VecEnv``'s ``is_success``
    (the reward tells it only under ``reward="win"``)."""
    won = np.zeros(len(dones), bool)
    for i in np.flatnonzero(dones):
        won[i] = infos[int(i)].get("is_success", False)
    return won


Obs = torch.Tensor | dict[str, torch.Tensor]


def _map(obs: Any, fn: Any) -> Any:
    """``fn`` over an observation: one array, or each entry of a history's dict."""
    return {k: fn(v) for k, v in obs.items()} if isinstance(obs, dict) else fn(obs)


def heads(policy: Any, obs: Obs) -> tuple[torch.Tensor, torch.Tensor]:
    """The policy's unmasked logits [B, A] and values [B] (``UnoMaskablePolicy.heads``)."""
    logits, values = policy.heads(obs)
    return logits, values.squeeze(-1)


def sample_masked(logits: torch.Tensor, mask: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """One legal action per row drawn from softmax(``logits``) by Gumbel-max, given uniforms in [0, 1).

    A uniform of exactly 0 would give its action -inf; the clamp keeps every noise finite, and the
    illegal actions are excluded after the noise, so no draw can pick one."""
    gumbel = -torch.log(-torch.log(uniform.clamp_min(torch.finfo(uniform.dtype).tiny)))
    return torch.argmax((logits + gumbel).masked_fill(~mask, -torch.inf), dim=1)


class BatchedPPO:
    """Masked PPO over every game of ``venv`` at once; ``rollout()`` then ``update()``, or ``learn_rollout()``.

    ``model`` is a ``MaskablePPO`` whose policy and optimizer this trains (its own rollout machinery is
    unused); ``observers`` see each step's won rounds and dones; ``lr`` gives the step size per update."""

    def __init__(
        self,
        model: Any,
        venv: Any,
        settings: PPOSettings,
        lr: Any,
        precision: str,
        seed: int,
        observers: Sequence[StepObserver] = (),
    ) -> None:
        self.model, self.venv, self.s, self.lr = model, venv, settings, lr
        self.policy = model.policy
        self.device = self.policy.device
        self.dtype = torch.bfloat16 if precision == "bf16" else torch.float32
        self.observers = list(observers)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed)
        self.num_envs = venv.num_envs
        obs = venv.reset()
        T, N = settings.n_steps, self.num_envs
        self.buf_obs = _map(obs, lambda v: torch.zeros((T, *v.shape), dtype=torch.float32, device=self.device))
        self.buf_mask = torch.zeros((T, N, venv.action_space.n), dtype=torch.bool, device=self.device)
        self.buf_action = torch.zeros((T, N), dtype=torch.int64, device=self.device)
        self.buf_logp, self.buf_value, self.buf_reward, self.buf_done = (
            torch.zeros((T, N), dtype=torch.float32, device=self.device) for _ in range(4)
        )
        self.obs, self.mask = obs, venv.action_masks()
        self.params = [p for p in self.policy.parameters() if p.requires_grad]
        self.shards = 1  # CPU threads of the update, each on its shard of every minibatch (threads())
        self._pool: ThreadPoolExecutor | None = None
        self._pool_size = 0

    def _device(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x).to(self.device, non_blocking=True)

    def autocast(self) -> Any:
        """The learner's autocast: bf16 matrix products with ``precision="bf16"``, else a no-op."""
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.dtype == torch.bfloat16)

    def _values(self, obs: Any) -> torch.Tensor:
        with torch.inference_mode(), self.autocast():
            return heads(self.policy, _map(obs, self._device))[1].float()

    def rollout(self) -> None:
        """Play ``n_steps`` decisions in every game, filling the buffers (the learner's values and log-probabilities)."""
        self.policy.set_training_mode(False)
        gamma = self.s.gamma
        for t in range(self.s.n_steps):
            obs_t = _map(self.obs, self._device)
            mask_t = self._device(self.mask)
            if isinstance(obs_t, dict):
                for k, v in obs_t.items():
                    self.buf_obs[k][t].copy_(v)
            else:
                self.buf_obs[t].copy_(obs_t)
            self.buf_mask[t].copy_(mask_t)
            with torch.inference_mode():
                with self.autocast():
                    logits, values = heads(self.policy, obs_t)
                logits = logits.float().masked_fill(~mask_t, MASKED_LOGIT)
                uniform = torch.rand(logits.shape, generator=self.gen, device=self.device)
                actions = sample_masked(logits, mask_t, uniform)
                log_p = torch.log_softmax(logits, dim=1).gather(1, actions[:, None]).squeeze(1)
            self.buf_action[t].copy_(actions)
            self.buf_logp[t].copy_(log_p)
            self.buf_value[t].copy_(values.float())
            self.venv.step_async(actions.cpu().numpy())
            self.obs, rewards, dones, infos = self.venv.step_wait()
            self.mask = self.venv.action_masks()
            rewards = np.asarray(rewards, np.float32)
            if dones.any():
                cut = [i for i in np.flatnonzero(dones) if infos[i].get("TimeLimit.truncated")]
                if cut:  # a round cut by the step limit is not lost: bootstrap from its last position
                    last = _stack([infos[i]["terminal_observation"] for i in cut])
                    rewards = rewards.copy()
                    rewards[cut] += gamma * self._values(last).cpu().numpy()
            if self.observers:
                won = rounds_won(infos, dones)
                for observer in self.observers:
                    observer.record(won, dones)
            self.buf_reward[t].copy_(self._device(rewards))
            self.buf_done[t].copy_(self._device(dones.astype(np.float32)))

    def advantages(self) -> tuple[torch.Tensor, torch.Tensor]:
        """GAE advantages and returns [n_steps, num_envs], on the device."""
        s = self.s
        next_value = self._values(self.obs)
        adv = torch.zeros_like(self.buf_reward)
        last = torch.zeros_like(next_value)
        for t in reversed(range(s.n_steps)):
            live = 1.0 - self.buf_done[t]  # a finished round's successor is a new deal
            nv = next_value if t == s.n_steps - 1 else self.buf_value[t + 1]
            delta = self.buf_reward[t] + s.gamma * nv * live - self.buf_value[t]
            last = delta + s.gamma * s.gae_lambda * live * last
            adv[t] = last
        return adv, adv + self.buf_value

    def update(self) -> dict[str, float]:
        """``n_epochs`` passes of clipped PPO over the rollout in minibatches; the update's means (one host sync)."""
        s = self.s
        adv, returns = self.advantages()
        n = s.n_steps * self.num_envs

        def flat(x: torch.Tensor) -> torch.Tensor:
            return x.reshape(n, *x.shape[2:])

        obs = _map(self.buf_obs, flat)
        mask, action, old_logp = flat(self.buf_mask), flat(self.buf_action), flat(self.buf_logp)
        adv, returns = flat(adv), flat(returns)
        optimizer = self.policy.optimizer
        for group in optimizer.param_groups:
            group["lr"] = self.lr()
        self.policy.set_training_mode(True)
        sums = torch.zeros(6, device=self.device)
        count = 0
        for _ in range(s.n_epochs):
            order = torch.randperm(n, generator=self.gen, device=self.device)
            for start in range(0, n, s.batch_size):
                i = order[start : start + s.batch_size]
                rows = {k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i]
                sums += self.step_minibatch(rows, mask[i], action[i], old_logp[i], adv[i], returns[i])
                count += 1
        means = (sums / max(count, 1)).tolist()
        names = ("policy_gradient_loss", "value_loss", "entropy_loss", "approx_kl", "clip_fraction", "loss")
        stats = dict(zip(names, means, strict=True))
        var = returns.var()
        stats["explained_variance"] = float(1 - (returns - flat(self.buf_value)).var() / var) if var > 0 else 0.0
        stats["learning_rate"] = float(optimizer.param_groups[0]["lr"])
        return stats

    @contextlib.contextmanager
    def threads(self, n: int) -> Iterator[None]:
        """Run the updates in the block on ``n`` threads (0: torch's current count).

        On a CPU each thread computes the gradient of its own shard of every minibatch with one intra-op
        thread, and the shards' gradients are summed in shard order: one wait per minibatch, where
        torch's own threads wait for each other at every operation, which on a core another process
        also runs costs more than the second thread gains. On a GPU it is torch's thread count."""
        before = torch.get_num_threads()
        n = n or before
        self.shards = n if self.device.type == "cpu" else 1
        torch.set_num_threads(1 if self.shards > 1 else n)
        try:
            yield
        finally:
            torch.set_num_threads(before)
            self.shards = 1

    def step_minibatch(
        self,
        obs: Obs,
        mask: torch.Tensor,
        action: torch.Tensor,
        old_logp: torch.Tensor,
        adv: torch.Tensor,
        returns: torch.Tensor,
    ) -> torch.Tensor:
        """One clipped-PPO step of the optimizer on a minibatch; its losses, KL and clip fraction (on the device)."""
        if adv.numel() > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        optimizer = self.policy.optimizer
        optimizer.zero_grad(set_to_none=True)
        if self.shards > 1 and adv.numel() >= 2 * self.shards:
            stats = self._sharded_backward(obs, mask, action, old_logp, adv, returns)
        else:
            loss, stats = self._loss(obs, mask, action, old_logp, adv, returns)
            loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, self.s.max_grad_norm)
        optimizer.step()
        return stats

    def _sharded_backward(self, obs: Obs, *rest: torch.Tensor) -> torch.Tensor:
        """The minibatch's gradients into ``.grad`` as the sum of its ``shards`` slices' on as many threads; its stats."""
        n = rest[0].shape[0]
        bounds = [n * k // self.shards for k in range(self.shards + 1)]

        def shard(k: int) -> tuple[tuple[torch.Tensor | None, ...], torch.Tensor]:
            part = slice(bounds[k], bounds[k + 1])
            weight = (bounds[k + 1] - bounds[k]) / n  # each shard's mean, weighted to the minibatch's mean
            loss, stats = self._loss(_map(obs, lambda v: v[part]), *(x[part] for x in rest))
            return torch.autograd.grad(loss * weight, self.params, allow_unused=True), stats * weight

        if self._pool is None or self._pool_size != self.shards:
            self._pool, self._pool_size = ThreadPoolExecutor(self.shards, thread_name_prefix="ppo-update"), self.shards
        results = list(self._pool.map(shard, range(self.shards)))
        for i, p in enumerate(self.params):
            grads: list[torch.Tensor] = [g for g in (r[0][i] for r in results) if g is not None]
            p.grad = functools.reduce(torch.add, grads) if grads else None
        return functools.reduce(torch.add, [stats for _, stats in results])

    def _loss(
        self,
        obs: Obs,
        mask: torch.Tensor,
        action: torch.Tensor,
        old_logp: torch.Tensor,
        adv: torch.Tensor,
        returns: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The clipped-PPO loss of rows whose advantages are normalised; with its losses, KL and clip fraction."""
        s = self.s
        with self.autocast():
            logits, values = heads(self.policy, obs)
        logits = logits.float().masked_fill(~mask, MASKED_LOGIT)
        log_p = torch.log_softmax(logits, dim=1)
        logp = log_p.gather(1, action[:, None]).squeeze(1)
        entropy = -(log_p.exp() * log_p).masked_fill(~mask, 0.0).sum(1)
        log_ratio = logp - old_logp
        ratio = log_ratio.exp()
        pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - s.clip_range, 1 + s.clip_range)).mean()
        value_loss = torch.nn.functional.mse_loss(values.float(), returns)
        entropy_loss = -entropy.mean()
        loss = pg_loss + s.ent_coef * entropy_loss + s.vf_coef * value_loss
        with torch.no_grad():
            approx_kl = ((ratio - 1) - log_ratio).mean()
            clipped = ((ratio - 1).abs() > s.clip_range).float().mean()
            stats = torch.stack([pg_loss, value_loss, entropy_loss, approx_kl, clipped, loss]).detach()
        return loss, stats

    def learn_rollout(self, update_threads: int = 0) -> dict[str, float]:
        """One rollout and its update (on ``update_threads`` threads, ``threads()``; 0: torch's current count);
        advances ``model.num_timesteps`` by ``n_steps * num_envs``."""
        self.rollout()
        with self.threads(update_threads):
            stats = self.update()
        self.model.num_timesteps += self.s.n_steps * self.num_envs
        return stats


def _stack(rows: list[Any]) -> Any:
    """Observations of several games (arrays, or a history's dicts) as one batch."""
    if isinstance(rows[0], dict):
        return {k: np.stack([r[k] for r in rows]) for k in rows[0]}
    return np.stack(rows)
