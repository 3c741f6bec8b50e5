"""train.py, evaluate.py, PPOAgent, the opponent mix and self-play, the tournament maths and the quickstart notebook."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import typing

import numpy as np
import pytest
from helpers import ROOT, TINY_PPO

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents import RLCardRuleAgent
from agents.registry import make_agent
from arena import bradley_terry, play, tournament
from training.league import League, SnapshotPool, league_members, saved_league
from training.opponents import PendingSnapshot, opponent_groups, parse_mix, split_games
from uno_env import Engine, RandomAgent, UnoRules, parse_rules, sample_legal
from uno_env.actions import Action

TINY_TRAIN = [
    *TINY_PPO,
    "--eval-every",
    "1024",
    "--eval-games",
    "40",
    "--eval-opponents",
    "random,rlcard_rule",
    "--final-eval-games",
    "100",
    "--checkpoint-every",
    "1024",
    "--snapshot-every",
    "1024",
    "--bc-positions",  # the default warm start, small
    "300",
    "--bc-epochs",
    "1",
    "--no-progress",
]


def run(script: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run a repository script in a subprocess; fail with its output if it fails."""
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, script), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"{script} failed:\nSTDOUT\n{proc.stdout[-3000:]}\nSTDERR\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny train.py run: (run directory, its stdout)."""
    out = tmp_path_factory.mktemp("runs")
    proc = run("train.py", *TINY_TRAIN, "--output-dir", str(out), "--exp-name", "tiny", "--seed", "3")
    return out / "tiny", proc.stdout


# --- train.py -----------------------------------------------------------------------------


def test_the_learning_curves_of_a_run(trained, tmp_path):
    """tools.curves reads a run's evaluations (every --eval-every steps, then the final table) and draws a panel per opponent."""
    from tools.curves import load_curve, plot_curves

    run_dir, _ = trained
    curves = load_curve(str(run_dir))
    assert set(curves) == {"random", "rlcard_rule"}
    for c in curves.values():
        assert c["steps"] == sorted(c["steps"]) and c["steps"] and len(c["win_rate"]) == len(c["steps"])
        assert all(lo <= w <= hi for w, lo, hi in zip(c["win_rate"], c["lo"], c["hi"], strict=True))
        assert c["final"][0] >= c["steps"][-1] and c["final"][4] == 100
    out = tmp_path / "c.png"
    assert plot_curves({"tiny": str(run_dir)}, str(out), ["rlcard_rule"]) == ["rlcard_rule"]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="no run was evaluated against"):
        plot_curves({"tiny": str(run_dir)}, str(out), ["heuristic"])
    with pytest.raises(ValueError, match="holds no final_eval.json"):
        load_curve(str(tmp_path))


def test_train_writes_model_hyperparameters_checkpoints_and_the_final_table(trained):
    run_dir, stdout = trained
    assert (run_dir / "model.zip").is_file()
    saved = json.loads((run_dir / "args.json").read_text())
    assert saved["total_timesteps"] == 2048 and saved["seed"] == 3 and saved["hidden"] == [32]
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == [
        "latest.json",
        "step_1024.json",
        "step_1024.state.pt",
        "step_1024.zip",
        "step_2048.json",
        "step_2048.state.pt",
        "step_2048.zip",
    ]
    assert (run_dir / "progress.csv").is_file()
    final = json.loads((run_dir / "final_eval.json").read_text())
    assert final["steps"] == 2048
    rows = {r["opponent"]: r for r in final["final_eval"]}
    assert set(rows) == {"random", "rlcard_rule"}
    for r in rows.values():
        assert r["games"] == 100 and 0 <= r["wins"] <= 100
        lo, hi = r["ci95"]
        assert lo - 1e-12 <= r["win_rate"] <= hi + 1e-12
    # The evaluation table is the last thing printed, with both baselines and their intervals.
    assert "| opponent | games | wins | win rate | 95% CI |" in stdout
    assert stdout.count("| random |") == 1 and stdout.count("| rlcard_rule |") == 1
    assert "step       1,024" in stdout  # the periodic evaluation was printed as it went
    # --bc-positions 300 over 2,048 steps: the warm start is scaled to the run (one position per 8 steps).
    assert "warm start: 256 positions labelled by heuristic (--bc-positions 300 scaled to the run" in stdout


def test_the_warm_start_scales_with_the_run_and_keeps_the_default_and_shipped_runs():
    from agents.pretrained import PRETRAINED, load_card
    from training.main import Args, warm_start_positions

    assert warm_start_positions(Args()) == 1_000_000  # the default run: 10M steps
    assert warm_start_positions(Args(total_timesteps=200_000)) == 25_000
    assert warm_start_positions(Args(total_timesteps=200_000, bc_positions=10_000)) == 10_000
    assert warm_start_positions(Args(total_timesteps=200_000, bc_positions=0)) == 0
    for name in PRETRAINED:
        saved = load_card(name)["train_args"]
        args = Args(total_timesteps=saved["total_timesteps"], bc_positions=saved["bc_positions"])
        assert warm_start_positions(args) == saved["bc_positions"]


