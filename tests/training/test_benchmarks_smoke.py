"""Smoke tests: the benchmark scripts still run (they never assert on speed).

``python -m benchmarks.engine_speed --quick`` and the suite ``python -m benchmarks --quick`` (tiny sizes)
run in subprocesses; the suite's Markdown, JSON and PNG must hold every section's rows, the
ratios against the peers and the target verdicts.
"""

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT


def _run(args, timeout=600):
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    # Timeout generous enough for a cold numba cache (the engine compiles in the subprocess).
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_engine_benchmark_quick(tmp_path):
    out_json = tmp_path / "bench.json"
    proc = _run(["-m", "benchmarks.engine_speed", "--quick", "--json", str(out_json)])
    table_rows = [line for line in proc.stdout.splitlines() if line.startswith("| uno_env |")]
    batches = {int(line.split("|")[3]) for line in table_rows}
    assert {1, 64, 1024, 4096} <= batches, proc.stdout
    report = json.loads(out_json.read_text())
    assert {r["batch"] for r in report["throughput"] if r["impl"] == "uno_env"} >= {1, 64, 1024, 4096}
    assert all(r["steps_per_s"] > 0 for r in report["throughput"])


def test_suite_quick_without_peers(tmp_path):
    """Core and scaling sections alone (no RLCard, no torch): tables, JSON, plot and memory rows."""
    proc = _run(
        [
            "-m",
            "benchmarks",
            "--quick",
            "--no-rlcard",
            "--sections",
            "core,scaling",
            "--profile",
            "--results-dir",
            str(tmp_path),
        ]
    )
    report = json.loads((tmp_path / "benchmarks.json").read_text())
    assert set(report["sections"]) == {"core", "scaling"}
    core = report["sections"]["core"]["rows"]
    assert {(r["impl"], r["batch"]) for r in core} >= {
        ("uno_env", 1),
        ("uno_env", 64),
        ("uno_env core", 64),
        ("uno_env RLCard-like rules", 64),
    }
    assert all(r["steps_per_s"] > 0 and "ratio" not in r for r in core)  # no peer, no ratio
    sc = report["sections"]["scaling"]
    assert [r["batch"] for r in sc["batch_rows"]] == [1, 16]
    assert [r["players"] for r in sc["player_rows"]] == [2, 10]
    mem = {r["players"]: r for r in sc["memory"]}
    # More seats mean more per-player state: the array bytes per game must grow with the player count.
    assert 0 < mem[2]["state_bytes_per_game"] < mem[10]["state_bytes_per_game"]
    assert mem[2]["traced_peak_bytes_per_game"] >= mem[2]["state_bytes_per_game"]
    assert (tmp_path / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "benchmarks.md").read_text() == proc.stdout
    assert (tmp_path / "profiles.txt").read_text() == "no target missed\n"  # no peer, so no target


def test_suite_quick_with_peers(tmp_path):
    """The whole suite with RLCard and the MaskablePPO pipelines: every ratio and target present."""
    pytest.importorskip("rlcard")
    pytest.importorskip("sb3_contrib")
    _run(
        ["-m", "benchmarks", "--quick", "--sections", "core,env,pipeline", "--profile", "--results-dir", str(tmp_path)]
    )
    s = json.loads((tmp_path / "benchmarks.json").read_text())["sections"]
    missed = [
        r for sec in s.values() for r in sec["rows"] if "target" in r and not (r["target_met"] and r["cpu_target_met"])
    ]
    profiles = (tmp_path / "profiles.txt").read_text()
    assert all(f": {r['impl']} (" in profiles for r in missed) and ("no target missed" in profiles) == (not missed)
    core = {(r["impl"], r["players"], r["batch"]): r for r in s["core"]["rows"]}
    for p in (2, 4):
        assert core[("rlcard", p, 1)]["steps_per_s"] > 0
        assert core[("uno_env", p, 1)]["target"] == 5.0 and "target_met" in core[("uno_env", p, 1)]
        assert core[("uno_env core", p, 64)]["ratio"] > 0
    env = {r["impl"]: r for r in s["env"]["rows"]}
    assert env["env()"]["target"] == 1.5 and env["raw_env"]["target"] == 3.0
    tut, ours = s["pipeline"]["rows"]
    assert tut["impl"].startswith("tutorial") and ours["impl"].startswith("uno_env")
    assert ours["timesteps_per_run"] >= ours["rollout_size"] and ours["target"] == 3.0
    assert 0 < tut["update_share"] < 1 and ours["ratio"] > 0


