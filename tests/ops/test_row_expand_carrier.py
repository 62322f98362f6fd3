"""A row vector for the row_expand ops is `[rows, 1]` or one 32-byte block per row
(`[rows, 8]` fp32, `[rows, 16]` fp16): the vector unit reads the whole block and repeats
it across the destination's columns (the real toolchain's runtime tests check every lane)."""
import numpy as np
import pytest

from pypto.ops.registry import OpError
from tests.ops.helpers import FP16, impl, rule, tile


@pytest.mark.parametrize("op, fn", [("row_expand_add", np.add), ("row_expand_mul", np.multiply),
                                    ("row_expand_max", np.maximum)])
def test_packed_carrier_repeats_across_the_columns(op, fn):
    x = np.arange(4 * 20, dtype=np.float32).reshape(4, 20)
    carrier = (np.arange(4 * 8, dtype=np.float32).reshape(4, 8) % 7) - 3
    want = fn(x, np.tile(carrier, (1, 3))[:, :20])
    np.testing.assert_array_equal(impl(op, x, carrier), want)


def test_rule_accepts_one_block_per_row_and_nothing_else():
    assert rule("row_expand_add", tile([32, 64]), tile([32, 8])).shape == (32, 64)
    assert rule("row_expand_add", tile([16, 128], FP16), tile([16, 16], FP16)).shape == (16, 128)
    with pytest.raises(OpError, match=r"\[rows, 1\] \(or one 32-byte block per row\)"):
        rule("row_expand_add", tile([32, 64]), tile([32, 4]))