def test_each_backend_runs_its_own_shape_and_sb3_the_one_it_always_had():
    """A shape option left at 0 takes its backend's value; given, it is kept; the command names only what differs."""
    from training.main import BACKEND_DEFAULTS, Args, update_thread_count
    from training.run import command_line, usable_cores

    shape = ("num_envs", "n_steps", "batch_size", "n_epochs", "total_timesteps")
    sb3 = Args(backend="sb3")
    assert [getattr(sb3, k) for k in shape] == [256, 64, 4096, 4, 8_000_000]  # MaskablePPO's settings since 0.1.0
    batched = Args()
    assert batched.backend == "batched" and {k: getattr(batched, k) for k in shape} == BACKEND_DEFAULTS["batched"]
    assert Args(backend="sb3", num_envs=1024).num_envs == 1024
    assert command_line(sb3) == "python train.py --backend sb3"
    assert command_line(Args(backend="sb3", n_epochs=2)) == "python train.py --n-epochs 2 --backend sb3"
    assert command_line(batched) == "python train.py"
    assert update_thread_count(batched) == usable_cores() and update_thread_count(sb3) == 0
    assert update_thread_count(Args(update_threads=1)) == 1


# --- model cards ----------------------------------------------------------------------------


def test_every_saved_model_carries_the_card_of_its_table(trained):
    run_dir, _ = trained
    for model in [run_dir / "model.zip", *sorted((run_dir / "checkpoints").glob("step_*.zip"))]:
        card = json.loads(model.with_suffix(".json").read_text())
        assert card["rules"] == UnoRules.preset("classic").to_dict() and card["rules_name"] == "classic"
        assert card["num_players"] == 2 and card["observation"] == {"open_hands": False, "history": 0}
        assert card["observation_size"] == 398
        assert card["command"] == (run_dir / "command.txt").read_text().strip()
        assert card["command"].startswith("python train.py ") and "--seed 3" in card["command"]
    assert json.loads((run_dir / "model.json").read_text())["steps"] == 2048


def test_a_model_refuses_a_table_it_was_not_trained_for_unless_allowed(trained, tmp_path):
    from agents.ppo import PPOAgent

    path = str(run_dir_model(trained))
    trained_for = "was trained for 2 players, rules classic"
    with pytest.raises(ValueError, match=f"{trained_for}; the rules asked for differ in .*allow_other_table=True"):
        PPOAgent(path, rules=UnoRules.preset("house"))
    with pytest.raises(ValueError, match=f"{trained_for}; asked for 4 players.*--allow-other-table"):
        make_agent(path, UnoRules.preset("classic"), num_players=4)
    # Not told the table size, it refuses one of another size as soon as it plays.
    engine = Engine(4, 3, seed=0)
    agent = make_agent(path, UnoRules.preset("classic"))
    with pytest.raises(ValueError, match="trained for 2 players, asked to play at a table of 3"):
        agent.act(engine.observation, engine.legal_mask, np.random.default_rng(0))
    with pytest.raises(ValueError, match=f"{trained_for}; asked for 3"):
        agent.check_table(UnoRules(), 3)
    # The override: a deliberate transfer experiment.
    other = make_agent(path, UnoRules.preset("house"), num_players=3, allow_other_table=True)
    assert other.act(engine.observation, engine.legal_mask, np.random.default_rng(0)).shape == (4,)


def test_a_model_without_a_card_loads_with_a_warning(trained, tmp_path):
    from agents.ppo import PPOAgent

    old = tmp_path / "old.zip"
    old.write_bytes(run_dir_model(trained).read_bytes())
    with pytest.warns(UserWarning, match=r"old.zip has no card .*cannot be checked"):
        agent = PPOAgent(str(old))
    assert agent.card is None and agent.num_players is None


def test_evaluate_and_the_ladder_refuse_a_model_on_another_table(trained, tmp_path):
    import evaluate

    path = str(run_dir_model(trained))
    common = ["--games", "4", "--no-plots", "--output-dir", str(tmp_path)]
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "evaluate.py"),
            "--agents",
            f"random,greedy,{path}",
            "--num-players",
            "3",
            *common,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0 and "was trained for 2 players, rules classic; asked for 3 players" in proc.stderr
    assert "--allow-other-table" in proc.stderr and not (tmp_path / "tournament.json").exists()
    run("evaluate.py", "--agents", f"random,greedy,{path}", "--num-players", "3", "--allow-other-table", *common)
    assert json.loads((tmp_path / "tournament.json").read_text())["args"]["num_players"] == 3
    with pytest.raises(ValueError, match="trained for 2 players, rules classic; asked for 4 players"):
        evaluate.main(evaluate.Args(ladder=path, num_players=4, output_dir=str(tmp_path / "ladder")))
    assert not (tmp_path / "ladder").exists()


def test_uno_play_refuses_a_model_on_another_table(trained, capsys):
    import io

    from uno_web.terminal import main as play_main

    path = str(run_dir_model(trained))
    out = io.StringIO()
    assert play_main(["--opponents", path, "--num-players", "3", "--seed", "1"], io.StringIO("q\n"), out) == 2
    assert "trained for 2 players, rules classic; asked for 3 players" in capsys.readouterr().err
    assert out.getvalue() == ""


def run_dir_model(trained):
    return trained[0] / "model.zip"


