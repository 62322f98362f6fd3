"""A compiled program is callable, as the real `kernel.compile(...)(args)`: the devices
given when compiling are the ones a call runs on, a call's config is laid over them, and
`output_dir` holds the printed program (pypto-lab generates no device code)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import rank_kernels as rk

import pypto.language as pl
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.equal import assert_structural_equal
from pypto.runtime import RunConfig


def _inputs() -> np.ndarray:
    return np.stack([np.arange(rk.S, dtype=np.float32).reshape(1, rk.S) + 100 * r
                     for r in range(rk.NR)])


def test_a_compiled_multi_card_program_runs_on_the_devices_it_was_compiled_for():
    x = _inputs()
    y = np.zeros((rk.NR, 1, rk.S), np.float32)
    compiled = rk.allreduce.compile(x, y, config=RunConfig(
        platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0, 1])))
    compiled(x, y, config=RunConfig(platform="a2a3sim"))  # no devices: the compile's
    for r in range(rk.NR):
        np.testing.assert_array_equal(y[r], x.sum(axis=0))
    y2 = np.zeros_like(y)
    compiled(x, y2)  # no config at all: the compile's
    np.testing.assert_array_equal(y2, y)


@pl.jit
def doubled(x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
        y[0:64] = pl.add(x[0:64], x[0:64])
    return y


def test_a_compiled_kernel_is_callable_and_its_output_dir_holds_the_program():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    compiled = doubled.compile(x, y, config=RunConfig())
    compiled(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    text = (Path(compiled.output_dir) / "program.py").read_text()
    assert_structural_equal(pl.parse(text), compiled.program)
    assert compiled.output_dir == compiled.output_dir  # written once


def test_runtime_run_compiles_and_runs():
    from pypto.runtime import run

    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    compiled = run(doubled, x, y, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_array_equal(y, 2 * x)
    z = np.zeros(64, np.float32)
    compiled(x + 1, z)  # the result runs again
    np.testing.assert_array_equal(z, 2 * (x + 1))
    untouched = np.zeros(64, np.float32)
    run(doubled, x, untouched, config=RunConfig(codegen_only=True))  # compiles only
    assert not untouched.any()


def test_a_parametrized_pl_function_at_a_scripts_top_level(tmp_path):
    """`@pl.function(type=...)` in a script's __main__ (the real examples' form)."""
    import subprocess
    import sys

    script = tmp_path / "kernel.py"
    script.write_text(
        "import pypto.language as pl\n"
        "@pl.function(type=pl.FunctionType.InCore)\n"
        "def k(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:\n"
        "    return x\n"
        "print(type(k).__name__)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "FunctionDef"


def test_a_compiled_program_names_its_call_shape():
    x = np.arange(64, dtype=np.float32)
    compiled = doubled.compile(x, np.zeros(64, np.float32), config=RunConfig())
    assert compiled.param_names == ["x", "y"]
    assert compiled.output_indices == [1]
    assert compiled.platform == "a2a3sim"
