"""The lint and type gate, as tests (so `.ci/run`, the README's test command, runs it):
ruff with the rule set of pyproject.toml over the code and its tests and tools, and mypy
over `pypto/`. Both tools come with the `test` extra."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINTED = ["pypto", "pypto_lab", "tests", "tools", "benchmarks"]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff_finds_nothing():
    out = _run("ruff", "check", "--no-cache", "--output-format", "concise", *LINTED)
    assert out.returncode == 0, f"ruff:\n{out.stdout}{out.stderr}"


def test_mypy_finds_nothing_in_pypto():
    # the files, the Python version and the options are in pyproject.toml [tool.mypy]
    out = _run("mypy", "--no-incremental", "--no-error-summary")
    assert out.returncode == 0, f"mypy:\n{out.stdout}{out.stderr}"
