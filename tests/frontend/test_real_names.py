"""Names of the real `pypto.language` that pypto-lab now has: `pl.IntLike`,
`pl.RUNTIME`, `pl.InlineFunction`, `pl.parser` (its error classes and text readers),
`pl.MemRefType` (a located "not supported" error), `pl.adir`, and the dispatch rules
of `pl.split` / `pl.cross_core_slot` and the `with pl.spmd` forms."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import compile_error, where

import pypto.language as pl
from pypto.errors import PyptoSyntaxError, PyptoTypeError, UnsupportedFeatureError

HERE = __file__
N = 64


def test_the_real_surface_names_exist():
    for name in ("IntLike", "RUNTIME", "InlineFunction", "parser", "MemRefType", "adir"):
        assert name in pl.__all__, name
    assert pl.tile.MemRefType is pl.MemRefType


def test_pl_parser_holds_the_error_classes_and_the_text_readers():
    from pypto.language.parser.text_parser import parse_program

    assert pl.parser.ParserSyntaxError is PyptoSyntaxError
    assert pl.parser.ParserTypeError is PyptoTypeError
    assert pl.parser.parse is pl.parse and parse_program is pl.parse_program
    assert pl.parser.program is pl.program and pl.parser.Tensor is pl.Tensor


def test_int_like_admits_literals_and_scalars():
    assert isinstance(3, pl.IntLike)
    assert not isinstance(3.5, pl.IntLike)


@pl.inline
def _helper(x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
    return x


def test_inline_helpers_are_inline_functions():
    assert isinstance(_helper, pl.InlineFunction)

    @pl.jit.inline
    def other(x):
        return x

    assert isinstance(other, pl.InlineFunction)

    @pl.jit
    def entry(x: pl.Tensor[[N], pl.FP32]):
        return x

    assert not isinstance(entry, pl.InlineFunction)


@pl.jit
def scaled(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]],
           n: pl.Scalar[pl.INT32] = pl.RUNTIME):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:N] = pl.muls(x[0:N], pl.cast(n, pl.FP32))
    return y


def test_runtime_leaves_a_scalar_to_the_dispatch():
    assert repr(pl.RUNTIME) == "pl.RUNTIME"
    scaled.compile(n=pl.RUNTIME)  # one program for every n
    x = np.arange(N, dtype=np.float32)
    for n in (2, 5):
        y = np.zeros(N, np.float32)
        scaled(x, y, n)
        np.testing.assert_array_equal(y, x * n)
    with pytest.raises(TypeError, match=r"pl\.RUNTIME is a compile-time marker with no value"):
        pl.RUNTIME + 1


@pl.jit
def memref_type(x: pl.Tensor[[N], pl.FP32], m: pl.MemRefType):  # ERR:memreftype
    return x


def test_a_memref_type_annotation_is_not_supported_and_says_why():
    err = compile_error(memref_type, PyptoTypeError, "pl.MemRefType", HERE, "memreftype",
                        "pl.MemRefType", args=(np.zeros(N, np.float32),))
    assert "its IR has no MemRef variables" in err.message


@pytest.mark.parametrize("call, match", [
    (lambda: pl.split(pl.SplitMode.UP_DOWN, foo=1), "Unknown keyword argument 'foo'"),
    (lambda: pl.split(pl.SplitMode.UP_DOWN, slot_num=0), "must be positive, got 0"),
    (lambda: pl.cross_core_slot(slot_num=0), "must be positive, got 0"),
])
def test_optimization_entries_check_their_arguments(call, match):
    with pytest.raises(PyptoSyntaxError, match=match):
        call()


@pl.jit
def slot_zero(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP,
               optimizations=[pl.cross_core_slot(slot_num=0)]):  # ERR:slot
        y[0:N] = pl.exp(x[0:N])
    return y


def test_an_entry_error_inside_a_kernel_is_located():
    compile_error(slot_zero, PyptoSyntaxError, "pl.cross_core_slot(slot_num=...) must be "
                  "positive", HERE, "slot", "pl.cross_core_slot(",
                  args=(np.zeros(N, np.float32), np.zeros(N, np.float32)))


@pl.jit
def same_work(x: pl.Tensor[[4, N], pl.FP32], y: pl.Out[pl.Tensor[[4, N], pl.FP32]]):
    with pl.spmd(4):  # ERR:same
        y[0:1, :] = pl.exp(x[0:1, :])
    return y


@pl.jit
def deps_untied(x: pl.Tensor[[4, N], pl.FP32], y: pl.Out[pl.Tensor[[4, N], pl.FP32]]):
    with pl.spmd(4) as t0:
        i = pl.tile.get_block_idx()
        y[i:i + 1, :] = pl.exp(x[i:i + 1, :])
    with pl.spmd(4, deps=[t0]):  # ERR:deps
        j = pl.tile.get_block_idx()
        y[j:j + 1, :] = pl.exp(y[j:j + 1, :])
    return y


def test_spmd_scope_rules():
    args = (np.zeros((4, N), np.float32), np.zeros((4, N), np.float32))
    compile_error(same_work, PyptoSyntaxError, "neither reads the per-block index", HERE,
                  "same", "pl.spmd(4)", args=args)
    compile_error(deps_untied, PyptoSyntaxError, "does not accept 'deps=' without `as tid`",
                  HERE, "deps", "[t0]", args=args)


def test_the_text_form_keeps_one_kernel_per_spmd_scope():
    text = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64], pl.FP32], o: pl.Out[pl.Tensor[[64], pl.FP32]]
          ) -> pl.Tensor[[64], pl.FP32]:
        t = pl.load(a, [0], [64])
        o = pl.store(t, [0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32], b: pl.Out[pl.Tensor[[64], pl.FP32]],
             o: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.spmd(4):
            b = self.k(a, b)
            o = self.k(a, o)
        return o
"""
    with pytest.raises(PyptoSyntaxError) as info:
        pl.parse(text)
    assert "launches 2 kernels" in info.value.message
    assert (info.value.span.line, info.value.span.col) == (14, 9)