def test_train_resumes_from_a_checkpoint(trained, tmp_path):
    run_dir, _ = trained
    ckpt = run_dir / "checkpoints" / "step_1024.zip"
    args = [a for a in TINY_TRAIN]
    args[args.index("--total-timesteps") + 1] = "3072"
    proc = run("train.py", *args, "--resume", str(ckpt), "--output-dir", str(tmp_path), "--exp-name", "resumed")
    assert "resumed from" in proc.stdout and "at step 1,024" in proc.stdout
    final = json.loads((tmp_path / "resumed" / "final_eval.json").read_text())
    assert final["steps"] == 3072  # 1024 from the checkpoint + 2048 more


def test_train_killed_with_sigkill_resumes_from_its_latest_checkpoint(tmp_path):
    """Crash safety: SIGKILL a run mid-training, then --resume RUN_DIR continues from checkpoints/latest.json."""
    import signal
    import time

    args = [a for a in TINY_TRAIN]
    args[args.index("--total-timesteps") + 1] = "10000000"  # never finishes on its own
    args[args.index("--eval-every") + 1] = "0"
    common = ["--opponent-mix", "0.5*random,0.5*self", "--output-dir", str(tmp_path), "--exp-name", "killed"]
    latest = tmp_path / "killed" / "checkpoints" / "latest.json"
    log = tmp_path / "first.log"  # a file, not a pipe: a full pipe would stall the run
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "train.py"), *args, *common],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.time() + 240
        while not latest.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert latest.exists(), f"no checkpoint before the deadline:\n{log.read_text()[-2000:]}"
        time.sleep(1.0)  # let it go on training (and maybe into the next checkpoint write)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    step = json.loads(latest.read_text())["step"]
    assert step >= 1024 and step % 1024 == 0
    args[args.index("--total-timesteps") + 1] = str(step + 2048)
    out = run("train.py", *args, *common, "--resume", str(tmp_path / "killed")).stdout
    assert f"at step {step:,}: run state restored (snapshot pool: " in out and "league:" not in out
    final = json.loads((tmp_path / "killed" / "final_eval.json").read_text())
    assert final["start_step"] == step and final["steps"] == step + 2048  # two more rollouts of 1024
    assert json.loads(latest.read_text())["step"] == step + 2048
    assert not [p for p in (tmp_path / "killed" / "checkpoints").iterdir() if p.name.startswith(".tmp-")]


