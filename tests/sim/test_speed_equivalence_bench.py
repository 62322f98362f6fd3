"""The benchmark script keeps working (CI runs it once, quick; no timing is asserted)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sim_bench_quick_runs():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sim_bench.py"), "--quick"],
                         capture_output=True, text=True, timeout=600, cwd=str(ROOT),
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "pypto-sim" in out.stdout and "sim/loop" in out.stdout
    assert "cold start" in out.stdout and "task scaling" in out.stdout
    assert "what checks and tracing cost" in out.stdout and "all four + trace" in out.stdout
