"""TensorSpec / ScalarSpec with numpy (no torch needed)."""
import ctypes

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.golden import ScalarSpec, TensorSpec

BF16 = np.dtype(ml_dtypes.bfloat16)


def test_init_forms():
    assert (TensorSpec("x", [2, 3], np.float32).create_array() == 0).all()
    full = TensorSpec("x", [2, 3], np.int32, init_value=7).create_array()
    assert full.dtype == np.int32 and (full == 7).all()
    arr = TensorSpec("x", [2], np.float32, init_value=np.array([1, 2])).create_array()
    assert arr.dtype == np.float32 and arr.tolist() == [1.0, 2.0]
    np.random.seed(0)
    rnd = TensorSpec("x", [4, 5], BF16, init_value=np.random.randn).create_array()
    assert rnd.shape == (4, 5) and rnd.dtype == BF16
    made = TensorSpec("x", [3], np.float32, init_value=lambda: [1.5, 2.5, 3.5]).create_array()
    assert made.tolist() == [1.5, 2.5, 3.5]
    assert TensorSpec("x", [2], np.float32, init_value=np.ones).create_array().tolist() == [1, 1]


def test_dtype_spellings():
    assert TensorSpec("x", [1], pl.FP32).np_dtype == np.float32
    assert TensorSpec("x", [1], pl.BF16).np_dtype == BF16
    assert TensorSpec("x", [1], "bfloat16").np_dtype == BF16
    assert TensorSpec("x", [1], "int64").np_dtype == np.int64
    assert not TensorSpec("x", [1], np.float32, init_value=np.random.randn).uses_torch


def test_resident_validation():
    assert TensorSpec("x", [1], np.float32, resident=0).is_resident
    assert TensorSpec("x", [1], np.float32, resident="stacked").is_resident
    assert not TensorSpec("x", [1], np.float32, resident=False).is_resident
    for bad in (True, -1, "pinned"):
        with pytest.raises(ValueError):
            TensorSpec("x", [1], np.float32, resident=bad)


def test_scalar_values_are_rounded_to_their_dtype():
    s = ScalarSpec("a", np.float32, 0.1)
    assert s.to_python() == float(np.float32(0.1))
    assert ScalarSpec("b", "bfloat16", 0.1).to_python() == float(BF16.type(0.1))
    assert ScalarSpec("n", pl.INT32, 7).to_python() == 7
    assert ScalarSpec("f", np.bool_, True).to_python() is True


def test_scalar_checks():
    with pytest.raises(ValueError):
        ScalarSpec("n", np.int8, 300)
    with pytest.raises(ValueError):
        ScalarSpec("n", np.int32, 1.5)
    with pytest.raises(ValueError):
        ScalarSpec("n", np.int32, True)
    with pytest.raises(ValueError):
        ScalarSpec("f", np.float32, "1")
    with pytest.raises(ValueError):
        ScalarSpec("b", np.bool_, 1)
    with pytest.raises(ValueError):
        ScalarSpec("d", np.float64, 1.0)
    with pytest.raises(ValueError):
        ScalarSpec("z", np.float32, np.zeros(2, np.float32))
    assert ScalarSpec("z", np.float32, np.array(2.0, np.float32)).to_python() == 2.0


def test_scalar_ctypes():
    assert isinstance(ScalarSpec("n", np.int64, 5).to_ctypes(), ctypes.c_int64)
    assert ScalarSpec("f", np.float32, 1.5).to_ctypes().value == 1.5
    half = ScalarSpec("h", "bfloat16", 1.0).to_ctypes()
    assert isinstance(half, ctypes.c_uint16) and half.value == 0x3F80
