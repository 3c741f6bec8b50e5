"""The sequence policy (``train.py --policy seq``): trains, saves with its card, loads by path, plays
legally and fairly; its extractor masks the padding; bad settings are refused; the benchmark runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch
from builder import twin_positions
from helpers import ROOT, TINY_PPO, labels

from agents.ppo import PPOAgent, UnoFeatures, UnoSequenceFeatures, policy_kind
from agents.registry import make_agent
from arena import play
from training.main import Args, check_args
from uno_env import UnoRules
from uno_env.policy import history_form_of, history_length_of
from uno_env.sb3_vec_env import UnoSB3VecEnv
from uno_env.spaces import history_spaces, observation_space
from uno_env.table import ask_one, history_observation

K = 8
TINY = [
    *TINY_PPO,
    "--bc-positions",
    "0",
    "--final-eval-games",
    "0",
    "--eval-every",
    "0",
    "--checkpoint-every",
    "0",
    "--no-progress",
    "--no-tensorboard",
]


def train(out, *extra: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), *TINY, "--output-dir", str(out), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"train.py failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def seq_model(tmp_path_factory):
    """The path of a tiny ``train.py --policy seq --history 8`` model at 2 players."""
    out = tmp_path_factory.mktemp("seq")
    train(out, "--policy", "seq", "--history", str(K), "--exp-name", "seq", "--seed", "5")
    return str(out / "seq" / "model.zip")


def test_train_saves_a_sequence_policy_with_its_card_and_it_loads_by_path(seq_model):
    card = json.loads(open(seq_model[: -len(".zip")] + ".json").read())
    assert card["policy"] == "seq" and card["observation"]["history"] == K and card["num_players"] == 2
    agent = make_agent(seq_model, UnoRules(), num_players=2)
    assert isinstance(agent, PPOAgent) and agent.policy_kind == "seq" and history_length_of(agent) == K
    assert history_form_of(agent) == "tokens" and agent.policy.observation_space["history_tokens"].shape[0] == K
    assert isinstance(agent.policy.pi_features_extractor, UnoSequenceFeatures)
    result = play([agent, make_agent("heuristic", UnoRules())], 8, seed=2, batch_size=4, duplicate=True)
    assert result.games == 8 and result.wins.sum() + result.truncated == 8 and result.deal_wins is not None


def test_the_sequence_policy_acts_only_legally_and_masks_its_distribution(seq_model):
    agent = PPOAgent(seq_model)
    venv = UnoSB3VecEnv(num_envs=32, seed=4, history=K, history_form=agent.history_form)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        masks = venv.action_masks()
        actions = agent.act(obs, masks, rng)
        assert masks[np.arange(masks.shape[0]), actions].all()
        obs, *_ = venv.step(actions)
    masks = venv.action_masks()
    tensors = {k: torch.as_tensor(v) for k, v in obs.items()}
    probs = agent.policy.get_distribution(tensors, action_masks=masks).distribution.probs.detach().numpy()
    assert (probs[~masks] < 1e-6).all() and np.allclose(probs.sum(1), 1.0, rtol=1e-4)
    # the lean update path (UnoMaskablePolicy.evaluate_actions) gives the same log-probabilities
    actions = torch.as_tensor(agent.act(obs, masks, rng))
    _, log_prob, _ = agent.policy.evaluate_actions(tensors, actions, masks)
    expected = np.log(probs[np.arange(len(actions)), actions.numpy()])
    np.testing.assert_allclose(log_prob.detach().numpy(), expected, rtol=1e-4, atol=1e-5)


def test_the_sequence_policy_decides_the_same_when_the_hidden_cards_are_redealt(seq_model):
    """The token policy at a table: the same tokens, probabilities and action once the hidden cards are redealt."""
    agent = PPOAgent(seq_model, num_players=2)
    assert agent.history_form == "tokens"
    positions = twin_positions(2, 14, seed=11, history=K)
    assert len(positions) >= 6
    for k, (engine, twin, seat) in enumerate(positions):
        assert engine.game_state(0)["hands"] != twin.game_state(0)["hands"]
        seen = [history_observation(e, e.observation[:1], np.array([0]), K, "tokens") for e in (engine, twin)]
        assert seen[0]["history_tokens"][0, :, 0].any()  # events to read
        np.testing.assert_array_equal(seen[0]["history_tokens"], seen[1]["history_tokens"])
        np.testing.assert_allclose(agent.logits(seen[0]), agent.logits(seen[1]), rtol=1e-4, atol=1e-5)
        a = ask_one(agent, engine, 0, np.random.default_rng(k))
        b = ask_one(agent, twin, 0, np.random.default_rng(k))
        assert a == b, f"seat {seat} chose {a}, and {b} once the hidden cards were redealt"


def _space(history: int) -> object:
    from gymnasium import spaces

    return spaces.Dict({"observation": observation_space(UnoRules(), 2), **history_spaces(history)})


def test_the_extractor_reads_no_padding_and_no_other_row():
    """Rows past the round's events are padding: their contents change nothing; nor does another batch row."""
    torch.manual_seed(0)
    space = _space(6)
    net = UnoSequenceFeatures(space, hidden=(16,), width=16, heads=2).eval()
    sample = {k: torch.as_tensor(np.stack([space[k].sample() for _ in range(3)])) for k in space.spaces}
    sample["history"] = sample["history"].clamp(max=3.0)
    sample["history"][:, 3:, :] = 0.0  # three events, then padding
    sample["history"][:, :3, 0] = 1.0
    sample["history"][2] = 0.0  # a round with no event yet
    with torch.no_grad():
        before = net(sample)
        changed = {k: v.clone() for k, v in sample.items()}
        changed["history"][:, 3:, 1:] = torch.rand(3, 3, changed["history"].shape[2] - 1)
        after = net(changed)
        alone = net({k: v[:1] for k, v in sample.items()})
    assert before.shape == (3, 16 + 16) and torch.isfinite(before).all()
    np.testing.assert_allclose(after.numpy(), before.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(alone.numpy(), before[:1].numpy(), rtol=1e-4, atol=1e-5)
    changed["history"][0, 1, 5] += 1.0  # an event that is there does count
    with torch.no_grad():
        assert not torch.allclose(net(changed)[0], before[0])


def test_the_extractor_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="reads the public history"):
        UnoSequenceFeatures(observation_space(UnoRules(), 2))
    with pytest.raises(ValueError, match="width a multiple of heads"):
        UnoSequenceFeatures(_space(4), width=10, heads=3)
    assert policy_kind(object()) == "mlp"
    assert isinstance(UnoFeatures(_space(4)), UnoFeatures)  # the mlp over a history space is unchanged


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(policy="seq"), "--policy seq reads the public history: give it --history K"),
        (dict(policy="seq", history=4, privileged_critic=True), "--history is for the sb3 and batched backends"),
        (
            dict(policy="seq", history=4, backend="rllib", bc_positions=0),
            "--history is for the sb3 and batched backends",
        ),
        (dict(device="tpu"), "--device"),
    ],
)
def test_bad_combinations_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        check_args(Args(**settings))


