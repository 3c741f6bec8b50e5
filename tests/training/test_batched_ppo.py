"""The batched learner (``train.py --backend batched``): legal sampling, GAE, the update, save/resume and the card."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import ROOT, TINY_PPO

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch
from stable_baselines3.common.buffers import RolloutBuffer

from agents.ppo import PPOAgent
from agents.registry import make_agent
from training.batched_ppo import BatchedPPO, PPOSettings, bf16_matrix_units, resolve_precision, sample_masked
from training.main import Args, build_env, check_args
from training.opponents import opponent_groups, parse_mix
from training.sb3 import LinearSchedule, make_model
from uno_env import parse_rules

BATCHED = [*TINY_PPO, "--backend", "batched", "--no-progress", "--eval-every", "0"]


def learner(num_players: int = 2, precision: str = "fp32", **overrides) -> BatchedPPO:
    """A small batched learner against random and heuristic opponents."""
    args = Args(
        num_players=num_players,
        num_envs=32,
        n_steps=16,
        batch_size=128,
        n_epochs=1,
        hidden=(32,),
        backend="batched",
        bc_positions=0,
        opponent_mix="0.5*random,0.5*heuristic",
        **overrides,
    )
    rules = check_args(args).rules
    groups = opponent_groups(parse_mix(args.opponent_mix), args.num_envs, rules, 1, 1, num_players=num_players)
    venv, _ = build_env(args, rules, groups, [])
    schedule = LinearSchedule(args.learning_rate, args.total_timesteps, args.anneal_lr)
    model = make_model(args, venv, schedule)
    settings = PPOSettings(**{k: getattr(args, k) for k in PPOSettings.__dataclass_fields__})
    return BatchedPPO(model, venv, settings, lambda: schedule(1.0), precision, args.seed)


@pytest.mark.parametrize("num_players, precision", [(2, "fp32"), (4, "fp32"), (3, "bf16")])
def test_every_sampled_action_is_legal_and_the_buffers_hold_the_rollout(num_players, precision):
    ppo = learner(num_players, precision)
    for _ in range(3):
        ppo.rollout()
        chosen = ppo.buf_mask.gather(2, ppo.buf_action[..., None]).squeeze(-1)
        assert bool(chosen.all()), "an illegal action was sampled"
        assert bool((ppo.buf_logp <= 1e-6).all()) and bool(torch.isfinite(ppo.buf_logp).all())
        assert set(np.unique(ppo.buf_done.numpy())) <= {0.0, 1.0}
        stats = ppo.update()
        assert all(np.isfinite(v) for v in stats.values()), stats


def test_the_sampler_never_draws_an_illegal_action_whatever_the_uniforms():
    """A uniform of exactly 0 (torch.rand can draw one) or near 1 at any action, one legal action or many."""
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(512, 116, generator=gen) * 30
    mask = torch.rand(512, 116, generator=gen) < 0.05
    mask[torch.arange(512), torch.randint(0, 116, (512,), generator=gen)] = True
    mask[:64] = False
    mask[torch.arange(64), torch.arange(64)] = True  # a single legal action
    for uniform in (torch.zeros(512, 116), torch.full((512, 116), 1 - 2**-24), torch.rand(512, 116, generator=gen)):
        for row_logits in (logits, logits.masked_fill(~mask, -1e8)):
            actions = sample_masked(row_logits, mask, uniform)
            assert bool(mask[torch.arange(512), actions].all())
    # The draws follow the masked softmax: the empirical frequencies of one row over many uniforms.
    row = torch.tensor([[0.0, 1.0, 2.0, 5.0]])
    legal = torch.tensor([[True, True, True, False]])
    draws = sample_masked(row.expand(40000, 4), legal.expand(40000, 4), torch.rand(40000, 4, generator=gen))
    freq = torch.bincount(draws, minlength=4).float() / 40000
    expected = torch.softmax(row.masked_fill(~legal, -torch.inf), dim=1)[0]
    torch.testing.assert_close(freq, expected, atol=0.01, rtol=0)


def test_gae_equals_stable_baselines3s():
    """The same rewards, values and round ends give SB3's advantages and returns (float32 sums: rtol 1e-4)."""
    ppo = learner()
    T, N = ppo.s.n_steps, ppo.num_envs
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(T, N)).astype(np.float32)
    values = rng.normal(size=(T, N)).astype(np.float32)
    dones = rng.random((T, N)) < 0.1
    ppo.buf_reward.copy_(torch.as_tensor(rewards))
    ppo.buf_value.copy_(torch.as_tensor(values))
    ppo.buf_done.copy_(torch.as_tensor(dones, dtype=torch.float32))
    next_value = ppo._values(ppo.obs).numpy()
    adv, returns = ppo.advantages()

    box = ppo.venv.observation_space
    buffer = RolloutBuffer(T, box, ppo.venv.action_space, gamma=ppo.s.gamma, gae_lambda=ppo.s.gae_lambda, n_envs=N)
    buffer.rewards[:] = rewards
    buffer.values[:] = values
    # SB3 marks the first step of a round (episode_starts); a round ended at step t starts one at t + 1.
    buffer.episode_starts[1:] = dones[:-1]
    buffer.compute_returns_and_advantage(torch.as_tensor(next_value), dones[-1])
    np.testing.assert_allclose(adv.numpy(), buffer.advantages, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(returns.numpy(), buffer.returns, rtol=1e-4, atol=1e-5)


def test_the_update_moves_the_policy_and_keeps_it_loadable(tmp_path):
    ppo = learner()
    before = [p.detach().clone() for p in ppo.policy.parameters()]
    ppo.learn_rollout()
    assert ppo.model.num_timesteps == ppo.s.n_steps * ppo.num_envs
    assert any(not torch.equal(b, p) for b, p in zip(before, ppo.policy.parameters(), strict=True))
    path = tmp_path / "m.zip"
    ppo.model.save(path)
    with pytest.warns(UserWarning, match="has no card"):
        agent = PPOAgent(str(path), num_players=2)
    obs = ppo.obs[:4]
    mask = ppo.mask[:4]
    actions = agent.act(obs, mask, np.random.default_rng(0))
    assert mask[np.arange(4), actions].all()


@pytest.mark.parametrize("shards", [2, 3])
def test_an_update_on_several_threads_equals_it_on_one(shards):
    """The shards' gradients summed are the minibatch's (float32 sums: rtol 1e-4), and so are the stats."""
    a, b = learner(), learner()
    for ppo in (a, b):
        ppo.rollout()
    with b.threads(shards):
        assert b.shards == shards and torch.get_num_threads() == 1
        stats_b = b.update()
    assert b.shards == 1
    stats_a = a.update()
    for key in ("policy_gradient_loss", "value_loss", "entropy_loss", "approx_kl", "clip_fraction"):
        assert stats_b[key] == pytest.approx(stats_a[key], rel=1e-3, abs=1e-6), key
    for p, q in zip(a.policy.parameters(), b.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-6)


def test_the_same_seed_trains_the_same_weights():
    a, b = learner(), learner()
    for ppo in (a, b):
        ppo.learn_rollout()
    for p, q in zip(a.policy.parameters(), b.policy.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-6)


def test_precision_is_detected_from_the_device_and_can_be_forced():
    cpu = torch.device("cpu")
    assert resolve_precision("fp32", cpu) == "fp32" and resolve_precision("bf16", cpu) == "bf16"
    assert resolve_precision("auto", cpu) == ("bf16" if bf16_matrix_units(cpu) else "fp32")
    with pytest.raises(ValueError, match="--precision must be one of auto, fp32, bf16"):
        check_args(Args(backend="batched", precision="fp16"))  # type: ignore[arg-type]


def run(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"train.py failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_a_batched_run_saves_resumes_and_its_model_plays_by_path(tmp_path):
    """Warm start, checkpoints, --resume and the card, as an sb3 run has them; the model loads as any model does."""
    out = str(tmp_path)
    proc = run(
        *BATCHED,
        *("--bc-positions", "256", "--bc-epochs", "1", "--checkpoint-every", "1024", "--final-eval-games", "40"),
        *("--eval-opponents", "random", "--precision", "fp32", "--output-dir", out, "--exp-name", "b"),
    )
    assert "precision: fp32 on cpu (--precision fp32)" in proc.stdout
    assert "warm start: 256 positions labelled by heuristic" in proc.stdout
    run_dir = tmp_path / "b"
    card = json.loads((run_dir / "model.json").read_text())
    assert card["precision"] == "fp32" and card["train_args"]["backend"] == "batched" and card["steps"] == 2048
    assert json.loads((run_dir / "checkpoints" / "step_1024.json").read_text())["precision"] == "fp32"
    agent = make_agent(str(run_dir / "model.zip"), parse_rules("classic"))
    assert isinstance(agent, PPOAgent)
    args = BATCHED[:]
    args[args.index("--total-timesteps") + 1] = "3072"
    resumed = run(
        *args,
        *("--resume", str(run_dir / "checkpoints" / "step_1024.zip"), "--final-eval-games", "0"),
        *("--output-dir", out, "--exp-name", "r"),
    )
    assert "resumed from" in resumed.stdout and "at step 1,024" in resumed.stdout
    assert json.loads((tmp_path / "r" / "final_eval.json").read_text())["steps"] == 3072
    assert "train/clip_fraction" in (tmp_path / "r" / "progress.csv").read_text().splitlines()[0]


def test_a_batched_run_trains_with_history_self_play_and_the_league(tmp_path):
    """The sequence policy over --history events, against its own snapshots and a league."""
    run(
        *BATCHED,
        *("--policy", "seq", "--history", "8", "--bc-positions", "0", "--final-eval-games", "0"),
        *("--opponent-mix", "0.5*self,0.5*league", "--league-opponents", "random,greedy", "--snapshot-every", "1024"),
        *("--output-dir", str(tmp_path), "--exp-name", "h"),
    )
    card = json.loads((tmp_path / "h" / "model.json").read_text())
    assert card["policy"] == "seq" and card["observation"]["history"] == 8
