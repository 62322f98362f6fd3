"""Names a kernel uses resolve in the code that decorated it, as with the real parser:
a `get_program()` whose locals appear only in annotations (so they are not closure
cells of the kernel), the class body of a `@pl.program`, then module globals."""
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UndefinedNameError

GLOBAL_ROWS = 8


def get_program(m: int, n: int, dtype=pl.FP32):
    @pl.program
    class Doubled:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[m, n], dtype],
                   out: pl.Out[pl.Tensor[[m, n], dtype]]) -> pl.Tensor[[m, n], dtype]:
            t: pl.Tile[[m, n], dtype] = pl.load(a, [0, 0], [m, n])
            return pl.store(pl.add(t, t), [0, 0], out)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[m, n], dtype],
                 out: pl.Out[pl.Tensor[[m, n], dtype]]) -> pl.Tensor[[m, n], dtype]:
            return self.kernel(a, out)

    return Doubled


@pytest.mark.parametrize("m, n", [(16, 32), (8, 64)])
def test_locals_of_the_decorating_function_size_the_kernel(m, n):
    prog = get_program(m, n)
    a = np.arange(m * n, dtype=np.float32).reshape(m, n)
    out = np.zeros_like(a)
    prog(a, out)
    assert np.array_equal(out, 2 * a)


def test_each_program_keeps_the_locals_it_was_decorated_with():
    small, large = get_program(8, 16), get_program(16, 16)
    assert small.compile().entry.params[0].var.type.shape == (8, 16)
    assert large.compile().entry.params[0].var.type.shape == (16, 16)


def test_class_body_names_and_jit_locals_resolve():
    def make(cols):
        width = cols  # only in annotations

        @pl.jit
        def copy(x: pl.Tensor[[GLOBAL_ROWS, width], pl.FP32],
                 y: pl.Out[pl.Tensor[[GLOBAL_ROWS, width], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                y[0:GLOBAL_ROWS, 0:width] = x[0:GLOBAL_ROWS, 0:width]
            return y

        return copy

    k = make(24)
    x = np.ones((GLOBAL_ROWS, 24), np.float32)
    y = np.zeros_like(x)
    k(x, y)
    assert (y == 1).all()


def test_a_name_defined_nowhere_is_still_undefined():
    def make():
        @pl.jit
        def bad(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                y[0:8, 0:8] = pl.mul(x[0:8, 0:8], nowhere)  # noqa: F821
            return y

        return bad

    with pytest.raises(UndefinedNameError, match="name 'nowhere' is not defined"):
        make().compile()
