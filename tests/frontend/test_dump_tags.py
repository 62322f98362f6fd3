"""`pl.dump_tag(t)` and `dumps=[...]` reach the launches: each launch's `dumps` lists the
parameters of its kernel that receive a tagged value, matched by value (through SSA
renaming and outlining), never by name."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import PyptoTypeError
from pypto.ir.nodes import CallFunc
from pypto.ir.printer import print_program
from pypto.ir.transform import walk

HERE = __file__
N, T = 64, 32


def dumped(kernel) -> dict[str, list[str]]:
    """name hint of each launch -> the names of the parameters it dumps."""
    program = kernel.compile().program
    funcs = {f.name: f for f in program.functions}
    out: dict[str, list[str]] = {}
    for n in walk(program):
        if isinstance(n, CallFunc) and n.launch:
            params = funcs[n.func].params
            out[n.launch_attr("name_hint")] = [params[i].var.name
                                               for i in n.launch_attr("dumps", ())]
    return out


@pl.jit
def two_loops(x: pl.Tensor[[N, T], pl.FP32], y: pl.Out[pl.Tensor[[N, T], pl.FP32]]):
    tmp = pl.create_tensor([N, T], dtype=pl.FP32)
    pl.dump_tag(tmp)
    for r in pl.parallel(0, N, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
            tmp[r : r + T, :] = pl.mul(x[r : r + T, :], 2.0)
    for r in pl.parallel(0, N, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
            y[r : r + T, :] = pl.add(tmp[r : r + T, :], 1.0)
    return y


def test_a_tag_follows_the_tensor_through_writes_and_loop_carries():
    # SSA renames tmp into a loop carry (tmp__1) and a loop result (tmp__3); each launch
    # dumps the parameter that receives it, and only that one
    assert dumped(two_loops) == {"fill": ["tmp__1"], "use": ["tmp__3"]}


@pl.jit
def rebound(x: pl.Tensor[[N, T], pl.FP32], y: pl.Out[pl.Tensor[[N, T], pl.FP32]]):
    a = pl.create_tensor([N, T], dtype=pl.FP32)
    pl.dump_tag(a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
        a[0:T, :] = pl.mul(x[0:T, :], 2.0)
    a = pl.create_tensor([N, T], dtype=pl.FP32)  # a new value: the tag stays on the old one
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
        a[0:T, :] = pl.mul(x[0:T, :], 3.0)
        y[0:T, :] = pl.add(a[0:T, :], x[0:T, :])
    return y


def test_rebinding_a_name_drops_the_tag():
    assert dumped(rebound) == {"first": ["a"], "second": []}


@pl.jit
def one_region(x: pl.Tensor[[N, T], pl.FP32], y: pl.Out[pl.Tensor[[N, T], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top", dumps=[x]):
        y[0:T, :] = pl.mul(x[0:T, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom"):
        y[T:N, :] = pl.mul(x[T:N, :], 2.0)
    return y


def test_dumps_on_one_pl_at_tags_that_task_only():
    assert dumped(one_region) == {"top": ["x"], "bottom": []}


@pl.jit.incore
def _rows(x: pl.Tensor[[N, T], pl.FP32], y: pl.Out[pl.Tensor[[N, T], pl.FP32]]):
    b = pl.tile.get_block_idx()
    t = pl.load(x, [b * 16, 0], [16, T])
    pl.store(pl.exp(t), [b * 16, 0], y)
    return y


@pl.jit
def submitted(x: pl.Tensor[[N, T], pl.FP32], y: pl.Out[pl.Tensor[[N, T], pl.FP32]]):
    y, t = pl.spmd_submit(_rows, x, y, core_num=N // 16, dumps=[y])
    return y


@pl.jit
def tagged_submit(x: pl.Tensor[[N, T], pl.FP32], y: pl.Out[pl.Tensor[[N, T], pl.FP32]]):
    pl.dump_tag(x)
    y, t = pl.spmd_submit(_rows, x, y, core_num=N // 16)
    return y


def test_submits_dump_their_listed_and_tagged_arguments():
    assert dumped(submitted) == {"_rows": ["y"]}
    assert dumped(tagged_submit) == {"_rows": ["x"]}


@pl.program
class Tagged:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP32],
               o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        o = pl.store(t, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, a: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.dump_tag(a)
        o = self.kernel(a, o)
        return o


def test_a_plain_kernel_call_dumps_its_tagged_arguments():
    compiled = Tagged.compile(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32))
    launches = [n for n in walk(compiled.program) if isinstance(n, CallFunc) and n.launch]
    assert [(n.func, n.launch_attr("dumps")) for n in launches] == [("kernel", (0,))]


def test_the_text_form_prints_the_dumped_parameters():
    text = print_program(one_region.compile().program)
    # top's kernel takes (y, x): x is its parameter 1
    assert "self.one_region_top(y, x, launch='at', name_hint='top', dumps=(1,))" in text
    again = pl.parse(text)
    calls = [n.launch_attr("dumps") for n in walk(again) if isinstance(n, CallFunc) and n.launch]
    assert sorted(calls) == [(), (1,)]


@pl.jit
def tag_scalar(x: pl.Tensor[[N, T], pl.FP32], n: pl.Scalar[pl.INDEX]):
    pl.dump_tag(n)  # ERR:scalar
    return x


def test_only_tensors_can_be_tagged():
    err = compile_error(tag_scalar, PyptoTypeError, "pl.dump_tag() argument 'n' is not a tensor",
                        HERE, "scalar", "n)")
    assert err.hint == "only tensors can be dumped"


@pl.jit.inline
def _helper(x: pl.Tensor[[N, T], pl.FP32], y: pl.Tensor[[N, T], pl.FP32]):
    pl.dump_tag(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
        y[0:T, :] = pl.mul(x[0:T, :], 2.0)
    return y


@pl.jit
def inlined(a: pl.Tensor[[N, T], pl.FP32], b: pl.Out[pl.Tensor[[N, T], pl.FP32]]):
    b = _helper(a, b)
    return b


def test_a_tag_in_an_inline_helper_reaches_the_launch_it_inlines():
    assert dumped(inlined) == {"inner": ["x___helper1"]}


SUBMIT_TEXT = '''
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [16, 16])
        y__1: pl.Tensor[[16, 16], pl.FP32] = pl.store(pl.exp(t), [0, 0], y)
        return y__1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             z: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        y__out0, tid = pl.submit(self.k, x, y, dumps=[DUMPED])
        return y__out0
'''


def test_a_printed_submit_keeps_its_dumps_when_read_back():
    """Issue 32: pl.parse of a `pl.submit(..., dumps=[...])` dropped the list."""
    import numpy as np

    import pypto.sim as sim
    from pypto.compile import compile_ir
    from pypto.errors import ConfigError

    prog = pl.parse(SUBMIT_TEXT.replace("DUMPED", "x"))
    assert "dumps=(x,)" in print_program(prog)
    x = np.ones((16, 16), np.float32)
    with pytest.raises(ConfigError, match="got the IR Program 'P' as read from text"):
        sim.simulate(prog, x, np.zeros_like(x), x)
    r = sim.simulate(compile_ir(prog), x, np.zeros_like(x), x, dump_args=1)
    assert [d.tensor for d in r.arg_dumps] == ["x"]


def test_a_submit_dumps_entry_must_be_an_argument():
    from pypto.errors import PyptoTypeError

    with pytest.raises(PyptoTypeError) as info:
        pl.parse(SUBMIT_TEXT.replace("DUMPED", "z"))
    assert info.value.message == ("pl.submit's dumps= entry 'z' is not an argument of "
                                  "this submit")
    assert (info.value.span.line, info.value.span.col) == (14, 55)  # the entry


@pl.jit.inline
def exp_into(t, out):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
        out[:, :] = pl.exp(t[:, :])
    return out


@pl.jit
def tagged_into_helper(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
                       z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    y = exp_into(x, y)  # untagged yet: no dump
    pl.dump_tag(x)
    z = exp_into(x, z)  # the tag on x reaches the helper's pl.at
    return y, z


def test_a_tag_reaches_the_dispatches_of_an_inline_helper():
    """Issue 32's leftover: a tag on a tensor passed into a @pl.jit.inline helper did not
    reach the helper's pl.at (a tag marks the value, which the helper receives)."""
    import pypto.sim as sim

    x = np.ones((16, 16), np.float32)
    r = sim.simulate(tagged_into_helper, x, np.zeros_like(x), np.zeros_like(x), dump_args=1)
    assert [(d.tensor, d.task) for d in r.arg_dumps] == [("x", 1)]