def test_a_failed_checkpoint_write_leaves_the_previous_latest_loadable(tmp_path, monkeypatch):
    """A write that dies half-way (here: raises after writing part of the file) never touches latest.json."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import UnoFeatures, UnoMaskablePolicy
    from training.run import find_checkpoint, load_state, save_checkpoint
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    model = MaskablePPO(
        UnoMaskablePolicy,
        UnoSB3VecEnv(4, 2, seed=0),
        n_steps=8,
        batch_size=16,
        seed=0,
        device="cpu",
        policy_kwargs=dict(features_extractor_class=UnoFeatures, features_extractor_kwargs=dict(hidden=(8,))),
    )
    directory = str(tmp_path / "checkpoints")
    save_checkpoint(directory, 100, model, {"history": ["first"]})

    def dies_half_way(f):
        f.write(b"PK\x03\x04 half a zip")
        raise OSError("disk gone (simulated kill)")

    monkeypatch.setattr(model, "save", dies_half_way)
    with pytest.raises(OSError, match="simulated kill"):
        save_checkpoint(directory, 200, model, {"history": ["second"]})
    monkeypatch.undo()
    # The model file failed: nothing of step 200 exists, the pointer still names step 100.
    assert sorted(os.listdir(directory)) == ["latest.json", "step_100.state.pt", "step_100.zip"]
    import torch

    real_save = torch.save
    monkeypatch.setattr(torch, "save", lambda *a, **k: (_ for _ in ()).throw(OSError("simulated kill in the state")))
    with pytest.raises(OSError, match="simulated kill in the state"):
        save_checkpoint(directory, 300, model, {"history": ["third"]})
    monkeypatch.setattr(torch, "save", real_save)
    ckpt = find_checkpoint(str(tmp_path))  # the run directory: checkpoints/latest.json
    assert ckpt.step == 100 and ckpt.model.endswith("step_100.zip") and ckpt.state.endswith("step_100.state.pt")
    assert MaskablePPO.load(ckpt.model, device="cpu").num_timesteps == model.num_timesteps
    assert load_state(ckpt.state) == {"history": ["first"]}
    assert not [n for n in os.listdir(directory) if n.startswith(".tmp-")]


def test_sigkill_inside_an_atomic_write_keeps_the_old_file_and_the_temporary_is_cleaned(tmp_path):
    target = tmp_path / "latest.json"
    target.write_text("old")
    code = (
        f"import os, signal; from training.run import atomic_write\n"
        f"def write(f):\n    f.write(b'new but'); f.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
        f"atomic_write({str(target)!r}, write)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=120)
    assert proc.returncode == -9
    assert target.read_text() == "old"
    from training.run import remove_partial

    left = [n for n in os.listdir(tmp_path) if n != "latest.json"]
    assert len(left) == 1 and left[0].startswith(".tmp-")  # what a real kill leaves
    assert remove_partial(str(tmp_path)) == left and os.listdir(tmp_path) == ["latest.json"]


def test_find_checkpoint_says_what_resume_accepts(tmp_path):
    from training.run import find_checkpoint

    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    with pytest.raises(ValueError, match="no checkpoint in .*--resume takes a run directory"):
        find_checkpoint(str(tmp_path / "run"))
    (tmp_path / "run" / "checkpoints" / "latest.json").write_text('{"step": 5, "model": "step_5.zip", "state": "x"}')
    with pytest.raises(ValueError, match="step_5.zip, which does not exist"):
        find_checkpoint(str(tmp_path / "run"))
    (tmp_path / "run" / "checkpoints" / "latest.json").write_text("not json")
    with pytest.raises(ValueError, match="is not a checkpoint pointer"):
        find_checkpoint(str(tmp_path / "run"))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--opponent-mix", "1*nobody"], "unknown agent 'nobody'"),
        (["--opponent-mix", "heuristic:0.5,search:20ms"], "write the weight first: 0.5*heuristic"),
        (["--opponent-mix", "abc*heuristic"], "bad weight 'abc' for heuristic"),
        (["--eval-opponents", "random,nobody"], "unknown agent 'nobody'"),
        (["--num-players", "1"], "--num-players must be an integer in 2..10"),
        (["--rules", "casual"], "unknown preset 'casual'"),
        (["--rules", '{"colour": 1}'], "unknown option"),
        (["--learner-seat", "2"], "--learner-seat must be 'random' or a seat 0..1"),
        (["--resume", "no/such/run"], "nothing to resume at 'no/such/run': --resume takes a run directory"),
        (["--history", "-1"], "--history must be in 0..1024"),
        (
            ["--history", "4", "--privileged-critic"],
            "--history is for the sb3 and batched backends, without --privileged-critic",
        ),
        (["--precision", "bf16", "--backend", "sb3"], "--precision is for the batched backend"),
        (
            ["--reward", "score", "--backend", "rllib", "--bc-positions", "0"],
            "--reward is for the sb3 and batched backends",
        ),
        (["--backend", "batched", "--device", "gpu0"], "--device must be a torch device such as cpu, cuda"),
        (["--backend", "batched", "--device", "cuda:7", "--bc-positions", "0"], "--device cuda:7: no such device here"),
    ],
)
def test_train_refuses_bad_settings_before_writing_anything(tmp_path, args, message):
    out = tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), *args, "--output-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "flag, value, allowed",
    [
        ("--activation", "gelu", "'relu', 'tanh', 'silu'"),
        ("--backend", "jax", "'sb3', 'batched', 'rllib'"),
        ("--precision", "fp16", "'auto', 'fp32', 'bf16'"),
        ("--reward", "points", "'win', 'score', 'rank'"),
        ("--learner-seat", "left", "random"),
    ],
)
def test_train_refuses_a_choice_outside_its_literal_and_lists_the_choices(tmp_path, flag, value, allowed):
    """Choices are Literal types: tyro refuses another value before anything runs, naming what is allowed."""
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "train.py"), flag, value, "--output-dir", str(tmp_path / "runs")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    err = " ".join(proc.stderr.replace("│", " ").split())
    assert proc.returncode == 2 and value in err and allowed in err and "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_train_against_a_mix_of_registry_agents(tmp_path):
    """Any agents.registry spec is an opponent: a heuristic and a search agent share the games."""
    args = [a for a in TINY_TRAIN]
    args[args.index("--hidden") + 1] = "16"
    args[args.index("--eval-opponents") + 1] = "random,search:16"
    args[args.index("--final-eval-games") + 1] = "20"
    args[args.index("--eval-games") + 1] = "20"
    proc = run(
        "train.py",
        *args,
        "--opponent-mix",
        "0.5*heuristic,0.5*search:16",
        "--checkpoint-every",
        "0",
        "--output-dir",
        str(tmp_path),
        "--exp-name",
        "mix",
    )
    final = json.loads((tmp_path / "mix" / "final_eval.json").read_text())
    assert final["steps"] == 2048 and final["args"]["opponent_mix"] == "0.5*heuristic,0.5*search:16"
    assert [r["opponent"] for r in final["final_eval"]] == ["random", "search:16"]
    assert all(r["games"] == 20 for r in final["final_eval"]) and "| search:16 |" in proc.stdout


def test_train_with_four_players_and_another_preset(tmp_path):
    args = [a for a in TINY_TRAIN]
    args[args.index("--total-timesteps") + 1] = "1024"
    args[args.index("--eval-opponents") + 1] = "random"
    proc = run(
        "train.py",
        *args,
        "--num-players",
        "4",
        "--rules",
        "house",
        "--opponent-mix",
        "random,greedy,self",
        "--final-eval-games",
        "40",
        "--output-dir",
        str(tmp_path),
    )
    final = json.loads((tmp_path / "uno_ppo" / "final_eval.json").read_text())
    assert final["final_eval"][0]["games"] == 40 and "| random |" in proc.stdout


# --- PPOAgent -----------------------------------------------------------------------------


def test_saved_model_loads_as_ppo_agent_and_plays_only_legal_actions(trained):
    from agents.ppo import PPOAgent

    run_dir, _ = trained
    for deterministic in (True, False):
        # Other tables than its card's: a transfer experiment, allowed explicitly.
        agent = make_agent(str(run_dir / "model.zip"), deterministic=deterministic, allow_other_table=True)
        assert isinstance(agent, PPOAgent) and agent.name == "tiny"
        for preset, players in (("classic", 2), ("house", 3), ("official", 4)):
            engine = Engine(64, players, UnoRules.preset(preset), seed=5, autoreset=True)
            rng = np.random.default_rng(0)
            for _ in range(150):
                actions = agent.act(engine.observation, engine.legal_mask, rng)
                assert actions.dtype == np.int64 and actions.shape == (64,)
                assert engine.legal_mask[np.arange(64), actions].all()
                engine.step(actions)  # raises ValueError on an illegal action


def test_ppo_agent_is_reproducible_from_its_rng_and_deterministic_is_the_masked_argmax(trained):
    from agents.ppo import PPOAgent

    run_dir, _ = trained
    engine = Engine(256, 2, seed=1)
    obs, mask = engine.observation.copy(), engine.legal_mask.copy()
    sampler = PPOAgent(str(run_dir / "model.zip"))
    a = sampler.act(obs, mask, np.random.default_rng(7))
    b = sampler.act(obs, mask, np.random.default_rng(7))
    assert (a == b).all()
    greedy = PPOAgent(str(run_dir / "model.zip"), deterministic=True)
    logits = np.where(mask, greedy.logits(obs), -np.inf)
    assert (greedy.act(obs, mask, np.random.default_rng(0)) == logits.argmax(1)).all()
    # A row with no legal action gets -1, the engine's "leave this game".
    empty = mask[:2].copy()
    empty[0] = False
    assert greedy.act(obs[:2], empty, np.random.default_rng(0))[0] == -1


HISTORY_RULES = '{"hand_size": 3, "max_turns": 60}'


@pytest.fixture(scope="module")
def history_model(tmp_path_factory):
    """A tiny MaskablePPO over UnoSB3VecEnv(history=4), sb3's own MultiInputPolicy, saved."""
    import torch
    from sb3_contrib import MaskablePPO

    from uno_env import parse_rules
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    torch.set_num_threads(1)
    venv = UnoSB3VecEnv(num_envs=4, rules=parse_rules(json.loads(HISTORY_RULES)), seed=0, history=4)
    model = MaskablePPO(
        "MultiInputPolicy",
        venv,
        n_steps=32,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs=dict(net_arch=[16]),
    )
    model.learn(256)
    path = tmp_path_factory.mktemp("history") / "hist.zip"
    model.save(path)
    return model, venv, path


