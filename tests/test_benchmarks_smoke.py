"""Smoke test: ``benchmarks/engine.py --quick`` still runs (never asserts on speed)."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "engine.py"


def test_engine_benchmark_quick(tmp_path):
    out_json = tmp_path / "bench.json"
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    # Timeout generous enough for a cold numba cache (the engine compiles in this subprocess).
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out_json)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    table_rows = [line for line in proc.stdout.splitlines() if line.startswith("| uno_env |")]
    batches = {int(line.split("|")[3]) for line in table_rows}
    assert {1, 64, 1024, 4096} <= batches, proc.stdout
    report = json.loads(out_json.read_text())
    assert {r["batch"] for r in report["throughput"] if r["impl"] == "uno_env"} >= {1, 64, 1024, 4096}
    assert all(r["steps_per_s"] > 0 for r in report["throughput"])
