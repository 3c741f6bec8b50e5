"""``train.py --beliefs net`` (``training.belief_inputs``): a tiny run at 2 and at 4 players saves a model with
its card, loads by path as a belief policy, evaluates live and plays duplicate deals in the arena; the
saved actor matches the live one; hidden twins get the same move; ``--init`` widens a trained policy
that then acts as it did; bad settings are refused with what is allowed."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch
import tyro
from builder import twin_positions
from helpers import TINY_PPO
from sb3_contrib import MaskablePPO

from agents.belief_policy import BeliefPolicyAgent, input_size
from agents.beliefs.net import EVIDENCE_ROWS
from agents.ppo import load_model
from agents.pretrained import model_path
from agents.registry import make_agent
from arena import play
from training.belief_inputs import BeliefInputs, init_path, start_from
from training.main import Args, check_args
from training.main import main as train
from training.opponents import seat_agents
from training.sb3 import LinearSchedule, make_model
from uno_env import UnoRules
from uno_env.observation import observation_size
from uno_env.sb3_vec_env import UnoSB3VecEnv
from uno_env.table import ask_one


def start(model, args):
    """``train.py``'s ``--init``: the model file ``check_args`` reads, then ``start_from``."""
    start_from(model, init_path(args.init), args)


D = observation_size()
QUIET = [
    *("--bc-positions", "0", "--eval-every", "0", "--checkpoint-every", "0"),
    *("--no-progress", "--no-tensorboard", "--beliefs", "net"),
]
# At 4 players a mixed table and plain games, as the shipped 4-player recipes train.
MIXES = {2: "0.5*heuristic,0.5*rlcard_rule", 4: "0.5*heuristic+rlcard_rule+greedy,0.5*heuristic"}


def args_of(*argv: str) -> Args:
    return tyro.cli(Args, args=[*TINY_PPO, *QUIET, *argv])


@pytest.fixture(scope="module", params=[2, 4])
def run(request, tmp_path_factory):
    """A tiny ``--beliefs net`` run at 2 or 4 players, with a checkpoint and a small final evaluation (the live policy)."""
    n = request.param
    out = tmp_path_factory.mktemp(f"beliefs{n}")
    final = train(
        args_of(
            *("--num-players", str(n), "--opponent-mix", MIXES[n], "--exp-name", f"b{n}", "--output-dir", str(out)),
            *("--final-eval-games", "8", "--eval-opponents", "heuristic", "--seed", "3"),
            *("--checkpoint-every", "1024", "--update-threads", "1"),  # a checkpoint pickles the update hook
        )
    )
    return n, str(out / f"b{n}" / "model.zip"), final


def test_a_run_saves_its_model_with_a_card_and_plays_it_by_path(run):
    n, path, final = run
    card = json.loads(open(path[: -len(".zip")] + ".json").read())
    assert card["beliefs"] == "net" and card["num_players"] == n and card["policy"] == "mlp"
    assert card["input_size"] == input_size(UnoRules(), n) and card["observation"]["history"] == EVIDENCE_ROWS
    assert card["activation"] == "relu" and card["observation_size"] == D
    assert [r["opponent"] for r in final["final_eval"]] == ["heuristic"] and final["final_eval"][0]["games"] == 8
    agent = make_agent(path, UnoRules())
    assert isinstance(agent, BeliefPolicyAgent) and agent.num_players == n and agent.name == f"b{n}"
    assert agent.history_length == EVIDENCE_ROWS and agent.policy.obs_size == input_size(UnoRules(), n)
    rules = UnoRules()
    result = play([agent, *seat_agents("heuristic", rules, n)], 4 * n, rules, seed=11, duplicate=True)
    assert result.games == 4 * n and result.deal_wins is not None
    assert result.wins.sum() + result.truncated == result.games
    checkpoint = make_agent(os.path.join(os.path.dirname(path), "checkpoints", "step_1024.zip"), UnoRules())
    assert isinstance(checkpoint, BeliefPolicyAgent) and checkpoint.num_players == n
    other = 4 if n == 2 else 2
    with pytest.raises(ValueError, match=f"trained for {n} players, rules classic; asked for {other} players"):
        make_agent(path, UnoRules(), num_players=other)
    with pytest.raises(ValueError, match="plays only its own table"):
        make_agent(path, UnoRules(), num_players=n, allow_other_table=True)


def test_the_saved_actor_plays_as_the_live_policy(run):
    n, path, _ = run
    venv = UnoSB3VecEnv(16, n, UnoRules(), learner_seat="random", seed=4, history=EVIDENCE_ROWS)
    obs = venv.reset()
    rng = np.random.default_rng(4)
    for _ in range(25):
        obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()]))
    masks = venv.action_masks()
    saved = BeliefPolicyAgent(path)
    live = BeliefPolicyAgent(MaskablePPO.load(path, device="cpu").policy, n)
    wide = BeliefInputs(venv, n).inputs(obs)
    assert np.allclose(saved.inputs(obs), wide, rtol=1e-4, atol=1e-6)
    assert np.array_equal(saved.act(obs, masks), live.act(obs, masks, np.random.default_rng(0)))
    venv.close()


