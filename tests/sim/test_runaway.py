"""Runaway kernels (issue 16, item 6): an endless `pl.while_` ends with an error naming
the loop and its iteration count; a loop or a `pl.parallel` launch nest whose size is
known fails before it runs when it would pass the work limit (batched or not); a long
run reports its progress; Ctrl-C stops a run promptly and leaves nothing behind. The
limits are options, so these tests use small ones."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.sim import Progress, SimConfig, on_progress, set_progress, terminal_progress


@pl.jit
def endless(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    for (i,) in pl.while_(init_values=(0,)):
        pl.cond(i >= 0)
        i = pl.yield_(i + 1)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = x[:, :]
    return y


@pl.jit
def endless_in_region(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="spin"):
        t = x[:, :]
        for (i, acc) in pl.while_(init_values=(0, t)):
            pl.cond(i >= 0)
            i, acc = pl.yield_(i + 1, pl.add(acc, 1.0))
        y[:, :] = acc
    return y


@pl.jit
def endless_launching(x: pl.Tensor[[8, 8], pl.FP32], y: pl.InOut[pl.Tensor[[8, 8], pl.FP32]]):
    for (i,) in pl.while_(init_values=(0,)):
        pl.cond(i >= 0)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="bump"):
            y[:, :] = pl.add(y[:, :], x[:, :])
        i = pl.yield_(i + 1)
    return y


@pl.jit
def counted(x: pl.Tensor[[8, 8], pl.FP32], n: pl.Scalar[pl.INDEX],
            y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    for (i,) in pl.while_(init_values=(0,)):
        pl.cond(i < n)
        i = pl.yield_(i + 1)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = pl.add(x[:, :], pl.cast(i, pl.FP32))
    return y


@pl.jit
def grid(m: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX],
         y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
    for i in pl.parallel(0, m, 1):
        for j in pl.parallel(0, n, 1):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="cell"):
                y[i:i + 1, j:j + 1] = pl.add(y[i:i + 1, j:j + 1], 1.0)
    return y


@pl.jit
def long_range(n: pl.Scalar[pl.INDEX], y: pl.InOut[pl.Tensor[[1, 8], pl.FP32]]):
    for _ in pl.range(0, n):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="bump"):
            y[:, :] = pl.add(y[:, :], 1.0)
    return y


@pl.jit
def tile_nest(m: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX],
              y: pl.InOut[pl.Tensor[[1, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="nest"):
        t = y[:, :]
        for i in pl.range(0, m):
            for j in pl.range(0, n):
                t = pl.add(t, 1.0)
        y[:, :] = t
    return y


@pl.jit
def triangle(m: pl.Scalar[pl.INDEX], y: pl.InOut[pl.Tensor[[1, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="triangle"):
        t = y[:, :]
        for i in pl.range(0, m):
            for j in pl.range(0, i):
                t = pl.add(t, 1.0)
        y[:, :] = t
    return y


@pl.jit
def cut_short(m: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX],
              y: pl.InOut[pl.Tensor[[1, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cut"):
        t = y[:, :]
        for i in pl.range(0, m):
            if i >= 2:
                break
            for j in pl.range(0, n):
                t = pl.add(t, 1.0)
        y[:, :] = t
    return y


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def _xy():
    return np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)


# --- endless loops ---------------------------------------------------------------------


@pytest.mark.parametrize("kernel,where", [(endless, "pl.while_(init_values=(0,))"),
                                          (endless_in_region, "pl.while_(init_values=(0, t))")])
def test_an_endless_while_names_the_loop_and_its_iterations(kernel, where):
    x, y = _xy()
    t0 = time.perf_counter()
    with pytest.raises(SimulationError) as ei:
        kernel(x, y, config=SimConfig(max_while=2000))
    assert time.perf_counter() - t0 < 10
    err = ei.value
    line = _line_of(where)
    assert err.message.startswith(f"the pl.while_ loop at {__file__}:{line} ran 2,000 "
                                  "iterations without its condition turning false: taken "
                                  "for an endless loop")
    assert (err.span.file, err.span.line) == (__file__, line)
    assert "raise SimConfig.max_while" in err.hint


def test_an_endless_while_counts_the_work_inside_it():
    """A loop launching a region each iteration does twice the work of a bare one per
    iteration, so it is stopped after half the iterations - as soon, in time."""
    x, y = _xy()
    with pytest.raises(SimulationError) as ei:
        endless_launching(x, y, config=SimConfig(max_while=3000))
    err = ei.value
    line = _line_of("def endless_launching") + 1
    assert err.message.startswith(
        f"the pl.while_ loop at {__file__}:{line} ran 1,500 iterations (3,000 loop "
        "iterations and blocks, counting what ran inside them) without its condition "
        "turning false")
    assert (err.span.file, err.span.line) == (__file__, line)
    assert "raise SimConfig.max_while (now 3,000:" in err.hint
    assert "'y' is written in place by the simulator and now holds" in err.note
    np.testing.assert_array_equal(y, x * 1500)  # the 1,500 iterations ran, no more


def test_a_long_while_within_its_limit_runs():
    x, y = _xy()
    counted(x, 1500, y, config=SimConfig(max_while=1500))
    np.testing.assert_array_equal(y, x + 1500)
    with pytest.raises(SimulationError, match="ran 1,499 iterations"):
        counted(x, 1500, y, config=SimConfig(max_while=1499))
    assert SimConfig().max_while == 10 ** 6


def test_the_work_limit_inside_a_while_names_the_loop():
    x, y = _xy()
    with pytest.raises(SimulationError) as ei:
        endless(x, y, config=SimConfig(max_work=500))
    assert ei.value.message.startswith(
        f"the pl.while_ loop at {__file__}:{_line_of('pl.while_(init_values=(0,))')}, in its "
        "iteration 501, takes the simulated work past its limit of 500 loop iterations and "
        "blocks")


# --- known sizes fail before they run -----------------------------------------------------


@pytest.mark.parametrize("batch", [True, False])
def test_a_launch_nest_past_the_limit_fails_before_it_runs(batch):
    y = np.zeros((64, 64), np.float32)
    t0 = time.perf_counter()
    with pytest.raises(SimulationError) as ei:
        grid(10 ** 5, 10 ** 5, y, config=SimConfig(batch=batch))
    assert time.perf_counter() - t0 < 10
    err = ei.value
    assert err.message.startswith(
        "a pl.parallel launch nest of 100,000 x 100,000 = 10,000,000,000 tasks would take "
        "the simulated work past its limit of 100,000,000 loop iterations and blocks "
        "(20,000,100,000, 0 done before it)")
    assert err.span.line == _line_of("for i in pl.parallel(0, m, 1)")
    assert not y.any()  # no task ran
    # within the limit the same nest runs, batched when it may
    r = grid(64, 64, y, config=SimConfig(batch=batch, max_work=64 + 2 * 64 * 64))
    assert (y == 1).all() and r.batch_stats["batched"] == int(batch)


def test_a_loop_past_the_limit_fails_before_it_runs():
    y = np.zeros((1, 8), np.float32)
    with pytest.raises(SimulationError) as ei:
        long_range(10 ** 12, y)
    assert ei.value.message.startswith(
        "a loop of 1,000,000,000,000 iterations would take the simulated work past its limit")
    assert not y.any()


def test_a_nest_inside_a_region_past_the_limit_fails_before_it_runs():
    y = np.zeros((1, 8), np.float32)
    with pytest.raises(SimulationError) as ei:
        tile_nest(10 ** 5, 10 ** 5, y)
    err = ei.value
    assert err.message.startswith(
        "a loop nest of 100,000 iterations running 100,000 inner loop iterations each would "
        "take the simulated work past its limit of 100,000,000 loop iterations and blocks "
        "(10,000,100,001, 1 done before it)")
    assert (err.span.file, err.span.line) == (__file__, _line_of("for i in pl.range(0, m):"))
    assert err.region.startswith("'nest' (") and err.block == 0
    assert not y.any()
    # the bound is exact: 1 block + 3 outer + 3 x 4 inner iterations
    tile_nest(3, 4, y, config=SimConfig(max_work=16))
    assert (y == 12).all()
    with pytest.raises(SimulationError, match="a loop nest of 3 iterations running 4 inner"):
        tile_nest(3, 4, y, config=SimConfig(max_work=15))
    assert (y == 12).all()


def test_nests_whose_size_is_not_sure_are_not_refused():
    """Only work the nest is sure to do counts: an inner bound that moves with the outer
    loop, or a break that may end it early, leaves the loops to count as they run."""
    y = np.zeros((1, 8), np.float32)
    triangle(6, y, config=SimConfig(max_work=1 + 6 + 15))  # 0 + 1 + ... + 5 inner trips
    assert (y == 15).all()
    y[:] = 0
    cut_short(10 ** 5, 10 ** 5, y)  # two outer iterations run, then the break
    assert (y == 2 * 10 ** 5).all()


# --- progress -----------------------------------------------------------------------------


def test_a_long_run_reports_its_progress():
    seen: list[Progress] = []
    x, y = _xy()
    with on_progress(seen.append, delay=0.05, every=0.05), pytest.raises(SimulationError):
        # ~1 s: long enough for several reports however loaded the machine
        endless(x, y, config=SimConfig(max_while=200_000))
    assert len(seen) >= 2, seen
    first, last = seen[0], seen[-1]
    assert first.program == "endless" and first.count == 1 and not first.done
    assert first.seconds >= 0.05 and first.max_work == 10 ** 8
    assert last.done and last.failed and last.count == len(seen)
    assert [p.work for p in seen] == sorted(p.work for p in seen)
    assert str(last).startswith("pypto-sim: endless stopped (")


def test_short_runs_are_not_reported():
    seen: list[Progress] = []
    x, y = _xy()
    with on_progress(seen.append, delay=5.0):
        counted(x, 10, y)
    assert seen == []


def test_a_broken_hook_does_not_break_the_run():
    def hook(p: Progress) -> None:
        raise RuntimeError("broken hook")

    x, y = _xy()
    with on_progress(hook, delay=0.0, every=0.01):
        counted(x, 20_000, y, config=SimConfig(max_while=10 ** 5))
    np.testing.assert_array_equal(y, x + 20_000)


def test_the_process_default_and_the_terminal_line(capsys):
    seen: list[Progress] = []
    x, y = _xy()
    try:
        set_progress(seen.append, delay=0.02, every=0.02)
        counted(x, 100_000, y, config=SimConfig(max_while=10 ** 5))
    finally:
        set_progress(terminal_progress)
    assert seen and seen[-1].done and not seen[-1].failed
    assert str(seen[-1]).startswith("pypto-sim: counted finished (")
    # the terminal line, not on a terminal: first report, every 20th, the last
    capsys.readouterr()
    for count, done in ((1, False), (2, False), (20, False), (21, True)):
        terminal_progress(Progress("k", 2.5, 7, 1234, 10 ** 8, count, done))
    running = ("pypto-sim: k running (2.5 s, 7 tasks, 1,234 of at most 100,000,000 loop "
               "iterations and blocks)")
    assert capsys.readouterr().err.splitlines() == \
        [running, running, running.replace("running", "finished")]


# --- Ctrl-C ------------------------------------------------------------------------------

_INTERRUPTED = textwrap.dedent('''
    import gc, sys, threading, time
    import numpy as np
    import pypto.language as pl
    from pypto.ops.numeric import fp_quiet
    from pypto.sim import SimConfig, set_progress

    set_progress(None)


    @pl.jit
    def spin(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        for (i,) in pl.while_(init_values=(0,)):
            pl.cond(i >= 0)
            i = pl.yield_(i + 1)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
            y[:, :] = x[:, :]
        return y


    @pl.jit
    def spin_at_barrier(x: pl.Tensor[[2, 8], pl.FP32], y: pl.Out[pl.Tensor[[2, 8], pl.FP32]]):
        for b in pl.spmd(2, name_hint="blocks", sync_start=True):
            t = x[b:b + 1, :]
            for (i, acc) in pl.while_(init_values=(0, t)):
                pl.cond(i >= 0)
                i, acc = pl.yield_(i + 1, pl.add(acc, 1.0))
            pl.system.syncall()
            y[b:b + 1, :] = acc
        return y


    @pl.jit
    def plain(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
            y[:, :] = pl.add(x[:, :], 1.0)
        return y


    kernel = spin if sys.argv[1] == "plain" else spin_at_barrier
    shape = (8, 8) if sys.argv[1] == "plain" else (2, 8)
    cfg = SimConfig(max_while=10 ** 12, max_work=10 ** 15)
    print("ready", flush=True)
    try:
        kernel(np.ones(shape, np.float32), np.zeros(shape, np.float32), config=cfg)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    time.sleep(0.2)
    blocks = [t.name for t in threading.enumerate() if t.name.startswith("pypto-sim-block")]
    assert blocks == [], blocks
    assert gc.isenabled() and not fp_quiet()
    x = np.ones((8, 8), np.float32)
    y = np.zeros_like(x)
    plain(x, y)
    assert (y == 2).all()
    print("clean", flush=True)
''')


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix",
                    reason="needs POSIX signals")
@pytest.mark.parametrize("mode", ["plain", "interleaved"])
def test_ctrl_c_stops_a_run_promptly_and_cleanly(tmp_path: Path, mode: str):
    script = tmp_path / "interrupted_kernel.py"
    script.write_text(_INTERRUPTED)
    proc = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.5)  # compiled and deep in the loop by now
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().strip()
        took = time.perf_counter() - t0
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert line == "interrupted", err
    assert took < 5, took
    assert out.strip() == "clean" and proc.returncode == 0, err