def test_train_py_refuses_seq_without_history_before_writing_anything(tmp_path):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), "--policy", "seq", "--output-dir", str(tmp_path / "runs")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "--policy seq reads the public history" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "runs").exists()


def test_train_a_sequence_policy_at_four_players(tmp_path):
    from training.main import main

    args = Args(
        policy="seq",
        history=4,
        num_players=4,
        total_timesteps=512,
        num_envs=8,
        n_steps=64,
        batch_size=256,
        n_epochs=1,
        hidden=(16,),
        bc_positions=0,
        final_eval_games=0,
        eval_every=0,
        checkpoint_every=0,
        progress=False,
        tensorboard=False,
        output_dir=str(tmp_path),
        exp_name="seq4",
    )
    main(args)
    agent = make_agent(str(tmp_path / "seq4" / "model.zip"), UnoRules(), num_players=4)
    assert agent.policy_kind == "seq" and agent.history_length == 4 and agent.history_form == "tokens"
    heuristic = [make_agent("heuristic", UnoRules()) for _ in range(3)]
    assert play([agent, *heuristic], 4, seed=1).games == 4


def test_the_benchmark_trains_evaluates_and_writes_its_table_json_and_curves(tmp_path):
    out = tmp_path / "seq"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lab.seq_vs_mlp",
            "--minutes",
            "8",
            "--steps",
            "1024",
            "--history",
            "4",
            "--eval-deals",
            "4",
            "--points",
            "2",
            "--checkpoint-every",
            "512",
            "--workers",
            "1",
            "--no-warm-up",  # the tests before compiled the kernels: the runs load them
            "--out",
            str(out),
            "--train-args=--num-envs 16 --n-steps 32 --batch-size 256 --n-epochs 1 --hidden 32",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    result = json.loads((out / "seq_vs_mlp.json").read_text())
    assert [c["name"] for c in result["configs"]] == ["mlp", "mlp+h4", "seq+h4", "mlp+beliefs"]
    for c in result["configs"]:
        assert c["train"]["steps"] == 1024 and c["train"]["cpu_ms_per_step"] > 0
        assert c["final"]["heuristic"]["deals"] == 4 and 0 <= c["final"]["heuristic"]["win_rate"] <= 1
        assert [p["step"] for p in c["curve"]] == [512, 1024]
    assert "| 2 | seq+h4 | 1,024 |" in proc.stdout and (out / "seq_vs_mlp_2p.png").stat().st_size > 0
    # Each against mlp; seq against mlp+h4 and against mlp+beliefs.
    assert [(x["a"], x["b"]) for x in result["differences"]] == [
        ("mlp+h4", "mlp"),
        ("seq+h4", "mlp"),
        ("mlp+beliefs", "mlp"),
        ("seq+h4", "mlp+h4"),
        ("seq+h4", "mlp+beliefs"),
    ]