def test_hidden_twins_get_the_same_inputs_and_move(run):
    """Everything the seat cannot see redealt: the same belief inputs and the same move."""
    n, path, _ = run
    agent = make_agent(path, UnoRules())
    seen: list[np.ndarray] = []
    read = agent.inputs
    agent.inputs = lambda o: seen.append(read(o)) or seen[-1]  # type: ignore[method-assign]  # what it reads, kept
    checked = 0
    for g, (engine, twin, _) in enumerate(twin_positions(n, 12, seed=200, history=EVIDENCE_ROWS)):
        assert engine.game_state(0)["hands"] != twin.game_state(0)["hands"]
        assert ask_one(agent, engine, 0, np.random.default_rng(g)) == ask_one(agent, twin, 0, np.random.default_rng(g))
        assert np.array_equal(seen[-2], seen[-1])
        checked += 1
    assert checked >= 6


@pytest.mark.parametrize(("n", "base"), [(2, "pretrained"), (4, "pretrained-4p")])
def test_init_widens_a_trained_policy_that_then_acts_as_it_did(n, base):
    args = args_of("--num-players", str(n), "--hidden", "256", "256", "--init", base, "--num-envs", "8")
    check_args(args)
    venv = BeliefInputs(UnoSB3VecEnv(8, n, UnoRules(), learner_seat="random", seed=2, history=EVIDENCE_ROWS), n)
    model = make_model(args, venv, LinearSchedule(1e-4, 1, False))
    start(model, args)
    before = load_model(model_path(base))
    wide = venv.reset()
    assert wide.shape == (8, input_size(UnoRules(), n))
    assert np.abs(wide[:, D:]).sum() > 0  # the belief is read, and still ignored by the new weights
    with torch.no_grad():
        a = model.policy.get_distribution(torch.as_tensor(wide)).distribution.logits
        b = before.policy.get_distribution(torch.as_tensor(wide[:, :D])).distribution.logits
        assert torch.allclose(a, b, atol=1e-5)
        assert torch.allclose(
            model.policy.predict_values(torch.as_tensor(wide)),
            before.policy.predict_values(torch.as_tensor(wide[:, :D])),
            atol=1e-5,
        )
    narrow = args_of("--init", base, "--hidden", "32", "32")
    with pytest.raises(
        ValueError, match=rf"trunk.0.weight is \(256, {D}\), this run's \(32, {input_size(UnoRules(), n)}\)"
    ):
        start(make_model(narrow, venv, LinearSchedule(1e-4, 1, False)), narrow)
    with pytest.raises(ValueError, match=r"layers differ from this run's network .* \(--policy, --hidden, --head"):
        start(make_model(args_of("--init", base), venv, LinearSchedule(1e-4, 1, False)), args)
    with pytest.raises(ValueError, match="was trained with --activation relu: give the same"):
        tanh = args_of("--init", base, "--activation", "tanh", "--num-players", str(n))
        start(make_model(tanh, venv, LinearSchedule(1e-4, 1, False)), tanh)
    venv.close()


def test_an_init_without_beliefs_is_copied_not_widened():
    plain = args_of("--beliefs", "none", "--init", "pretrained", "--hidden", "256", "256")
    venv = UnoSB3VecEnv(4, 2, UnoRules(), seed=1)
    model = make_model(plain, venv, LinearSchedule(1e-4, 1, False))
    start(model, plain)
    base = load_model(model_path("pretrained")).policy.state_dict()
    assert all(torch.equal(v, base[k]) for k, v in model.policy.state_dict().items())
    # Only --beliefs net widens: a history policy does not start from one that reads the observation alone.
    history = args_of("--beliefs", "none", "--init", "pretrained", "--hidden", "256", "256", "--history", "8")
    rows = UnoSB3VecEnv(4, 2, UnoRules(), seed=1, history=8)
    with pytest.raises(ValueError, match="to widen, one that reads the observation alone, for --beliefs net"):
        start(make_model(history, rows, LinearSchedule(1e-4, 1, False)), history)
    venv.close()
    rows.close()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--num-players", "3"], r"trained for \[2, 4\] players: got --num-players 3"),
        (["--rules", "house"], "trained on classic rules, not --rules house"),
        (["--history", "8"], "--policy mlp, no --history and no --privileged-critic"),
        (["--privileged-critic"], "--policy mlp, no --history and no --privileged-critic"),
        (["--opponent-mix", "0.5*self,0.5*heuristic"], "not 'self' or 'league'"),
        (["--bc-positions", "1000"], "add --bc-positions 0, or widen a trained policy with --init MODEL"),
        (["--init", "pretrained", "--resume", "runs/x"], "--resume continues a run: give one"),
        (["--init", "runs/none/model.zip"], r"--init runs/none/model.zip: no such model file; .*pretrained-4p"),
    ],
)
def test_bad_settings_are_refused_with_what_is_allowed(argv, message):
    with pytest.raises(ValueError, match=message):
        check_args(args_of(*argv))


def test_a_bad_beliefs_value_lists_the_choices(capsys):
    bad = args_of()
    bad.beliefs = "oracle"  # type: ignore[assignment]  # as a caller from Python could
    with pytest.raises(ValueError, match="--beliefs must be one of none, net, got 'oracle'"):
        check_args(bad)
    with pytest.raises(SystemExit):
        args_of("--beliefs", "oracle")
    err = capsys.readouterr().err
    assert "oracle" in err and "none" in err and "net" in err


def test_the_default_run_reads_no_beliefs():
    args = Args()
    assert args.beliefs == "none" and args.init == ""
    check_args(args)
