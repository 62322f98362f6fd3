"""Fixtures for the harness tests (helpers live in golden_helpers.py)."""
import pytest
from golden_helpers import FakeCompiled, fake_simulate


@pytest.fixture
def fake_kernel(monkeypatch):
    """Route the harness's simulator call to the stand-in device of golden_helpers."""
    import pypto.golden.runner as runner

    monkeypatch.setattr(runner, "_simulate", fake_simulate)
    return FakeCompiled


@pytest.fixture(autouse=True)
def fresh_notes(monkeypatch):
    """Each test sees the harness's once-per-process notes afresh (they are printed
    once per message, and the tests check some of them)."""
    import pypto.golden.runner as runner

    monkeypatch.setattr(runner, "_warned", set())