def test_the_extractor_reads_the_token_form_of_the_history():
    """Over an env's history_form="tokens", the same policy trains in MaskablePPO and acts through PPOAgent."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import UnoMaskablePolicy

    torch.manual_seed(0)
    venv = UnoSB3VecEnv(num_envs=8, seed=2, history=K, history_form="tokens")
    model = MaskablePPO(
        UnoMaskablePolicy,
        venv,
        n_steps=16,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs=dict(features_extractor_class=UnoSequenceFeatures, features_extractor_kwargs=dict(hidden=(16,))),
    )
    model.learn(128)
    agent = PPOAgent(model, deterministic=True)
    assert agent.policy_kind == "seq" and agent.history_length == K
    obs, masks = venv.reset(), venv.action_masks()
    assert set(obs) == {"observation", "history_tokens"}
    actions = agent.act(obs, masks, np.random.default_rng(0))
    assert masks[np.arange(masks.shape[0]), actions].all()
    with pytest.raises(ValueError, match="history_tokens"):
        agent.act({"observation": obs["observation"]}, masks, np.random.default_rng(0))
    # a padding row (kind 0) is not read, whatever its other fields hold
    tokens = torch.as_tensor(obs["history_tokens"]).clone()
    pad = tokens[..., 0] == 0
    assert pad.any()
    net = agent.policy.pi_features_extractor
    with torch.no_grad():
        before = net({"observation": torch.as_tensor(obs["observation"]), "history_tokens": tokens})
        tokens[..., 1][pad] = 1
        after = net({"observation": torch.as_tensor(obs["observation"]), "history_tokens": tokens})
    np.testing.assert_allclose(after.numpy(), before.numpy(), rtol=1e-4, atol=1e-5)


def test_the_sequence_policy_plays_a_game_at_the_web_table(seq_model):
    """uno-web --agent mine=PATH: the server's table gives the model the tokens it reads."""
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from uno_web.server import Settings, create_app, parse_args

    _, extra = parse_args(["--agent", f"mine={seq_model}"])
    assert extra["mine"].history_form == "tokens"
    c = TestClient(create_app(Settings(extra_agents=extra)), headers={"Content-Type": "application/json"})
    r = c.post("/api/games", json={"players": 2, "seat": 0, "agents": ["mine"], "seed": 4})
    assert r.status_code == 200, r.text
    view, gid, turns = r.json(), r.json()["game_id"], 0
    # The outside seat plays its lowest legal action (a card before a draw): a random seat against a
    # barely trained model can draw for thousands of turns.
    while not view["over"] and turns < 3000:
        if view["your_turn"]:
            r = c.post(f"/api/games/{gid}/move", json={"action": min(a["id"] for a in view["legal"])})
        else:
            r = c.post(f"/api/games/{gid}/advance")
        assert r.status_code == 200, r.text
        view, turns = r.json(), turns + 1
    assert view["over"]


def test_the_sequence_policy_plays_a_game_at_the_mcp_table(seq_model, tmp_path):
    """uno-mcp --agent mine=PATH: a client names the owner's model by label, never by path."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from uno_web.mcp import UnoGames, build_server, parse_args

    _, extra = parse_args(["--agent", f"mine={seq_model}"])
    assert extra["mine"].history_form == "tokens"
    with pytest.raises(ValueError, match="LABEL=SPEC"):
        parse_args(["--agent", str(seq_model)])
    marker = tmp_path / "ran"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w')\nclass A:\n    name = 'a'\n")
    games = UnoGames(extra)

    async def script() -> None:
        async with Client(build_server(games)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "mine" in str(tools["new_game"].input_schema)
            for refused in (str(seq_model), f"{tmp_path / 'evil.py'}:A"):
                result = await client.call_tool("new_game", {"opponents": [refused]})
                assert result.is_error and "mine" in result.content[0].text
            state = (await client.call_tool("new_game", {"opponents": ["mine"], "seed": 3})).structured_content
            assert state["players"][1] == "mine (seat 1)"
            rng = np.random.default_rng(0)
            for _ in range(3000):
                if state["done"]:
                    break
                move = state["legal_moves"][int(rng.integers(len(state["legal_moves"])))]
                result = await client.call_tool("play", {"game_id": state["game_id"], "move": move["number"]})
                assert not result.is_error, result.content[0].text
                state = result.structured_content
            assert state["done"] and state["moves_played"] > 0

    anyio.run(script)
    assert not marker.exists()


def test_the_sequence_policy_plays_a_round_in_uno_play(seq_model):
    """uno-play --opponents mine=PATH: a local command's table gives the model the tokens it reads."""
    import io

    from uno_web.terminal import main as play_main

    out = io.StringIO()
    assert (
        play_main(["--opponents", f"mine={seq_model}", "--seed", "5", "--no-color"], io.StringIO("1\n" * 6000), out)
        == 0
    )
    assert "*** Round over:" in out.getvalue() and "mine (seat 1)" in out.getvalue()