def test_a_model_trained_with_history_loads_and_plays_as_an_agent(history_model):
    """PPOAgent reads the history length from the saved model, acts as the model predicts on the
    env's dict observation, and plays a table through the arena (which keeps the history)."""
    from agents.ppo import PPOAgent

    model, venv, path = history_model
    agent = PPOAgent(str(path), deterministic=True)
    assert agent.history_length == 4 and make_agent(str(path)).history_length == 4
    obs = venv.reset()
    masks = venv.action_masks()
    predicted, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert np.array_equal(agent.act(obs, masks, np.random.default_rng(0)), predicted)
    with pytest.raises(ValueError, match="this policy reads history=4"):
        agent.act(obs["observation"], masks, np.random.default_rng(0))
    result = play([agent, RandomAgent()], 12, parse_rules(HISTORY_RULES), seed=3, batch_size=6)
    assert result.games == 12 and result.wins.sum() + result.truncated == 12
    with pytest.raises(ValueError, match="reads the last 4 events of public history, but the engine keeps 0"):
        from uno_env.table import ask_one

        ask_one(agent, Engine(1, 2, seed=0), 0, np.random.default_rng(0))


def test_train_and_evaluate_a_model_with_history(tmp_path):
    """train.py --history trains a Dict-observation model, warm-started on positions that carry the
    history; evaluate.py plays it from its path alone."""
    from agents.ppo import PPOAgent

    args = list(TINY_TRAIN)
    for flag, value in (("--eval-games", "10"), ("--final-eval-games", "10"), ("--total-timesteps", "1024")):
        args[args.index(flag) + 1] = value
    rules = ["--rules", HISTORY_RULES]
    out = run("train.py", *args, *rules, "--history", "4", "--output-dir", str(tmp_path), "--exp-name", "hist")
    assert "warm start:" in out.stdout and "labelled by heuristic" in out.stdout
    model_path = tmp_path / "hist" / "model.zip"
    assert PPOAgent(str(model_path)).history_length == 4
    proc = run(
        "evaluate.py",
        "--agents",
        f"random,mine={model_path}",
        "--games",
        "10",
        *rules,
        "--output-dir",
        str(tmp_path / "eval"),
        "--no-plots",
    )
    data = json.loads((tmp_path / "eval" / "tournament.json").read_text())
    assert data["agents"] == ["random", "mine"] and data["tables"][0]["games"] == 10
    assert "| agent | opponent | games | wins | win rate | 95% CI |" in proc.stdout


def test_ppo_agent_refuses_what_it_cannot_play(trained, tmp_path):
    from agents.ppo import PPOAgent

    run_dir, _ = trained
    agent = PPOAgent(str(run_dir / "model.zip"))
    with pytest.raises(ValueError, match="observation must be"):
        agent.act(np.zeros((3, 10), np.float32), np.ones((3, 116), bool), np.random.default_rng(0))
    with pytest.raises(ValueError, match="no saved model"):
        PPOAgent(str(tmp_path / "missing.zip"))
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a loadable MaskablePPO"):
        PPOAgent(str(bad))
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("no_such_agent")


