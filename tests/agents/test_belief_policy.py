"""The belief policy (``agents.belief_policy``) and its fine-tune (``training.fit_belief_policy``):
the inputs it reads, the numpy actor against torch's, bad inputs refused, fairness (hidden twins
give the same decision), the recipe's run and its shipping. ``train.py --beliefs net`` itself:
tests/training/test_belief_inputs.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch
from builder import twin_positions
from sb3_contrib import MaskablePPO

from agents.belief_policy import BeliefPolicyAgent, input_size
from agents.beliefs.net import (
    EVIDENCE_ROWS,
    MODEL_PATHS,
    POLICY_INPUTS,
    BeliefNet,
    net_features,
    policy_inputs,
    public_view,
)
from agents.model_card import read_card
from agents.pretrained import model_path
from training.fit_belief_policy import Args, main
from uno_env import UnoRules
from uno_env.observation import observation_size
from uno_env.table import ask_one

D = observation_size()
TINY = dict(
    num_envs=8,
    n_steps=8,
    batch_size=32,
    total_timesteps=64,
    seed=2,
    eval_every=0,
    final_eval_games=0,
    checkpoint_every=0,
    progress=False,
    tensorboard=False,
)


def played_envs(num_players: int = 2, steps: int = 30, seed: int = 1):
    """Dict observations of a history env after some random play, with their masks."""
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    venv = UnoSB3VecEnv(16, num_players, UnoRules(), learner_seat="random", seed=seed, history=EVIDENCE_ROWS)
    obs = venv.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()]))
    return obs, venv.action_masks()


@pytest.fixture(scope="module")
def belief_model(tmp_path_factory):
    """A tiny fine-tune's model, its belief columns then set to random weights so that they matter."""
    out = tmp_path_factory.mktemp("belief")
    path = main(Args(exp_name="tiny", output_dir=str(out), **TINY))
    model = MaskablePPO.load(path, device="cpu")
    state = model.policy.state_dict()
    gen = torch.Generator().manual_seed(0)
    for key in state:
        if key.endswith("trunk.0.weight"):
            state[key][:, D:] = torch.randn(state[key][:, D:].shape, generator=gen)
    model.policy.load_state_dict(state)
    model.save(out / "random_belief.zip")
    return out / "random_belief.zip"


@pytest.mark.parametrize("num_players", [2, 4])
def test_policy_inputs_are_the_networks_reading_of_each_other_seat(num_players):
    obs, _ = played_envs(num_players)
    net = BeliefNet(MODEL_PATHS[num_players])
    o, rows, counts = obs["observation"], obs["history"], obs["history_counts"]
    x = policy_inputs(o, rows, counts, net, num_players)
    assert x.shape == (o.shape[0], POLICY_INPUTS * (num_players - 1)) and x.dtype == np.float32
    for k, slot in enumerate(range(1, num_players)):
        part = x[:, k * POLICY_INPUTS : (k + 1) * POLICY_INPUTS]
        void_logits, _ = net(net_features(o, rows, counts, slot=slot))
        assert np.allclose(part[:, :4], 1 / (1 + np.exp(-void_logits)), atol=1e-5)
        _, allowed, sizes = public_view(o, slot)
        expected = part[:, 4:] * 4
        assert (expected >= -1e-6).all() and (expected <= np.minimum(allowed, 4) + 1e-5).all()
        assert np.allclose(expected.sum(1), sizes, atol=0.5 * sizes.max())  # copies add up to about the hand
    # Empty rows past the round, and more of them, change nothing.
    padded = np.concatenate([rows, np.zeros_like(rows)], axis=1)
    assert np.array_equal(policy_inputs(o, padded, counts, net, num_players), x)


def test_policy_inputs_refuse_bad_shapes():
    obs, _ = played_envs()
    net = BeliefNet()
    with pytest.raises(ValueError, match=r"num_players must be an integer in 2\.\.10"):
        policy_inputs(obs["observation"], obs["history"], obs["history_counts"], net, 1)
    with pytest.raises(ValueError, match="rows must have shape"):
        policy_inputs(obs["observation"], obs["history"][:, :3], obs["history_counts"], net, 2)


def test_the_numpy_agent_takes_the_torch_policys_most_likely_legal_move(belief_model):
    obs, masks = played_envs(seed=4)
    agent = BeliefPolicyAgent(belief_model)
    x = agent.inputs(obs)
    model = MaskablePPO.load(belief_model, device="cpu")
    with torch.no_grad():
        logits = model.policy.get_distribution(torch.as_tensor(x)).distribution.logits.numpy()
    assert np.array_equal(agent.act(obs, masks), np.where(masks, logits, -np.inf).argmax(1))
    # The belief moves some decisions: the check above is not the base policy's alone.
    zero = np.concatenate([x[:, :D], np.zeros_like(x[:, D:])], axis=1)
    assert not np.array_equal(agent.policy.act(zero, masks), agent.act(obs, masks))


