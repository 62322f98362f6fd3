"""The tensor-scalar forms on float tiles (issue 31, item 3): one rule, the hardware's.

The result keeps the tile's dtype and the scalar is taken in that dtype (pto's TADDS,
TMULS, TDIVS, TMAXS ... take `TileData::DType`), so on an FP16 / BF16 tile every scalar
form rounds per op, as the tile-tile ops do. Each op and dtype is checked against a
model written here: `round(x op round(s))`, computed in float64 and rounded once."""
from __future__ import annotations

import importlib.util
import itertools

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl  # noqa: F401 - the kernels' modules import it
from pypto.ir import dtypes
from pypto.ops.numeric import tile_scalar

NP = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32}
F64 = np.float64
# op -> its meaning on float64 values (the scalar already in the tile's dtype)
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "fmod": np.fmod,
    "adds": np.add, "subs": np.subtract, "muls": np.multiply, "divs": np.divide,
    "maximums": np.maximum, "minimums": np.minimum, "fmods": np.fmod,
}
SCALARS = (0.3, -0.3, 1.0004, 2049.0, 0.1)


def _kernel(tmp_path, name: str, body: str, dt: str, scalar_param: bool):
    head = ("import pypto.language as pl\n\n\n@pl.jit\n"
            f"def k(a: pl.Tensor[[16, 32], pl.{dt}], s: pl.Scalar[pl.FP32],\n"
            f"      y: pl.Out[pl.Tensor[[16, 32], pl.{dt}]]):\n"
            "    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"t\"):\n"
            "        x = a[:, :]\n")
    src = head + "".join(f"        {line}\n" for line in body.splitlines()) + "    return y\n"
    path = tmp_path / f"{name}_{dt}_{int(scalar_param)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


def _x(dt: str) -> np.ndarray:
    rng = np.random.default_rng(31)
    x = rng.uniform(-4, 4, (16, 32))
    x[0, :4] = (2048.0, 1.0, 3.0, -2048.0)
    return x.astype(NP[dt])


def _round(v, dt: str) -> np.ndarray:
    return np.asarray(v).astype(NP[dt])


@pytest.mark.parametrize(("op", "dt", "scalar_param"),
                         list(itertools.product(BINARY, NP, (False, True))))
def test_each_scalar_form_rounds_to_the_tile_dtype(tmp_path, op, dt, scalar_param):
    """`pl.<op>(x, c)` then a second op reading it: the first result was rounded to the
    tile's dtype (and its scalar before it), for a literal and a pl.Scalar alike."""
    x = _x(dt)
    for c in SCALARS:
        arg = "s" if scalar_param else repr(c)
        k = _kernel(tmp_path, f"{op}_{str(c).replace('.', '_').replace('-', 'm')}",
                    f"v = pl.{op}(x, {arg})\ny[:, :] = pl.sub(v, x)", dt, scalar_param)
        assert k.compile().program is not None
        y = np.zeros_like(x)
        k(x, c, y)
        xs = x.astype(F64)
        with np.errstate(all="ignore"):
            v = _round(BINARY[op](xs, F64(_round(c, dt))), dt)
            want = _round(v.astype(F64) - xs, dt)
        np.testing.assert_array_equal(y.astype(F64), want.astype(F64), err_msg=f"{op} {c}")


@pytest.mark.parametrize("dt", ["FP16", "BF16"])
def test_the_issue_examples(tmp_path, dt):
    """FP16 (2048 + 1.0) - 2048 is 0 on the device (2049 is not an FP16 number), and a
    literal added is a literal subtracted: (x + -0.3) - x == (x - 0.3) - x."""
    x = _x(dt)
    k = _kernel(tmp_path, "pair", "y[:, :] = pl.sub(pl.add(x, -0.3), pl.sub(x, 0.3))",
                dt, False)
    y = np.full_like(x, 7)
    k(x, 0.0, y)
    assert not y.astype(F64).any()
    k2 = _kernel(tmp_path, "big", "y[:, :] = pl.sub(pl.add(x, 1.0), x)", dt, False)
    y = np.zeros_like(x)
    k2(x, 0.0, y)
    assert float(y[0, 0]) == 0.0  # 2048 + 1 rounds back to 2048 (FP16 and BF16)