def test_lean_evaluate_actions_equals_sb3_contribs():
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.ppo import UnoFeatures, UnoMaskablePolicy
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    model = MaskablePPO(
        UnoMaskablePolicy,
        UnoSB3VecEnv(4, 2, seed=0),
        seed=0,
        device="cpu",
        policy_kwargs=dict(features_extractor_class=UnoFeatures, features_extractor_kwargs=dict(hidden=(32,))),
    )
    engine = Engine(300, 2, seed=3, autoreset=True)
    rng = np.random.default_rng(0)
    for _ in range(20):  # positions from play, not only deals
        engine.step(RandomAgent().act(engine.observation, engine.legal_mask, rng))
    obs = torch.as_tensor(engine.observation)
    mask = torch.as_tensor(engine.legal_mask)
    actions = torch.as_tensor(RandomAgent().act(engine.observation, engine.legal_mask, rng))
    with torch.no_grad():
        ours = model.policy.evaluate_actions(obs, actions, mask)
        theirs = MaskableActorCriticPolicy.evaluate_actions(model.policy, obs, actions, mask)
    for a, b in zip(ours, theirs, strict=True):
        assert torch.allclose(a.reshape(-1), b.reshape(-1), atol=1e-5)


# --- the opponent pool --------------------------------------------------------------------


def test_parse_mix_and_split_games():
    assert parse_mix("3*random,1*greedy") == {"random": 0.75, "greedy": 0.25}
    assert parse_mix("random, 0*greedy") == {"random": 1.0}
    # ':' is a budget, never a weight (agents.registry.parse_mix; tests/agents/test_specs.py has the grammar).
    assert parse_mix("3*search:64,search:20ms,0*fast=search:8") == {"search:64": 0.75, "search:20ms": 0.25}
    assert parse_mix("search:64") == {"search:64": 1.0}
    assert parse_mix("0.5*self,0.5*league") == {"self": 0.5, "league": 0.5}
    for bad, match in (
        ("-1*random", ">= 0"),
        ("nan*random", "finite"),
        ("random,2*random", "given twice"),
        ("", "at least one"),
    ):
        with pytest.raises(ValueError, match=match):
            parse_mix(bad)
    assert split_games(256, [0.5, 0.3, 0.2]) == [128, 77, 51]
    assert split_games(10, [0.98, 0.01, 0.01]) == [8, 1, 1]  # every kind asked for gets a game
    assert sum(split_games(7, [1, 1, 1])) == 7


def test_opponent_groups_share_one_env_and_self_play_swaps_in_snapshots():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from agents.ppo import UnoFeatures, UnoMaskablePolicy
    from training.sb3 import WinsByKind
    from uno_env.sb3_vec_env import UnoSB3VecEnv

    groups = opponent_groups(
        parse_mix("0.5*random,0.2*greedy,0.3*self"), 10, UnoRules(), self_play_groups=2, num_players=2
    )
    assert [(g.kind, g.games) for g in groups] == [("random", 5), ("greedy", 2), ("self", 2), ("self", 1)]
    assert isinstance(groups[2].agent, PendingSnapshot) and groups[1].agent.name == "greedy"
    venv = UnoSB3VecEnv(10, 2, learner_seat="random", opponents=[(g.agent, g.games) for g in groups], seed=0)
    assert venv.group_of.tolist() == [0] * 5 + [1] * 2 + [2] * 2 + [3]
    with pytest.raises(ValueError, match="no snapshot yet"):  # a self-play group before the learner exists
        venv.reset()
    model = MaskablePPO(
        UnoMaskablePolicy,
        venv,
        n_steps=8,
        batch_size=16,
        seed=0,
        device="cpu",
        policy_kwargs=dict(features_extractor_class=UnoFeatures, features_extractor_kwargs=dict(hidden=(8,))),
    )
    members = league_members(["heuristic"], UnoRules(), groups)
    self_play = League(venv, groups, members, pool_size=2, latest_prob=1.0, seed=0)
    self_play.start(model.policy)
    assert len(self_play.self_agents) == 2 and {a.name for a in self_play.self_agents} == {"self"}
    assert self_play.groups == [] and self_play.members == ["self@0"]  # no league groups: no fixed members
    wins = WinsByKind(groups)
    model.learn(800, callback=[wins, self_play])  # the self-play groups now play: no ValueError
    self_play.add_snapshot(model.policy, 800)
    assert self_play.pool.added == 2 and self_play.self_current == ["self@800", "self@800"]  # latest_prob 1
    assert self_play.summary() is None
    assert sum(len(r) for r in wins.recent.values()) > 0 and set(wins.recent) == {"random", "greedy", "self"}
    rng = np.random.default_rng(0)
    venv.reset()
    for _ in range(50):
        venv.step(sample_legal(get_action_masks(venv), rng))


