"""A `TensorSpec` that cannot describe an array (issue 31, item 8) is a named, located
`SpecError` (E103, a ValueError) at the `TensorSpec(...)` call - not numpy's TypeError
for a dtype that is none nor its ValueError for a negative dim."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import pypto.language as pl
from pypto.golden import TensorSpec
from pypto.golden.spec import SpecError

HERE = __file__


def _line_of(marker: str) -> int:
    src, start = inspect.getsourcelines(inspect.getmodule(_line_of))
    return next(i for i, t in enumerate(src, start or 1) if marker in t and "_line_of" not in t)


def test_a_dtype_that_is_none():
    with pytest.raises(SpecError) as info:
        TensorSpec("x", [32, 16], "float33")  # MARK:dtype
    err = info.value
    assert err.code == "E103" and isinstance(err, ValueError)
    assert err.message.startswith("TensorSpec 'x': dtype 'float33' is not a dtype")
    assert "'bfloat16'" in err.hint
    assert (err.span.file, err.span.line) == (HERE, _line_of("MARK:dtype"))
    assert err.span.col == 9  # the TensorSpec( call


@pytest.mark.parametrize(("shape", "message"), [
    ([-32, 16], "TensorSpec 'y': shape [-32, 16] has the negative dim -32 at axis 0"),
    ([32, -1], "TensorSpec 'y': shape [32, -1] has the negative dim -1 at axis 1"),
    ([2.5, 16], "TensorSpec 'y': shape [2.5, 16] must be a list of integers"),
    ([True, 16], "TensorSpec 'y': shape [True, 16] must be a list of integers"),
    (16, "TensorSpec 'y': shape 16 must be a list of integers"),
])
def test_a_shape_that_is_none(shape, message):
    with pytest.raises(SpecError) as info:
        TensorSpec("y", shape, np.float32)  # MARK:shape
    assert info.value.message == message
    assert (info.value.span.file, info.value.span.line) == (HERE, _line_of("MARK:shape"))


def test_good_specs_are_unchanged():
    assert TensorSpec("z", (np.int64(4), 0), pl.BF16).shape == [4, 0]
    assert TensorSpec("z", [4, 3], "bfloat16").np_dtype.name == "bfloat16"
    assert TensorSpec("z", [4, 3], np.float16).create_array().shape == (4, 3)