@pytest.mark.parametrize("dt", list(NP))
@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum", "adds", "muls", "divs"])
def test_the_result_type_keeps_the_tile_dtype(tmp_path, op, dt):
    from pypto.ir.nodes import Call
    from pypto.ir.transform import walk
    k = _kernel(tmp_path, f"typed_{op}", f"v = pl.{op}(x, 0.5)\ny[:, :] = v", dt, False)
    fns = k.compile().program.functions
    calls = [n for f in fns for n in walk(f) if isinstance(n, Call) and n.op == op]
    assert len(calls) == 1
    assert calls[0].type.dtype == getattr(dtypes, dt)


def test_an_integer_tensor_still_promotes_with_a_float_literal():
    """(Unchanged: the real toolchain's tensor rule, int32 * 2.5 -> FP32.)"""
    from pypto.ir.nodes import Const
    from pypto.ir.types import TensorType
    from pypto.ops.elementwise import _tensor_scalar_dtype
    t = TensorType([16, 32], dtypes.INT32)
    assert _tensor_scalar_dtype(t, Const(2.5, dtypes.FP32)) == dtypes.FP32
    assert _tensor_scalar_dtype(TensorType([16, 32], dtypes.FP16),
                                Const(2.5, dtypes.FP32)) == dtypes.FP16


@pytest.mark.parametrize(("dt", "s", "want"), [
    ("FP16", 0.1, np.float32(np.float16(0.1))),
    ("BF16", 0.1, np.float32(ml_dtypes.bfloat16(0.1))),
    ("FP32", 0.1, np.float32(0.1)),
    ("FP16", 70000.0, np.float32(np.inf)),  # past FP16's range: inf, no warning
])
def test_tile_scalar_rounds_into_the_tile_dtype(dt, s, want):
    got = tile_scalar(np.zeros(4, NP[dt]), s)
    assert got == want and np.asarray(got).dtype == np.float32
    assert tile_scalar(np.zeros(4, np.int32), 2.5) == 2.5  # (a float: promotes, as it did)


@pytest.mark.parametrize(("dt", "s", "want"), [
    (np.uint8, -3, 253), (np.int8, 300, 44), (np.int8, -129, 127), (np.int16, 7, 7),
    (np.int64, -1, -1), (np.uint8, np.int64(256), 0),
])
def test_an_integer_scalar_on_an_integer_tile_wraps_into_its_dtype(dt, s, want):
    """An int literal takes the tile's dtype (the real toolchain's placeholder rule) and
    is converted as C converts: -3 on a UINT8 tile is 253 (numpy refused it with an
    OverflowError that surfaced as "pl op 'add' failed while simulating")."""
    got = tile_scalar(np.zeros(4, dt), s)
    assert got == want and np.asarray(got).dtype == np.dtype(dt)


def test_a_negative_literal_on_a_uint8_tile_runs(tmp_path):
    src = ("import pypto.language as pl\n\n\n@pl.jit\n"
           "def k(a: pl.Tensor[[8, 16], pl.UINT8], y: pl.Out[pl.Tensor[[8, 16], pl.UINT8]]):\n"
           "    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"t\"):\n"
           "        y[:, :] = pl.mul(pl.add(a[:, :], -3), -3)\n"
           "    return y\n")
    path = tmp_path / "u8.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("u8", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = np.arange(128, dtype=np.uint8).reshape(8, 16)
    y = np.zeros_like(a)
    mod.k(a, y)
    want = ((a.astype(np.int64) - 3) * -3) % 256
    np.testing.assert_array_equal(y, want.astype(np.uint8))
    assert tile_scalar(np.zeros(4, np.float16), True) is True