def test_snapshot_pool_keeps_copies():
    import torch

    layer = torch.nn.Linear(2, 2)
    pool = SnapshotPool(size=2)
    assert pool.add(layer, 0) == []
    with torch.no_grad():
        layer.weight.add_(1.0)
    assert not torch.equal(pool.snapshots[pool.draw_recent(np.random.default_rng(0), 1.0)]["weight"], layer.weight)
    pool.add(layer, 10)
    assert pool.add(layer, 20) == ["self@0"]  # the oldest leaves a full pool
    assert list(pool.snapshots) == ["self@10", "self@20"] and pool.newest() == "self@20"
    assert torch.equal(pool.snapshots[pool.draw_recent(np.random.default_rng(0), 1.0)]["weight"], layer.weight)
    draws = {pool.draw_recent(np.random.default_rng(s), 0.0) for s in range(20)}
    assert draws == {"self@10", "self@20"}  # latest_prob 0: uniform over the pool
    with pytest.raises(ValueError, match="size must be >= 1"):
        SnapshotPool(size=0)
    with pytest.raises(ValueError, match="empty"):
        SnapshotPool().newest()


def test_saved_league_reads_both_checkpoint_layouts():
    w = [{"weight": np.zeros(1)}, {"weight": np.ones(1)}]
    new = {"league": {"snapshots": [("self@5", w[0])], "added": 1}}
    assert saved_league(new) is new["league"]
    # Before the pools were merged: self-play's unnamed snapshots, and the league's named ones or None.
    old_self = {"snapshots": w, "added": 7, "rng": "self-rng"}
    alone = saved_league({"self_play": old_self, "league": None})
    assert [name for name, _ in alone["snapshots"]] == ["self@restored-0", "self@restored-1"]
    assert alone["added"] == 7 and alone["self_rng"] == "self-rng" and "rng" not in alone
    old_league = {"snapshots": [("self@0", w[0]), ("self@9", w[1])], "results": {}, "current": ["self@9"], "rng": "r"}
    both = saved_league({"self_play": old_self, "league": old_league})
    assert [name for name, _ in both["snapshots"]] == ["self@0", "self@9"]
    assert both["rng"] == "r" and both["self_rng"] == "self-rng" and both["current"] == ["self@9"]


# --- tournaments: known answers -----------------------------------------------------------


class DrawAlwaysAgent:
    """Legal but terrible: draws whenever it may (playing the drawn card if it fits), else plays its first legal card."""

    name = "draw_always"

    def act(self, observation, action_mask, rng):
        from uno_env.observation import OBS_OFFSETS, PHASE_NAMES

        mask = np.asarray(action_mask, bool)
        post_draw = observation[:, OBS_OFFSETS["phase"] + PHASE_NAMES.index("post_draw")] == 1
        out = np.empty(mask.shape[0], np.int64)
        for b in range(mask.shape[0]):
            legal = np.flatnonzero(mask[b])
            if post_draw[b] and (legal < 57).any():
                out[b] = legal[legal < 57][0]
            elif mask[b, int(Action.DRAW)]:
                out[b] = int(Action.DRAW)
            else:
                out[b] = legal[0]
        return out


def test_an_agent_against_itself_wins_half_over_rotated_seats():
    rules = UnoRules()
    n = 4000
    r = play([RLCardRuleAgent(rules), RLCardRuleAgent(rules)], n, rules=rules, seed=11)
    assert r.wins.sum() + r.truncated == n
    # 4 standard errors: fails by chance about once in 16,000 seeds.
    assert abs(r.win_rate[0] - 0.5) < 4 * math.sqrt(0.25 / n)
    lo, hi = r.ci95[0]
    assert hi - lo < 0.035
    assert r.names == ["rlcard_rule", "rlcard_rule#2"]


def test_a_legal_but_terrible_agent_loses_to_random_and_gets_the_lower_rating():
    # It hoards the deck, so many rounds reach the turn limit (no winner); a shorter limit keeps this quick.
    rules = UnoRules(max_turns=1500)
    t = tournament([DrawAlwaysAgent(), RandomAgent()], 400, num_players=2, rules=rules, seed=2)
    ((idx, r),) = t.tables
    assert r.wins.sum() + r.truncated == 400
    assert r.ci95[0][1] < 0.02 and r.wins[1] > 100  # it (almost) never wins; random wins every decided game
    assert r.mean_points[1] > r.mean_points[0]
    ratings = dict(zip(t.names, t.ratings, strict=True))
    assert ratings["random"] == 1000.0 and ratings["draw_always"] < 1000.0 - 400


def test_tables_are_reproducible_from_the_seed_and_rotate_seats():
    rules = UnoRules()
    agents = [RLCardRuleAgent(rules), RandomAgent(), RandomAgent()]
    a = play(agents, 300, rules=rules, seed=4, batch_size=64)
    b = play(agents, 300, rules=rules, seed=4, batch_size=64)
    assert (a.wins == b.wins).all() and (a.points == b.points).all() and a.steps == b.steps
    # Each game has at most one winner; the strong agent wins most 3-player games.
    assert a.wins.sum() + a.truncated == 300
    assert a.win_rate[0] > 0.6