def _untrained(history_form: str, history: int, extractor: type) -> PPOAgent:
    """An untrained PPOAgent over an env's history in ``history_form``."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import UnoMaskablePolicy

    venv = UnoSB3VecEnv(num_envs=2, seed=0, history=history, history_form=history_form)
    kwargs = dict(features_extractor_class=extractor, features_extractor_kwargs=dict(hidden=(16,)))
    model = MaskablePPO(UnoMaskablePolicy, venv, n_steps=8, batch_size=16, seed=0, device="cpu", policy_kwargs=kwargs)
    return PPOAgent(model, name=f"{history_form}{history}")


def test_policies_reading_rows_and_tokens_share_every_table(seq_model):
    """A tokens policy, a rows policy and a snapshot (PPOAgent.frozen, the league's) in one match and as an env's opponents."""
    seq = PPOAgent(seq_model, name="seq", allow_other_table=True)  # trained at 2 players: here at 3
    rows = _untrained("rows", 4, UnoFeatures)
    assert (rows.history_form, rows.history_length) == ("rows", 4)
    snapshot = PPOAgent.frozen(seq.policy, name="snapshot")
    assert (snapshot.history_form, snapshot.history_length) == ("tokens", K)
    result = play([seq, rows, snapshot], 6, seed=3, batch_size=3, duplicate=True)
    assert result.games == 6 and result.wins.sum() + result.truncated == 6
    # a learner reading tokens against opponents reading rows and tokens (training's env)
    venv = UnoSB3VecEnv(num_envs=4, num_players=3, seed=1, history=K, history_form="tokens", opponents=[rows, snapshot])
    obs, rng = venv.reset(), np.random.default_rng(0)
    for _ in range(12):
        masks = venv.action_masks()
        obs, *_ = venv.step(seq.act(obs, masks, rng))
    assert set(obs) == {"observation", "history_tokens"}


@pytest.mark.parametrize("teacher", ["heuristic", "belief_policy"])  # belief_policy reads rows: asked at a table
def test_the_warm_start_labels_positions_with_the_tokens_the_policy_reads(teacher):
    from uno_env.engine.history import HISTORY_TOKEN_SIZE, HISTORY_TOKEN_VOCAB

    data = labels(teacher, ["random"], UnoRules(), 2, 24, seed=0, history=4, history_form="tokens")
    tokens = data.obs["history_tokens"]
    assert set(data.obs) == {"observation", "history_tokens"} and tokens.shape == (24, 4, HISTORY_TOKEN_SIZE)
    assert (tokens == np.round(tokens)).all() and (tokens >= 0).all() and (tokens < np.array(HISTORY_TOKEN_VOCAB)).all()
    assert tokens[:, -1, 0].all()  # every position has a latest event (a choice comes after the first play)


def test_the_token_embedding_is_one_embedding_per_field_summed():
    """An event's vector is the sum of its fields' embeddings, and every (field, value) has its own."""
    from agents.ppo import EVENT_ENCODERS
    from uno_env.engine.history import HISTORY_TOKEN_VOCAB

    torch.manual_seed(0)
    box = history_spaces(3, "tokens")["history_tokens"]
    embed = EVENT_ENCODERS["history_tokens"](box, 8, 10.0)
    singles = [torch.zeros(len(HISTORY_TOKEN_VOCAB), dtype=torch.int8)]  # the empty event, then one field set
    for c, size in enumerate(HISTORY_TOKEN_VOCAB):
        for v in range(1, size):
            t = torch.zeros(len(HISTORY_TOKEN_VOCAB), dtype=torch.int8)
            t[c] = v
            singles.append(t)
    with torch.no_grad():
        vectors = embed(torch.stack(singles)[None])[0][0]
        assert torch.unique(vectors.round(decimals=5), dim=0).shape[0] == len(singles)
        event = torch.as_tensor(np.stack([box.sample() for _ in range(4)]))
        fields = [
            torch.zeros_like(event).index_copy(2, torch.tensor([c]), event[..., c : c + 1])
            for c in range(len(HISTORY_TOKEN_VOCAB))
        ]
        whole = embed(event)[0]
        parts = sum(embed(f)[0] for f in fields) - (len(fields) - 1) * vectors[0]
    np.testing.assert_allclose(whole.numpy(), parts.numpy(), rtol=1e-4, atol=1e-5)
