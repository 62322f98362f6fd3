"""Rank races are found by default (issue 31, item 6): a multi-card run checks its
windows ("window" is in the default `SimConfig.checks`) - a direct call, `run_jit` and
`pypto-sim FILE -d 0,1` alike - and a race is a located `WindowRaceError` (S021), not a
silent result that depends on the order the ranks happened to run in."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import rank_kernels as rk
from frontend_helpers import assert_at, where

from pypto.golden import TensorSpec, run_jit
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.sim import SimConfig
from pypto.sim.cluster.happens import WindowRaceError

KERNELS = rk.__file__
UNCHECKED = ("oob", "ub", "div")


def _x(n=rk.NR):
    return np.arange(n * rk.S, dtype=np.float32).reshape(n, 1, rk.S) + 1


def test_the_window_check_is_a_default():
    assert SimConfig().checks == ("oob", "ub", "window", "div")


def test_a_one_way_remote_store_races_by_default():
    with pytest.raises(WindowRaceError) as info:
        rk.racy_pushes(_x(), config=SimConfig(device_ids=(0, 1)))
    err = info.value
    assert "race between ranks on window 'buf' of rank 0, elements [0:1, 0:64]" in err.message
    assert_at(err, KERNELS, "push", "pld.tile.remote_store")
    # and with no config at all (the default config of a direct call)
    with pytest.raises(WindowRaceError):
        rk.racy_pushes(_x(), config={"device_ids": (0, 1)})


def test_eight_ranks_swapping_without_a_barrier_is_a_race_not_seven_zero_rows():
    x = _x(rk.NR8)
    y = np.full((rk.NR8, 1, rk.S), 7, np.float32)
    ids = tuple(range(rk.NR8))
    with pytest.raises(WindowRaceError) as info:
        rk.ring_without_barrier(x, y, config=SimConfig(device_ids=ids))
    line, _ = where(KERNELS, "next")
    assert f"pld.tile.remote_load at {KERNELS}:{line}" in info.value.message
    assert len(info.value.races) >= 7
    # what it hid: unchecked, the ranks' fixed order gives 7 of 8 ranks zeros
    y = np.full((rk.NR8, 1, rk.S), 7, np.float32)
    res = rk.ring_without_barrier(x, y, config=SimConfig(device_ids=ids, checks=UNCHECKED))
    assert res.window_races == []
    zero_rows = [r for r in range(rk.NR8) if not y[r].any()]
    assert zero_rows == list(range(rk.NR8 - 1))


def test_a_one_rank_run_and_an_ordered_run_pay_nothing_and_find_nothing():
    y = np.zeros((rk.NR, 1, rk.S), np.float32)
    res = rk.allreduce(_x(), y, config=SimConfig(device_ids=(0, 1)))
    assert res.window_races == []
    np.testing.assert_array_equal(y[0], _x().sum(axis=0))
    # one rank: nothing to race with, so no trace is taken for the check
    one = rk.racy_pushes(_x(), config=SimConfig(device_ids=(0,)))
    assert one.window_races == [] and one.trace is None


def test_run_jit_reports_the_race():
    specs = [TensorSpec("inputs", [rk.NR, 1, rk.S], np.float32, init_value=_x),
             TensorSpec("outputs", [rk.NR, 1, rk.S], np.float32, is_output=True)]

    def golden(t):
        t["outputs"][:] = t["inputs"][::-1]

    with pytest.raises(WindowRaceError) as info:  # (as any simulator fault in run_jit)
        run_jit(rk.swap_without_barrier, specs, golden, verbose=False,
                compile_cfg=dict(distributed_config=DistributedConfig(device_ids=[0, 1])),
                runtime_cfg=dict(platform="a2a3sim"))
    assert "race between ranks on window 'buf' of rank 0" in info.value.message
    assert_at(info.value, KERNELS, "pull", "pld.tile.remote_load")


RACY_FILE = textwrap.dedent('''
    # ci: devices=2
    import pypto.language as pl
    import pypto.language.distributed as pld

    NR = 2
    S = 32


    @pl.jit.incore
    def push(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32]):
        pld.tile.remote_store(pl.load(x, [0, 0], [1, S]), win, peer=0, offsets=[0, 0])
        return win


    @pl.jit
    def push_chip(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32]):
        return push(x, win)


    @pl.jit.host
    def racy(inputs: pl.Tensor[[NR, 1, S], pl.FP32]):
        buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            push_chip(inputs[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)


    if __name__ == "__main__":
        import argparse

        import numpy as np
        from golden import TensorSpec, run_jit
        from pypto.ir.distributed_compiled_program import DistributedConfig

        parser = argparse.ArgumentParser()
        parser.add_argument("-p", "--platform", default="a2a3")
        parser.add_argument("-d", "--device", default="0")
        args = parser.parse_args()
        ids = [int(d) for d in args.device.split(",")]
        specs = [TensorSpec("inputs", [NR, 1, S], np.float32,
                            init_value=lambda: np.ones((NR, 1, S), np.float32))]
        result = run_jit(fn=racy, specs=specs, golden_fn=lambda t: None,
                         compile_cfg=dict(distributed_config=DistributedConfig(
                             device_ids=ids, num_sub_workers=0)),
                         runtime_cfg=dict(platform=args.platform))
        if not result.passed:
            print(result.error)
            raise SystemExit(1)
''')


def test_pypto_sim_d_0_1_fails_on_a_rank_race(tmp_path):
    path = tmp_path / "racy.py"
    path.write_text(RACY_FILE)
    done = subprocess.run([sys.executable, "-m", "pypto.cli", str(path), "-d", "0,1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "race between ranks on window 'buf' of rank 0" in out
    assert f"{path}:12" in out  # the remote store's line
