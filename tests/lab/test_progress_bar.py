"""A long run in a notebook (issue 16, item 6): with `%load_ext pypto_lab` a plain kernel
call that runs for more than two seconds shows a bar in its cell, redrawn in place, and
a last line when it ends; the kernel's interrupt (Ctrl-C, the stop button) stops it with
KeyboardInterrupt and the notebook kernel goes on. A real ipykernel, driven as a
notebook front end drives it."""
from __future__ import annotations

import queue
import sys
import time

import pytest

from pypto.sim import Progress, get_progress, set_progress, terminal_progress

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from jupyter_client.kernelspec import KernelSpec, KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

from pypto_lab.progress import NotebookProgress, bar_html, show_bars  # noqa: E402

_SETUP = '''
%load_ext pypto_lab
import numpy as np
import pypto.language as pl
from pypto.sim import SimConfig


@pl.jit
def endless(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    for (i,) in pl.while_(init_values=(0,)):
        pl.cond(i >= 0)
        i = pl.yield_(i + 1)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = x[:, :]
    return y


@pl.jit
def plain(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
        y[:, :] = pl.add(x[:, :], 1.0)
    return y


x, y = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
# the bar's hook as loaded, shown after 0.1 s instead of 2 s: a fast machine runs the
# 600,000 iterations below in about 2 s, and whether it shows must not depend on that
from pypto.sim import get_progress, set_progress
set_progress(get_progress(), delay=0.1, every=0.1)
'''


class _ThisPython(KernelSpecManager):
    """The kernel runs in this interpreter (so it imports the code under test)."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"], display_name="this python",
                          language="python")


class _Notebook:
    def __init__(self) -> None:
        self.km = KernelManager(kernel_name="this", kernel_spec_manager=_ThisPython())
        self.km.start_kernel()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def cell(self, code: str, timeout: float = 300, interrupt_on: str | None = None
             ) -> list[tuple[str, dict]]:
        """Run a cell; its outputs as (message type, content). `interrupt_on`: interrupt
        the kernel once an output holding that text has come."""
        msg_id = self.kc.execute(code)
        outs: list[tuple[str, dict]] = []
        deadline = time.monotonic() + timeout
        interrupted = False
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                assert time.monotonic() < deadline, f"cell still running: {outs}"
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                return outs
            if kind in ("display_data", "update_display_data", "stream", "error",
                        "execute_result"):
                outs.append((kind, content))
                if interrupt_on and not interrupted and interrupt_on in str(content):
                    self.km.interrupt_kernel()
                    interrupted = True

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def notebook():
    nb = _Notebook()
    try:
        assert not [c for kind, c in nb.cell(_SETUP) if kind == "error"]
        yield nb
    finally:
        nb.close()


def _bars(outs: list[tuple[str, dict]]) -> list[tuple[str, str, str]]:
    """The progress outputs: (message type, display id, html)."""
    return [(kind, c["transient"]["display_id"], c["data"]["text/html"])
            for kind, c in outs if kind in ("display_data", "update_display_data")
            and "pypto-sim-progress" in c["data"].get("text/html", "")]


def test_a_long_run_shows_a_bar_in_its_cell(notebook):
    outs = notebook.cell("endless(x, y, config=SimConfig(max_while=600_000))")
    bars = _bars(outs)
    assert bars, outs
    # one bar, shown once and redrawn in place (the same display id) until the end
    assert bars[0][0] == "display_data"
    assert {kind for kind, _, _ in bars[1:]} <= {"update_display_data"}
    assert len({did for _, did, _ in bars}) == 1
    assert "<progress style='width:240px'></progress>" in bars[0][2]
    assert "pypto-sim: endless running (" in bars[0][2]
    assert "pypto-sim: endless stopped (" in bars[-1][2] and "<progress" not in bars[-1][2]
    assert "600,000 of at most 100,000,000" in bars[-1][2]
    assert not [c for kind, c in outs if kind == "stream" and c["name"] == "stderr"]
    errors = [c for kind, c in outs if kind == "error"]
    assert [e["ename"] for e in errors] == ["SimulationError"]
    assert "ran 600,000 iterations without its condition turning false" in errors[0]["evalue"]


def test_interrupting_the_kernel_stops_the_run_and_the_kernel_goes_on(notebook):
    outs = notebook.cell("endless(x, y, config=SimConfig(max_while=10 ** 12))",
                         interrupt_on="endless running")
    errors = [c for kind, c in outs if kind == "error"]
    assert [e["ename"] for e in errors] == ["KeyboardInterrupt"], outs
    assert "pypto-sim: endless stopped (" in _bars(outs)[-1][2]
    # the kernel is alive, its state intact, and the simulator runs the next call
    outs = notebook.cell("plain(x, y)\nprint(int(y.sum()), x.shape)")
    assert outs == [("stream", {"name": "stdout", "text": "128 (8, 8)\n"})]


def test_bar_html_by_state():
    run = Progress("k", 3.0, 2, 1234, 10 ** 8, 4, run=7)
    assert bar_html(run) == (
        "<div class='pypto-sim-progress'><progress style='width:240px'></progress> "
        "<small>pypto-sim: k running (3.0 s, 2 tasks, 1,234 of at most 100,000,000 loop "
        "iterations and blocks)</small></div>")
    done = Progress("k", 3.0, 2, 1234, 10 ** 8, 5, done=True, run=7)
    assert "<progress value='1' max='1'" in bar_html(done) and "k finished" in bar_html(done)
    failed = Progress("k", 3.0, 2, 1234, 10 ** 8, 5, done=True, failed=True, run=7)
    assert "<progress" not in bar_html(failed) and "k stopped" in bar_html(failed)


def test_show_bars_keeps_a_users_choice():
    try:
        show_bars(True)
        assert isinstance(get_progress(), NotebookProgress)
        show_bars(False)
        assert get_progress() is terminal_progress
        set_progress(None)  # silenced by the user: loading the workbench keeps it silent
        show_bars(True)
        assert get_progress() is None
        show_bars(False)
        assert get_progress() is None
    finally:
        set_progress(terminal_progress)
