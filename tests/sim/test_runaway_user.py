"""A runaway kernel as a user meets it (issue 16, item 6): a script with an endless
`pl.while_`, run with the default limits in a terminal, shows its progress on one line
redrawn in place and ends on its own with an error naming the loop and its iteration
count. (tests/sim/test_runaway.py checks each piece with small limits; this is the
whole, with the default limits; only the line's delay is shortened, so it shows on a fast
machine too.)"""
from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

_SCRIPT = textwrap.dedent('''\
    import numpy as np
    import pypto.language as pl
    from pypto.sim import set_progress

    # the default line, shown after 0.2 s instead of 2 s: a fast machine runs the
    # 1,000,000 iterations in under 2 s, and whether the line shows must not depend on it
    set_progress(delay=0.2, every=0.2)

    @pl.jit
    def endless(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        for (i,) in pl.while_(init_values=(0,)):
            pl.cond(i >= 0)
            i = pl.yield_(i + 1)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
            y[:, :] = x[:, :]
        return y


    endless(np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32))
    print("not reached")
''')


def _run_on_a_terminal(script: Path, timeout: float) -> tuple[int, str, str]:
    """Run `script` with its stderr on a pseudo-terminal; (status, stdout, stderr)."""
    import pty

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "PYPTO_SIM_PROGRESS"}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=slave, env=env)
    os.close(slave)
    err = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        assert proc.stdout is not None
        out = proc.stdout.read().decode()
        status = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return status, out, err.decode().replace("\r\n", "\n")


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_an_endless_loop_in_a_script_ends_on_its_own_and_shows_its_progress(tmp_path):
    script = tmp_path / "runaway.py"
    script.write_text(_SCRIPT)
    status, out, err = _run_on_a_terminal(script, timeout=600)
    assert status == 1 and "not reached" not in out, err
    # the progress line: redrawn in place (a carriage return, no new line) while it
    # runs, then once more with the count it stopped at, ending the line
    progress, _, rest = err.partition("Traceback (most recent call last)")
    frames = progress.split("\r")
    assert frames[0] == "" and len(frames) >= 3, progress
    running, last = frames[1:-1], frames[-1]
    assert running and all(f.startswith("pypto-sim: endless running (") and "\n" not in f
                           for f in running), running
    assert last.startswith("pypto-sim: endless stopped (")
    assert "1,000,000 of at most 100,000,000 loop iterations and blocks)" in last
    assert last.endswith("\n")
    # the error names the loop (file:line) and its iteration count
    line = _SCRIPT.splitlines().index(
        "    for (i,) in pl.while_(init_values=(0,)):") + 1
    assert (f"SimulationError: error[S000]: the pl.while_ loop at {script}:{line} ran "
            "1,000,000 iterations without its condition turning false: taken for an "
            "endless loop [orchestration]") in rest
    assert f" --> {script}:{line}:5" in rest
    assert "raise SimConfig.max_while (now 1,000,000:" in rest


def test_a_progress_line_without_a_limit_quotes_none():
    from pypto.sim.runtime.progress import Progress

    line = str(Progress("l3_k", 4.0, 21, 14937, 0, 1))
    assert "14,937 loop iterations and blocks" in line and "at most" not in line
