"""`pypto-sim FILE -p a2a3sim -d 0,1` runs a multi-card kernel file as pypto-lib's CI
does: the file's own `-d` picks the devices (any ids: rank r runs on the r-th), and a
file marked `# ci: devices=N` that is given no `-d` gets the N devices CI would borrow."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pypto.cli import file_argv
from pypto.golden.record import RECORD_ENV

TWO_CARD = textwrap.dedent('''
    # ci: devices=2
    import pypto.language as pl
    import pypto.language.distributed as pld

    NR = 2
    S = 32


    @pl.jit.incore
    def stage(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32]):
        return pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], win)


    @pl.jit
    def stage_chip(x: pl.Tensor[[1, S], pl.FP32], win: pld.DistributedTensor[[1, S], pl.FP32]):
        return stage(x, win)


    @pl.jit.incore
    def unstage(win: pld.DistributedTensor[[1, S], pl.FP32],
                y: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
        return pl.store(pl.load(win, [0, 0], [1, S]), [0, 0], y)


    @pl.jit
    def unstage_chip(win: pld.DistributedTensor[[1, S], pl.FP32],
                     y: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
        return unstage(win, y)


    @pl.jit.host
    def summed(inputs: pl.Tensor[[NR, 1, S], pl.FP32],
               outputs: pl.Out[pl.Tensor[[NR, 1, S], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            stage_chip(inputs[r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)
        win = pld.tensor.allreduce(pld.window(buf, [1, S], dtype=pl.FP32))
        for r in pl.range(pld.world_size()):
            unstage_chip(win, outputs[r], device=r)


    if __name__ == "__main__":
        import argparse

        import numpy as np
        from golden import TensorSpec, run_jit
        from pypto.ir.distributed_compiled_program import DistributedConfig

        parser = argparse.ArgumentParser()
        parser.add_argument("-p", "--platform", default="a2a3",
                            choices=["a2a3", "a2a3sim", "a5", "a5sim"])
        parser.add_argument("-d", "--device", default="0")
        args = parser.parse_args()
        ids = [int(d) for d in args.device.split(",")]
        print("DEVICES", ids)

        def golden(t):
            t["outputs"][:] = t["inputs"].sum(axis=0, keepdims=True)

        specs = [TensorSpec("inputs", [NR, 1, S], np.float32,
                            init_value=lambda: np.arange(NR * S, dtype=np.float32
                                                         ).reshape(NR, 1, S)),
                 TensorSpec("outputs", [NR, 1, S], np.float32, is_output=True)]
        result = run_jit(fn=summed, specs=specs, golden_fn=golden,
                         compile_cfg=dict(distributed_config=DistributedConfig(
                             device_ids=ids, num_sub_workers=0)),
                         runtime_cfg=dict(platform=args.platform), rtol=0, atol=0)
        if not result.passed:
            print(result.error)
            raise SystemExit(1)
''')


@pytest.fixture
def two_card(tmp_path):
    p = tmp_path / "two_card.py"
    p.write_text(TWO_CARD)
    return p


def test_a_ci_devices_file_without_d_gets_the_cards_ci_would_give(two_card, tmp_path):
    assert file_argv(two_card, []) == [str(two_card), "-p", "a2a3sim", "-d", "0,1"]
    for given in (["-d", "4,5"], ["--device", "4,5"], ["--device=4,5"], ["-d4,5"]):
        assert file_argv(two_card, given) == [str(two_card), "-p", "a2a3sim", *given]
    one_card = tmp_path / "one_card.py"
    one_card.write_text(TWO_CARD.replace("# ci: devices=2", "# ci: devices=1"))
    assert file_argv(one_card, []) == [str(one_card), "-p", "a2a3sim"]
    unmarked = tmp_path / "unmarked.py"
    unmarked.write_text(TWO_CARD.replace("# ci: devices=2", ""))
    assert file_argv(unmarked, []) == [str(unmarked), "-p", "a2a3sim"]


def _pypto_sim(path, *args, record=None):
    env = dict(os.environ, **({RECORD_ENV: str(record)} if record else {}))
    return subprocess.run([sys.executable, "-m", "pypto.cli", str(path), *args],
                          cwd=path.parent, capture_output=True, text=True, timeout=300,
                          env=env)


@pytest.mark.parametrize("args,ids", [(["-p", "a2a3sim", "-d", "0,1"], [0, 1]),
                                      (["-d", "6,7"], [6, 7]),
                                      ([], [0, 1])])
def test_pypto_sim_runs_the_file_on_its_devices(two_card, tmp_path, args, ids):
    record = tmp_path / "runs.jsonl"
    done = _pypto_sim(two_card, *args, record=record)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"DEVICES {ids}" in done.stdout
    (run,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert run["verdict"] == "pass" and run["platform"] == "a2a3sim"
    assert run["devices"] == ids


def test_one_device_for_a_two_rank_kernel_fails_its_golden(two_card):
    # one rank reduces only its own row and rank 1's output is never written: the
    # golden fails (the file's own check), it does not pass by accident
    done = _pypto_sim(two_card, "-d", "0")
    assert done.returncode == 1
    assert "DEVICES [0]" in done.stdout
    # rank 0 wrote row 0 (wrongly: its own sum), only row 1 is unwritten, so the
    # unwritten-region diagnosis does not excuse the mismatches
    assert "unwritten pl.Out region: indices 1:2 along axis 0, 32 element(s) never " \
           "written" in done.stdout
    assert "every mismatch lies there" not in done.stdout
