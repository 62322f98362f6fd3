"""How specs and arrays bind to a kernel's parameters: by position (the device runtime
passes arguments in order; names are the golden's keys), and a signed array for an
unsigned parameter of the same width is read as the unsigned type (torch has no
uint16 / uint32 tensors, so the real toolchain's harness passes int16 / int32)."""
import numpy as np
import pytest
from golden_helpers import needs_sim

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.golden import TensorSpec, ratio_allclose, run_jit

pytestmark = needs_sim
R, C = 16, 32


@pl.jit
def shift(a: pl.Tensor[[R, C], pl.FP32], b: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift"):
        t = a[0:R, 0:8]
        b[0:R, 0:8] = pl.add(t, 1.0)
    return b


@pl.jit
def copy_u16(x: pl.Tensor[[R, C], pl.UINT16], y: pl.Out[pl.Tensor[[R, C], pl.UINT16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        pl.store(t, [0, 0], y)
    return y


def _x():
    return np.arange(R * C, dtype=np.float32).reshape(R, C)


def test_specs_bind_by_position_whatever_their_names(capsys):
    specs = [TensorSpec("input_tensor", [R, C], np.float32, init_value=_x),
             TensorSpec("output", [R, C], np.float32, is_output=True)]

    def golden(v):
        v["output"][:] = np.nan  # don't care outside the written columns
        v["output"][:, :8] = v["input_tensor"][:, :8] + 1

    r = run_jit(shift, specs, golden, runtime_cfg=dict(platform="a2a3sim"),
                compare_fn={"output": ratio_allclose(ignore_nan=True, max_error_ratio=0.0)})
    assert r.passed, r.error
    assert r.outputs["output"].direction == "Out"
    assert np.array_equal(r.outputs["output"].actual[:, :8], _x()[:, :8] + 1)
    out = capsys.readouterr().out
    assert ("note: specs bind to the kernel's parameters by position: 'input_tensor' -> 'a', "
            "'output' -> 'b'") in out


def test_unwritten_diagnosis_follows_the_bound_parameter():
    specs = [TensorSpec("inp", [R, C], np.float32, init_value=_x),
             TensorSpec("out", [R, C], np.float32, is_output=True)]
    r = run_jit(shift, specs, lambda v: v["out"].__setitem__((slice(None), slice(0, 8)),
                                                            v["inp"][:, :8] + 1),
                runtime_cfg=dict(platform="a2a3sim"), verbose=False)
    assert not r.passed
    u = r.outputs["out"].unwritten
    assert u is not None and u.source == "last writer = none" and u.explains_all
    assert u.bounds == [(0, R), (8, C)]


def test_a_spec_count_that_differs_is_a_failed_run_naming_both_lists():
    specs = [TensorSpec("a", [R, C], np.float32, init_value=_x)]
    r = run_jit(shift, specs, lambda v: None, verbose=False)
    assert not r.passed
    assert r.error == ("specs do not match the kernel's parameters (1 specs for 2 parameters): "
                       "kernel (a, b), specs (a); list one spec per parameter, in parameter "
                       "order")


def test_int16_arrays_bind_to_uint16_parameters_by_their_bits():
    x = np.arange(R * C, dtype=np.int64).reshape(R, C) * 997 % 65536
    xi = x.astype(np.uint16).view(np.int16)  # values >= 32768 read as negative int16
    y = np.zeros((R, C), np.int16)
    copy_u16(xi, y)
    assert np.array_equal(y.view(np.uint16), x.astype(np.uint16))
    specs = [TensorSpec("x", [R, C], np.int16, init_value=lambda: xi),
             TensorSpec("y", [R, C], np.int16, is_output=True)]
    r = run_jit(copy_u16, specs, lambda v: v["y"].__setitem__(..., v["x"]), verbose=False)
    assert r.passed, r.error
    assert r.outputs["y"].actual.dtype == np.int16


def test_other_dtype_mismatches_are_still_errors():
    with pytest.raises(SimulationError, match="has dtype int32 but the kernel declares"):
        copy_u16(np.zeros((R, C), np.int32), np.zeros((R, C), np.uint16))
    with pytest.raises(SimulationError, match="has dtype uint16 but the kernel declares"):
        shift(np.zeros((R, C), np.uint16), np.zeros((R, C), np.float32))