def test_bad_inputs_are_refused(belief_model):
    with pytest.raises(ValueError, match="reads 398 inputs, but a belief policy at 2 players reads 459"):
        BeliefPolicyAgent(model_path("pretrained"))
    with pytest.raises(ValueError, match=r"num_players must be one of \[2, 4\]"):
        BeliefPolicyAgent(belief_model, num_players=3)
    with pytest.raises(ValueError, match="the rules the belief network learned"):
        BeliefPolicyAgent(belief_model, rules=UnoRules(stack_draw_two=True))
    agent = BeliefPolicyAgent(belief_model)
    obs, masks = played_envs()
    with pytest.raises(ValueError, match="reads the round's history"):
        agent.act(obs["observation"], masks)
    four, four_masks = played_envs(4)
    with pytest.raises(ValueError, match="plays 2 players; the observations are of \\[4\\]"):
        agent.act(four, four_masks)


def test_hidden_twins_get_the_same_decision(belief_model):
    """Everything the seat cannot see redealt: the same inputs and the same move."""
    agent = BeliefPolicyAgent(belief_model)
    checked = 0
    for g, (engine, twin, _) in enumerate(twin_positions(2, 12, seed=100, history=256)):
        assert engine.game_state(0)["hands"] != twin.game_state(0)["hands"]
        assert ask_one(agent, engine, 0, np.random.default_rng(g)) == ask_one(agent, twin, 0, np.random.default_rng(g))
        checked += 1
    assert checked >= 6


def test_the_recipe_is_train_py_widening_pretrained(belief_model):
    path = str(belief_model.parent / "tiny" / "model.zip")
    assert BeliefPolicyAgent(path).policy.obs_size == input_size(UnoRules(), 2)
    card = read_card(path)
    assert card is not None and card["num_players"] == 2 and card["input_size"] == input_size(UnoRules(), 2)
    assert card["beliefs"] == "net" and card["train_args"]["init"] == "pretrained"
    # The command that repeats it is train.py's, with the recipe's settings spelled out.
    for flag in ("--beliefs net", "--init pretrained", "--bc-positions 0", "--learning-rate 0.0002", "--seed 2"):
        assert flag in card["command"], flag
    assert card["command"].startswith("python train.py")
    with pytest.raises(ValueError, match="trained for 2 players, rules classic; asked for 4 players"):
        BeliefPolicyAgent(path, num_players=4)


def test_the_shipped_belief_policy_matches_its_card():
    import hashlib
    from pathlib import Path

    from agents.belief_policy import shipped_belief_policy
    from agents.pretrained import BELIEF_POLICIES, load_card, pretrained_agent

    for name in BELIEF_POLICIES:
        card, data = load_card(name), Path(model_path(name)).read_bytes()
        assert card["model_sha256"] == hashlib.sha256(data).hexdigest() and card["model_bytes"] == len(data)
        assert UnoRules.from_dict(card["rules"]) == UnoRules()
        agent = shipped_belief_policy(UnoRules(), card["num_players"])
        assert agent is not None and agent.policy.obs_size == card["input_size"]
    assert shipped_belief_policy(UnoRules(stack_draw_two=True), 2) is None
    assert shipped_belief_policy(UnoRules(), 3) is None
    with pytest.raises(ValueError, match="unknown pretrained agent 'belief_policy'; the registry's are"):
        pretrained_agent("belief_policy")


def test_ship_writes_the_model_and_its_card(belief_model, tmp_path):
    import hashlib
    import json

    from training.fit_belief_policy import ship

    card_file = ship(str(belief_model.parent / "tiny"), note="a test", out_dir=str(tmp_path), name="tiny")
    card = json.loads(open(card_file).read())
    data = (tmp_path / "tiny.zip").read_bytes()
    assert card["model_sha256"] == hashlib.sha256(data).hexdigest() and card["model_file"] == "tiny.zip"
    assert card["input_size"] == input_size(UnoRules(), 2) and card["num_players"] == 2 and card["name"] == "tiny"
    assert card["train_args"]["total_timesteps"] == TINY["total_timesteps"] and card["note"] == "a test"
    assert {"commit", "started", "finished", "machine", "train_minutes", "train_cpu_minutes"} <= set(card)
    assert BeliefPolicyAgent(tmp_path / "tiny.zip").name == "tiny"
    with pytest.raises(ValueError, match="is not a finished run of train.py --beliefs net"):
        ship(str(tmp_path), out_dir=str(tmp_path))


def test_the_shipped_policy_plays_by_its_registry_name_at_a_table():
    from agents.registry import make_agent
    from arena import play

    agent = make_agent("belief_policy")
    assert agent.name == "belief_policy" and agent.history_length == EVIDENCE_ROWS
    result = play([agent, make_agent("heuristic")], 8, seed=3)
    assert result.games == 8 and result.wins.sum() + result.truncated == 8
    with pytest.raises(ValueError, match="the rules the belief network learned"):
        make_agent("belief_policy", UnoRules.preset("house"))
    with pytest.raises(ValueError, match="trained for 2 players; asked for 3"):
        make_agent("belief_policy", num_players=3)
    with pytest.raises(ValueError, match="plays only the table it was trained for"):
        make_agent("belief_policy", num_players=4, allow_other_table=True)