_CARRIER = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64], pl.FP32], o: pl.Out[pl.Tensor[[64], pl.FP32]]
             ) -> pl.Tensor[[64], pl.FP32]:
        with pl.spmd(4{outer}):
            with pl.at(level=pl.Level.CORE_GROUP{inner}):
                t = pl.load(a, [0], [64])
                o = pl.store(t, [0], o)
        return o
"""


def test_an_explicit_carrier_holds_the_optimizations_alone():
    pl.parse(_CARRIER.format(outer="", inner=""))  # exempt from the block-index rule
    split = ", optimizations=[pl.split(pl.SplitMode.UP_DOWN)]"
    for inner, words in (("", "belongs on the InCore scope"), (split, "is specified twice")):
        with pytest.raises(PyptoSyntaxError) as info:
            pl.parse(_CARRIER.format(outer=split, inner=inner))
        assert words in info.value.message
        assert (info.value.span.line, info.value.span.col) == (7, 9)


@pl.jit
def manual_named(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    with pl.manual_scope(name="foo"):  # ERR:manual  # noqa: SIM117
        with pl.at(level=pl.Level.CORE_GROUP):
            y[0:N] = pl.exp(x[0:N])
    return y


def test_manual_scope_takes_no_arguments():
    compile_error(manual_named, PyptoSyntaxError, "pl.manual_scope() got an unexpected keyword "
                  "argument 'name': it takes no arguments", HERE, "manual", "name=",
                  args=(np.zeros(N, np.float32), np.zeros(N, np.float32)))


_CLUSTER = """
@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.AIC)
    def k1(self, x: pl.Tensor[[64], pl.INT32]) -> pl.Tensor[[64], pl.INT32]:
        return x

    @pl.function(type=pl.FunctionType.AIV)
    def k2(self, x: pl.Tensor[[64], pl.INT32]) -> pl.Tensor[[64], pl.INT32]:
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.INT32]) -> pl.Tensor[[64], pl.INT32]:
        with pl.cluster():
            a, a_tid = pl.submit(self.k1, x)
            b, _ = {submit}
        return b
"""


@pytest.mark.parametrize("submit, field", [
    ("pl.submit(self.k2, x, deps=[a_tid])", "deps="),
    ("pl.submit(self.k2, x, allow_early_resolve=True)", "allow_early_resolve="),
    ("pl.spmd_submit(self.k2, x, core_num=2, sync_start=True)", "core_num=, sync_start="),
])
def test_a_submit_in_a_cluster_carries_no_task_options(submit, field):
    with pytest.raises(PyptoSyntaxError) as info:
        pl.parse(_CLUSTER.format(submit=submit))
    assert f"cannot carry per-task dispatch metadata ({field})" in info.value.message
    assert info.value.span.line == 16


_AT_TEXT = """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, not_a_real_arg=42):
            t = pl.load(x, [0], [16])
        return x
