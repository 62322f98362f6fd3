"""What the real examples read off a program: a `@pl.program`'s `name` and its
functions by name (`program.functions.values()`, each with `name` and `func_type`), and
the same of a lowered `Program`, whose `functions` is a tuple that also answers by
name (the real `Program.functions` is a dict)."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.nodes import FunctionKind


@pl.program
class Twice:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[64], pl.FP32],
               y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        t = pl.load(x, [0], [64])
        return pl.store(pl.add(t, t), [0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32],
             y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        y = self.kernel(x, y)
        return y


def test_a_program_names_itself_and_its_functions():
    assert Twice.name == "Twice"
    assert [(f.name, f.func_type) for f in Twice.functions.values()] == [
        ("kernel", pl.FunctionType.InCore), ("main", pl.FunctionType.Orchestration)]


def test_a_lowered_programs_functions_answer_by_name():
    prog = Twice.lower()
    fns = prog.functions
    assert isinstance(fns, tuple) and fns[0] is fns[fns.keys()[0]]
    assert dict(fns.items())["main"].func_type is FunctionKind.ORCHESTRATION
    assert list(fns.values()) == list(fns)
    with pytest.raises(KeyError):
        fns["absent"]
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    Twice(x, y)
    np.testing.assert_array_equal(y, 2 * x)
