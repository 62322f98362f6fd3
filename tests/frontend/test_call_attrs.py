"""`attrs={"arg_directions": [...]}` on a kernel call: checked (one pl.adir direction
per argument), carried on the call, printed and read back; on the simulator an
`output` argument is a buffer the runtime allocates, so the caller's tensor passed there
keeps its contents and the task's result is the new buffer."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import PyptoSyntaxError, PyptoTypeError
from pypto.ir.nodes import CallFunc
from pypto.ir.printer import print_program
from pypto.ir.transform import walk

HERE = __file__
N = 64


@pl.jit.incore
def twice(x: pl.Tensor[[N], pl.FP32], out: pl.Out[pl.Tensor[[N], pl.FP32]]):
    out[0:N] = pl.mul(x[0:N], 2.0)
    return out


@pl.jit
def existing(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    y = twice(x, y, attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]})
    return y


@pl.jit
def allocated(x: pl.Tensor[[N], pl.FP32], dst: pl.InOut[pl.Tensor[[N], pl.FP32]],
              y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    r = twice(x, dst, attrs={"arg_directions": [pl.adir.input, pl.adir.output]})
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:N] = pl.add(r[0:N], 1.0)
    return y


def test_directions_ride_on_the_call_and_print():
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    existing(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    program = existing.compile(x, y).program
    calls = [n for f in program.functions for n in walk(f.body)
             if isinstance(n, CallFunc) and n.attrs]
    assert [dict(c.attrs)["arg_directions"] for c in calls] == \
        [(pl.adir.input, pl.adir.output_existing)]
    assert "attrs={'arg_directions': [pl.adir.input, pl.adir.output_existing]}" in \
        print_program(program)


def test_an_output_argument_is_a_buffer_the_runtime_allocates():
    x = np.arange(N, dtype=np.float32)
    dst = np.full(N, 5.0, np.float32)
    y = np.zeros(N, np.float32)
    allocated(x, dst, y)
    np.testing.assert_array_equal(y, 2 * x + 1)  # the task's result: the new buffer
    np.testing.assert_array_equal(dst, np.full(N, 5.0, np.float32))  # untouched


@pl.jit
def too_short(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    y = twice(x, y, attrs={"arg_directions": [pl.adir.input]})  # ERR:short
    return y


@pl.jit
def not_a_direction(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    y = twice(x, y, attrs={"arg_directions": [pl.adir.input, 3]})  # ERR:notdir
    return y


def test_bad_directions_are_located():
    args = (np.zeros(N, np.float32), np.zeros(N, np.float32))
    compile_error(too_short, PyptoTypeError, "arg_directions has 1 entries but the call has 2 "
                  "arguments", HERE, "short", "{", args=args)
    compile_error(not_a_direction, PyptoSyntaxError, "arg_directions entries are pl.adir "
                  "directions, got 3", HERE, "notdir", "{", args=args)


_TEXT = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64], pl.FP32], o: pl.Out[pl.Tensor[[64], pl.FP32]]
          ) -> pl.Tensor[[64], pl.FP32]:
        t = pl.load(x, [0], [64])
        o = pl.store(t, [0], o)
        return o

    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32], d: pl.Tensor[[64], pl.FP32]
             ) -> pl.Tensor[[64], pl.FP32]:
        r = self.k(x, d, attrs={ATTRS})
        return r
"""


def test_the_text_form_reads_call_attributes_back():
    text = _TEXT.replace("ATTRS", '"arg_directions": [pl.adir.input, pl.adir.no_dep], '
                                  '"arg_direction_overrides": [1]')
    program = pl.parse(text)
    call = next(n for f in program.functions for n in walk(f.body) if isinstance(n, CallFunc))
    assert dict(call.attrs) == {"arg_directions": (pl.adir.input, pl.adir.no_dep),
                                "arg_direction_overrides": (1,)}
    again = pl.parse(print_program(program))
    assert print_program(again) == print_program(program)
    with pytest.raises(PyptoTypeError, match="arg_directions has 1 entries"):
        pl.parse(_TEXT.replace("ATTRS", '"arg_directions": [pl.adir.input]'))


def test_an_unknown_direction_is_a_syntax_error():
    with pytest.raises(PyptoSyntaxError) as info:
        pl.parse(_TEXT.replace("ATTRS", '"arg_directions": [pl.adir.bogus, pl.adir.input]'))
    assert "unknown argument direction 'pl.adir.bogus'" in info.value.message
    assert "pl.adir.output_existing" in info.value.hint
    assert (info.value.span.line, info.value.span.col) == (14, 52)


@pl.jit
def dep_edges(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    y, t = pl.spmd_submit(twice, x, y, core_num=1)
    y = twice(x, y, attrs={"manual_dep_edges": [t]})  # ERR:edges
    return y


def test_dependencies_are_not_call_attributes():
    compile_error(dep_edges, PyptoTypeError, "a call's attrs= cannot carry manual_dep_edges",
                  HERE, "edges", "{", args=(np.zeros(N, np.float32), np.zeros(N, np.float32)))