def test_time_to_skill_quick_both_learners(tmp_path):
    """The suite's skill section (benchmarks/time_to_skill.py, quick): both learners trained, evaluated, tabled."""
    pytest.importorskip("sb3_contrib")
    proc = _run(["-m", "benchmarks", "--quick", "--sections", "skill", "--results-dir", str(tmp_path)])
    report = json.loads((tmp_path / "time_to_skill.json").read_text())
    opponents = report["args"]["opponents"].split(",")
    rows = {(r["learner"].split(":")[0], r["opponent"]): r for r in report["rows"]}
    assert set(rows) == {(learner, o) for learner in ("ours", "tutorial") for o in opponents}
    for r in rows.values():
        assert r["steps"] > 0 and r["evaluations"] == len(r["history"]) >= 1
        assert r["reached"] == (r["stop_reason"] == "reached")
        assert all(e["games"] == report["args"]["eval_games"] and e["opponent"] == r["opponent"] for e in r["history"])
    table = [
        line
        for line in (tmp_path / "time_to_skill.md").read_text().splitlines()
        if line.startswith(("| ours:", "| tutorial:"))
    ]
    assert len(table) == len(rows), table
    assert "### 5. Time to skill" in proc.stdout and all(line in proc.stdout for line in table)


def test_learner_throughput_quick(tmp_path):
    """benchmarks/learner_throughput.py (quick): a row per backend setting, ratios to the first, the update and env
    figures and the strength part, in Markdown and JSON."""
    pytest.importorskip("sb3_contrib")
    proc = _run(
        [
            "-m",
            "benchmarks.learner_throughput",
            "--quick",
            "--strength-minutes",
            "0.02",
            "--results-dir",
            str(tmp_path),
            "--runs-dir",
            str(tmp_path / "runs"),
        ]
    )
    from training.run import usable_cores

    report = json.loads((tmp_path / "learner_throughput.json").read_text())
    rows = report["rows"]
    assert [r["row"] for r in rows] == ["sb3", "sb3-update2", "batched", "batched-1thread", "batched-sb3-shape"]
    assert [r["backend"] for r in rows] == ["sb3", "sb3", "batched", "batched", "batched"]
    assert rows[0]["ratio"] == 1.0 and all(r["steps_per_s"] > 0 and r["cpu_steps_per_s"] > 0 for r in rows)
    assert [r["update_threads"] for r in rows] == [1, 2, usable_cores(), 1, usable_cores()]
    assert report["update"] and all(u["update_per_s"] > 0 for u in report["update"])
    runs = report["strength"]["runs"]
    assert list(runs) == ["sb3", "batched"] and all(0 <= r["win_rate"] <= 1 for r in runs.values())
    table = [line for line in (tmp_path / "learner_throughput.md").read_text().splitlines() if line.startswith("| ")]
    assert len(table) == 3 + len(rows) + len(report["update"]) + len(runs)  # three tables: a header and rows each
    assert all(line in proc.stdout for line in table)


def test_time_to_skill_train_set_changes_train_py_defaults():
    from benchmarks.time_to_skill import parse_train_set, train_defaults

    assert parse_train_set("bc_positions=250000, opponent_mix=heuristic") == {
        "bc_positions": 250_000,
        "opponent_mix": "heuristic",
    }
    assert train_defaults()["bc_positions"] != 250_000  # a change, not the default itself
    for bad in ("no_such_setting=1", "bc_positions"):
        with pytest.raises(SystemExit, match="name=value with a name of train.py's Args"):
            parse_train_set(bad)


def test_history_benchmark_runs():
    proc = _run(["-m", "lab.history_cost", "--rounds", "4", "--runs", "1", "--seconds", "0.05", "--batches", "1", "4"])
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| heuristic |")]
    assert len(rows) == 2, proc.stdout
    assert [line.split("|")[1].strip() for line in proc.stdout.splitlines() if line.startswith("| 4 |")] == ["4"]


def test_env_threads_benchmark_runs():
    proc = _run(
        ["-m", "benchmarks.env_threads", "--num-envs", "64", "--steps", "2", "--runs", "1", "--threads", "1", "3"]
    )
    lines = proc.stdout.splitlines()
    for threads in ("1", "3"):  # the steps/s table and the breakdown
        assert len([line for line in lines if line.startswith(f"| {threads} |")]) == 2, proc.stdout
    assert [line.split("|")[1].strip() for line in lines if line.startswith("| threads=") or "parallel=True" in line][
        -3:
    ] == ["threads=1", "threads=3", "parallel=True (numba's threads)"]


def test_ppo_library_without_torchrl_names_the_install_command(monkeypatch):
    from lab.ppo_library import require_torchrl

    monkeypatch.setitem(sys.modules, "torchrl", None)  # import torchrl raises ImportError
    with pytest.raises(SystemExit, match="pip install --no-deps torchrl"):
        require_torchrl()


def test_ppo_library_quick_agrees_with_torchrl(tmp_path):
    """Where TorchRL is installed (not a dependency): its loss and GAE give ours to float32 precision."""
    pytest.importorskip("torchrl")
    _run(["-m", "lab.ppo_library", "--quick", "--results-dir", str(tmp_path)])
    report = json.loads((tmp_path / "ppo_library.json").read_text())
    for by_learner in report["losses"].values():
        ours = by_learner["ours"]
        for losses in by_learner.values():
            assert losses == pytest.approx(ours, rel=1e-4, abs=1e-6)
    assert all(check["allclose_rtol_1e-4"] for check in report["gae"]["check"].values())
    page = (tmp_path / "ppo_library.md").read_text()
    assert page.count("| torchrl (trunk once) |") == 4  # two minibatch sizes: the rates and the losses
