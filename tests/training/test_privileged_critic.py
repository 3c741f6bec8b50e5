"""The privileged critic (``train.py --privileged-critic``): the critic sees hidden cards, the policy never.

``UnoSB3VecEnv(privileged=True)`` appends the hidden part of the learner's state to each row;
``agents.ppo.UnoPrivilegedPolicy`` must give the same actions whatever that part holds, and the
saved model must act on observations alone.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import labels
from sb3_contrib import MaskablePPO

from agents.ppo import PPOAgent, UnoFeatures, UnoPrivilegedPolicy
from uno_env import Engine, sample_legal
from uno_env.sb3_vec_env import UnoSB3VecEnv, hidden_columns


def _model(num_players: int = 2) -> tuple[MaskablePPO, UnoSB3VecEnv]:
    venv = UnoSB3VecEnv(8, num_players, seed=0, privileged=True)
    model = MaskablePPO(
        UnoPrivilegedPolicy,
        venv,
        n_steps=8,
        batch_size=32,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs=dict(
            features_extractor_class=UnoFeatures,
            features_extractor_kwargs=dict(hidden=(32,)),
            actor_inputs=venv.actor_inputs,
        ),
    )
    return model, venv


@pytest.mark.parametrize("num_players", [2, 4])
def test_privileged_rows_are_the_observation_then_the_hidden_state(num_players):
    venv = UnoSB3VecEnv(8, num_players, seed=3, privileged=True)
    rows = venv.reset()
    d = venv.actor_inputs
    np.testing.assert_array_equal(rows[:, :d], venv.venv.engine.observation)
    state = venv.venv.driver.state()
    np.testing.assert_array_equal(rows[:, d:], state[:, hidden_columns(num_players)])
    assert rows.shape[1] == venv.observation_space.shape[0]
    rng = np.random.default_rng(0)
    for _ in range(300):
        venv.step_async(sample_legal(venv.action_masks(), rng))
        rows, _, dones, infos = venv.step_wait()
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == rows.shape[1:]
        assert all(venv.observation_space.contains(r) for r in rows)


def test_the_policy_ignores_the_hidden_state_and_the_critic_reads_it():
    model, venv = _model()
    rows = torch.as_tensor(venv.reset())
    other = rows.clone()
    other[:, venv.actor_inputs :] = torch.rand_like(other[:, venv.actor_inputs :]) * 3  # other hidden cards
    policy = model.policy
    with torch.no_grad():
        p1 = policy.get_distribution(rows).distribution.logits
        p2 = policy.get_distribution(other).distribution.logits
        v1, v2 = policy.predict_values(rows), policy.predict_values(other)
    torch.testing.assert_close(p1, p2)
    assert not torch.allclose(v1, v2)


def test_a_trained_privileged_model_acts_on_observations_alone(tmp_path):
    model, venv = _model()
    model.learn(128)
    model.save(tmp_path / "m.zip")
    agent = PPOAgent(tmp_path / "m.zip", deterministic=True)
    assert agent.obs_size == venv.actor_inputs
    engine = Engine(16, 2, seed=1)
    actions = agent.act(engine.observation, engine.legal_mask, np.random.default_rng(0))
    assert engine.legal_mask[np.arange(16), actions].all()
    # The live policy and the loaded one agree on the observation part.
    live = PPOAgent(model.policy, deterministic=True)
    np.testing.assert_array_equal(live.act(engine.observation, engine.legal_mask, None), actions)


def test_a_warm_start_clones_the_actor_and_leaves_the_critic():
    """The positions hold observations only: cloning a privileged policy fits its actor, not its critic."""
    from training.expert import clone
    from uno_env import UnoRules

    model, _ = _model()
    policy = model.policy
    critic = {k: v.clone() for k, v in policy.state_dict().items() if "value" in k or "vf" in k}
    assert critic  # the critic's own trunk and head
    data = labels("heuristic", ["random"], UnoRules(), 2, 400, seed=0)
    stats = clone(policy, data, epochs=30, batch_size=64, learning_rate=3e-3, holdout=0.25, seed=0)
    assert stats["agreement_after"] > stats["agreement_before"]
    after = policy.state_dict()
    assert all(torch.equal(after[k], v) for k, v in critic.items())


def test_privileged_must_be_a_bool():
    with pytest.raises(ValueError, match="privileged must be True or False"):
        UnoSB3VecEnv(2, privileged=1)  # type: ignore[arg-type]
