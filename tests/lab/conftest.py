"""Fixtures for the workbench tests: a real headless IPython shell with the extension."""
from __future__ import annotations

import pytest

pytest.importorskip("IPython")
pytest.importorskip("plotly")
pytest.importorskip("networkx")


@pytest.fixture
def ip():
    """The process-wide `InteractiveShell` with `pypto_lab` loaded and a clean namespace."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.extension_manager.load_extension("pypto_lab")
    saved = dict(shell.user_ns)
    yield shell
    shell.user_ns.clear()
    shell.user_ns.update(saved)
