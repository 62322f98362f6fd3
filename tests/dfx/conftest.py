"""Fixtures for the DFX artifact tests: the real simulator behind the harness (a golden
test module swaps in a stand-in at import; this conftest is imported before it)."""
import pytest

import pypto.golden.runner as runner

REAL_SIMULATE = runner._simulate


@pytest.fixture(autouse=True)
def real_harness(monkeypatch):
    assert REAL_SIMULATE.__module__ == "pypto.golden.runner"
    monkeypatch.setattr(runner, "_simulate", REAL_SIMULATE)
    monkeypatch.setattr(runner, "_warned", set())
    monkeypatch.delenv("PYPTO_SIM_DFX", raising=False)
    monkeypatch.delenv("PYPTO_BENCH", raising=False)