def test_bradley_terry_recovers_known_odds():
    # 75 wins to 25: odds 3, so 400 log10(3) = 190.8 points apart (no prior).
    ratings, se = bradley_terry(np.array([[0, 75], [25, 0]]), anchor=1, anchor_rating=1000.0, prior=0.0)
    assert ratings[1] == pytest.approx(1000.0) and ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3))
    # Standard error of a log-odds from 100 games at p = 0.75: 1/sqrt(100 * 0.75 * 0.25).
    assert abs(se[0] - 400 / math.log(10) / math.sqrt(100 * 0.75 * 0.25)) < 1e-6 and se[1] == 0.0
    # Transitive three-agent case: A beats B 2:1, B beats C 2:1, A beats C 4:1 fits exactly.
    beat = np.array([[0, 200, 400], [100, 0, 200], [100, 100, 0]])
    r, _ = bradley_terry(beat, prior=0.0)
    assert abs((r[0] - r[1]) - 400 * math.log10(2)) < 0.5 and abs((r[1] - r[2]) - 400 * math.log10(2)) < 0.5


def test_a_tournament_takes_parsed_rules():
    """Rules are read at the edges (the scripts, make_agent, the envs); a tournament takes a UnoRules (mypy checks)."""
    assert typing.get_type_hints(tournament)["rules"] == UnoRules | None
    assert tournament([RandomAgent(), RandomAgent()], 10).config["rules"] == UnoRules().to_dict()


def test_four_player_tournament_plays_every_table():
    rules = UnoRules()
    names = ["random", "random", "rlcard_rule", "greedy", "heuristic"]
    t = tournament([make_agent(n, rules) for n in names], 200, num_players=4, rules=rules, seed=0)
    assert len(t.tables) == 5  # C(5, 4)
    beat, met = t.pairwise()
    assert (met[~np.eye(5, dtype=bool)] > 0).all()
    per = {d["agent"]: d for d in t.per_agent()}
    assert per["random"]["games"] == 4 * 200  # in 4 of the 5 tables
    assert per["heuristic"]["win_rate"] > per["random"]["win_rate"]


# --- evaluate.py --------------------------------------------------------------------------


def test_evaluate_runs_a_tournament_with_a_saved_model_and_writes_json_and_plots(trained, tmp_path):
    run_dir, _ = trained
    proc = run(
        "evaluate.py",
        "--agents",
        f"random,greedy,mine={run_dir / 'model.zip'}",
        "--games",
        "200",
        "--seed",
        "5",
        "--output-dir",
        str(tmp_path),
    )
    assert "| agent | opponent | games | wins | win rate | 95% CI |" in proc.stdout
    assert "| rank | agent | rating |" in proc.stdout
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["agents"] == ["random", "greedy", "mine"] and len(data["tables"]) == 3
    assert all(t["games"] == 200 for t in data["tables"])
    for png in ("win_rates.png", "ratings.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Reproducible from the seed.
    run(
        "evaluate.py",
        "--agents",
        f"random,greedy,mine={run_dir / 'model.zip'}",
        "--games",
        "200",
        "--seed",
        "5",
        "--output-dir",
        str(tmp_path / "again"),
        "--no-plots",
    )
    again = json.loads((tmp_path / "again" / "tournament.json").read_text())
    assert [t["wins"] for t in again["tables"]] == [t["wins"] for t in data["tables"]]


def test_evaluate_plays_search_agents_by_spec(tmp_path):
    proc = run(
        "evaluate.py",
        "--agents",
        "random,heuristic,search:64",
        "--games",
        "20",
        "--seed",
        "1",
        "--output-dir",
        str(tmp_path),
        "--no-plots",
    )
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["agents"] == ["random", "heuristic", "search:64"] and len(data["tables"]) == 3
    assert all(t["games"] == 20 and sum(t["wins"]) + t["truncated"] == 20 for t in data["tables"])
    assert "| heuristic | search:64 | 20 |" in proc.stdout and not (tmp_path / "win_rates.png").exists()


def test_evaluate_refuses_an_anchor_that_does_not_play(tmp_path):
    import evaluate

    args = dict(agents="random,heuristic", games=4, plots=False, output_dir=str(tmp_path / "out"))
    with pytest.raises(
        ValueError, match=r"--anchor 'heuristc' is not one of the agents: give one of random, heuristic"
    ):
        evaluate.main(evaluate.Args(**args, anchor="heuristc"))
    assert not (tmp_path / "out").exists()
    assert evaluate.main(evaluate.Args(**args, anchor="heuristic")).anchor == "heuristic"
    assert evaluate.main(evaluate.Args(**args, anchor="")).anchor is None  # the mean
    # The default anchor, random, falls back to the mean when random does not play.
    assert evaluate.main(evaluate.Args(**{**args, "agents": "greedy,heuristic"})).anchor is None


def test_evaluate_rejects_unknown_agents(tmp_path):
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "evaluate.py"), "--agents", "random,nobody", "--output-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "unknown agent 'nobody'" in proc.stderr


# --- the notebook -------------------------------------------------------------------------


def test_quickstart_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="the notebook runner needs nbformat + nbclient (test extra)")
    nbclient = pytest.importorskip("nbclient", reason="the notebook runner needs nbclient (test extra)")
    pytest.importorskip("ipykernel", reason="nbclient needs the ipykernel package for a python3 kernel")
    nb = nbformat.read(os.path.join(ROOT, "notebooks", "quickstart.ipynb"), as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": os.path.join(ROOT, "notebooks")}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the win-rate heat map and the rating bars
