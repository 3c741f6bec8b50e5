"""Smoke test: ``python -m benchmarks.soak --quick`` runs every configuration and finds no violation."""

import json
import os
import subprocess
import sys

from helpers import ROOT


def test_soak_quick(tmp_path):
    out_json = tmp_path / "soak.json"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    # Generous timeout: a cold numba cache compiles the engine in this subprocess.
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", "--quick", "--json", str(out_json)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out_json.read_text())
    total = report["total"]
    assert total["violations"] == 0 and total["steps"] >= 300_000
    assert total["invariant_checks"] >= len(report["rows"]) and total["games"] > 0
    configs = {(r["configuration"], r["players"]) for r in report["rows"]}
    for preset in ("classic", "official", "swap_hands", "house", "rlcard"):
        assert {(preset, n) for n in range(2, 11)} <= configs
    assert "| violations | 0 |" in proc.stdout