"""


def test_the_text_form_checks_pl_at_keywords():
    with pytest.raises(PyptoSyntaxError) as info:
        pl.parse(_AT_TEXT)
    assert "pl.at() got an unexpected keyword argument 'not_a_real_arg'" in info.value.message
    assert (info.value.span.line, info.value.span.col) == (6, 47)


@pl.program
class _DumpInKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP32],
               o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        pl.dump_tag(a)  # ERR:dump
        t = pl.load(a, [0, 0], [16, 16])
        o = pl.store(t, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, a: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.kernel(a, o)
        return o


def test_dump_tag_belongs_to_orchestration():
    compile_error(_DumpInKernel, PyptoSyntaxError, "pl.dump_tag() is only valid inside an "
                  "Orchestration or Inline function", HERE, "dump", "pl.dump_tag(a)",
                  args=(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)))


@pl.jit
def dummy_no_deps(x: pl.Tensor[[N], pl.FP32]):
    with pl.manual_scope():
        b = pl.system.task_dummy()  # ERR:nodeps
    return x


@pl.jit
def dummy_tensor_dep(x: pl.Tensor[[N], pl.FP32]):
    with pl.manual_scope():
        b = pl.system.task_dummy(deps=[x])  # ERR:tensordep
    return x


def test_task_dummy_takes_explicit_task_ids():
    args = (np.zeros(N, np.float32),)
    compile_error(dummy_no_deps, PyptoTypeError, "requires keyword argument 'deps'", HERE,
                  "nodeps", "pl.system.task_dummy()", args=args)
    compile_error(dummy_tensor_dep, PyptoTypeError, "deps= takes TaskIds", HERE, "tensordep",
                  "[x]", args=args)


@pl.jit
def printed(x: pl.Tensor[[N], pl.FP32]):
    pl.static_print("check:", x, f"n={N}")  # ERR:print
    pl.static_print(42, 1.5, True, pl.const(3, pl.INT32), f"v: {42}")  # ERR:consts
    return x


@pl.jit
def printed_spec(x: pl.Tensor[[N], pl.FP32]):
    pl.static_print(f"{x!r}")  # ERR:spec
    return x


def test_static_print_prints_labels_and_typed_values(capsys):
    printed.compile(np.zeros(N, np.float32))
    out = capsys.readouterr().out
    line, _ = where(HERE, "print")
    assert f"static_print [{HERE}:{line}]: check: x: pl.Tensor[[64], pl.FP32] " \
           "n=64: pl.Scalar[pl.INDEX]\n" in out
    # constants print with their type, as the real parser types literals
    line, _ = where(HERE, "consts")
    assert f"static_print [{HERE}:{line}]: 42: pl.Scalar[pl.INDEX] 1.5: pl.Scalar[pl.FP32] " \
           "True: pl.Scalar[pl.BOOL] 3: pl.Scalar[pl.INT32] v: 42: pl.Scalar[pl.INDEX]\n" in out
    compile_error(printed_spec, UnsupportedFeatureError, "f-string conversion (!r, !s, !a) and "
                  "format spec (:.2f) are not supported in pl.static_print", HERE, "spec",
                  'f"{x!r}"', args=(np.zeros(N, np.float32),))


def test_the_text_form_runs_static_print_and_static_assert(capsys):
    text = """
@pl.function
def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    pl.static_print("check:", x)
    pl.static_assert(2 > 1, "fine")
    return x
"""
    pl.parse(text)
    assert "static_print [<string>:4]: check: x: pl.Tensor[[64], pl.FP32]" in \
        capsys.readouterr().out
    with pytest.raises(PyptoSyntaxError, match="static assertion failed: no"):
        pl.parse(text.replace('2 > 1, "fine"', '1 > 2, "no"'))


@pl.jit.incore
def _produce(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    y[0:N] = pl.exp(x[0:N])
    return y


@pl.jit(auto_scope=False)
def mixed_deps(x: pl.Tensor[[N], pl.FP32], y: pl.Out[pl.Tensor[[N], pl.FP32]]):
    with pl.manual_scope():
        tids = pl.array.create(2, pl.TASK_ID)
        for n in pl.range(2):
            y, t = pl.spmd_submit(_produce, x, y, core_num=1)
            tids[n] = t
        y, u = pl.spmd_submit(_produce, x, y, core_num=1, deps=[tids, tids[0]])  # ERR:mixed
    return y


def test_deps_do_not_mix_arrays_and_single_task_ids():
    compile_error(mixed_deps, PyptoTypeError, "deps= cannot mix whole TaskId arrays and "
                  "single TaskIds", HERE, "mixed", "[tids, tids[0]]",
                  args=(np.zeros(N, np.float32), np.zeros(N, np.float32)))
