"""`pypto.ir.compile` and the real runtime's explicit dispatch on the simulator:
`ChipWorker.run` / `register`, resident `DeviceTensor`s (read back with `copy_from`),
and the rules the real worker keeps (a tensor is bound to its worker, freed is gone)."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.runtime import ChipWorker, DeviceTensor, RunConfig

R, C = 16, 64


@pl.jit
def add_kernel(a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32],
               out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [R, C])
        tb = pl.load(b, [0, 0], [R, C])
        pl.store(pl.add(ta, tb), [0, 0], out)
    return out


@pl.jit
def double_in_place(x: pl.InOut[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        pl.store(pl.add(t, t), [0, 0], x)
    return x


def _ab():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((R, C)).astype(np.float32),
            rng.standard_normal((R, C)).astype(np.float32))


def test_ir_compile_of_a_lowered_program_and_a_resident_weight(tmp_path):
    a, b = _ab()
    compiled = ir.compile(add_kernel.lower(a, b, np.zeros((R, C), np.float32)),
                          platform="a2a3sim", output_dir=str(tmp_path / "out"))
    assert (tmp_path / "out" / "program.py").is_file()
    with ChipWorker(config=RunConfig(platform="a2a3sim")) as w:
        resident = w.alloc_tensor((R, C), np.float32, init=b)
        assert isinstance(resident, DeviceTensor) and resident.nbytes == R * C * 4
        for _ in range(3):
            out = np.zeros((R, C), np.float32)
            w.run(compiled, a, resident, out)
            np.testing.assert_array_equal(out, a + b)
        w.free_tensor(resident)
        with pytest.raises(UserError, match="was freed"):
            w.run(compiled, a, resident, out)


def test_a_device_tensor_is_written_in_place_and_read_back_with_copy_from():
    a, _ = _ab()
    compiled = double_in_place.compile(a)
    w = ChipWorker(config=RunConfig())
    try:
        t = w.alloc_tensor((R, C), "float32", init=a)
        handle = w.register(compiled)
        handle(t)
        handle(t)
        host = np.zeros((R, C), np.float32)
        w.copy_from(host, t.data_ptr, t.nbytes)
        np.testing.assert_array_equal(host, 4 * a)
    finally:
        w.close()
    with pytest.raises(UserError, match="released"):
        handle(t)
    with pytest.raises(UserError, match="closed"):
        w.alloc_tensor((1,), "float32")


def test_a_device_tensor_is_bound_to_its_worker():
    a, b = _ab()
    compiled = add_kernel.compile(a, b, np.zeros((R, C), np.float32))
    with ChipWorker() as w1, ChipWorker() as w2:
        t = w1.alloc_tensor((R, C), "float32", init=b)
        with pytest.raises(UserError, match="belongs to another ChipWorker"):
            w2.run(compiled, a, t, np.zeros((R, C), np.float32))


def test_ir_compile_names_what_it_takes():
    with pytest.raises(TypeError, match=r"pypto.ir.compile takes a @pl.program"):
        ir.compile(object())
