"""Constructs a kernel cannot use: each is a located user error naming the construct,
never a crash inside the compiler. Kernels are generated as notebook-style cells (source
registered in linecache) from one-statement bodies; `# ERR` marks the offending line."""
from __future__ import annotations

import itertools
import linecache

import pytest

from pypto.errors import (
    DynamicShapeError,
    InvalidOperationError,
    PyptoError,
    PyptoSyntaxError,
    PyptoTypeError,
    ScopeError,
    UndefinedNameError,
    UnsupportedFeatureError,
)

HEAD = '''\
import pypto.language as pl
N = 64
T = 16
LST = [1, 2, 3]


@pl.jit
def k(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
'''
REGION = '''\
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        a = x[0:T, :]
'''
TAIL = "    return y\n"

# (body, in a region?, exception, message fragment, token the error points at)
CASES = [
    ("m = (q := n)  # ERR", False, UnsupportedFeatureError, "'(q := n)' is not supported",
     "q := n"),
    ("s = {1, 2}  # ERR", False, UnsupportedFeatureError, "'{1, 2}' is not supported", "{1, 2}"),
    ("s = {i: i for i in LST}  # ERR", False, UnsupportedFeatureError, "is not supported",
     "{i: i"),
    ("del n  # ERR", False, UnsupportedFeatureError, "'del n' is not supported", "del"),
    ("global N  # ERR", False, UnsupportedFeatureError, "'global N' is not supported", "global"),
    ("import math  # ERR", False, UnsupportedFeatureError, "'import math'", "import"),
    ("raise ValueError('x')  # ERR", False, UnsupportedFeatureError, "'raise ValueError",
     "raise"),
    ("def f():  # ERR\n    pass", False, UnsupportedFeatureError, "'def f():'", "def"),
    ("class C:  # ERR\n    pass", False, UnsupportedFeatureError, "'class C:'", "class"),
    ("x.foo = 1  # ERR", False, UnsupportedFeatureError, "cannot assign to 'x.foo'", "x.foo"),
    ("x[0:T, :] += 1  # ERR", False, UnsupportedFeatureError, "augmented assignment",
     "x[0:T, :]"),
    ("n += x  # ERR", False, UnsupportedFeatureError, "Python operator '+' does not apply",
     "n += x"),
    ("m = len(x)  # ERR", False, UnsupportedFeatureError, "'len' is a Python function",
     "len(x)"),
    ("m = min(n, 4)  # ERR", False, UnsupportedFeatureError, "'min' is a Python function",
     "min(n, 4)"),
    ("print(n)  # ERR", False, UnsupportedFeatureError, "'print' is a Python function",
     "print(n)"),
    ("m = x.foo  # ERR", False, PyptoSyntaxError, "has no attribute 'foo'", "x.foo"),
    ("m = LST[n]  # ERR", False, UnsupportedFeatureError, "compile-time list with a run-time",
     "LST[n]"),
    ("m = n if n > 0 else 1  # ERR", False, UnsupportedFeatureError,
     "conditional expression needs a compile-time condition", "n if"),
    ("m = x[0:T:2, :]  # ERR", True, UnsupportedFeatureError, "slices with a step", "2, :]"),
    ("m = x[-1, :]  # ERR", True, UnsupportedFeatureError, "negative indices", "-1"),
    ("m = x[..., 0]  # ERR", True, UnsupportedFeatureError, "ellipsis", "x[..."),
    ("m = x[None, :]  # ERR", True, PyptoSyntaxError, "index None is not an integer", "None"),
    ("m = x[0, 0, 0]  # ERR", True, PyptoTypeError, "3 indices for a rank-2 value", "x[0, 0, 0]"),
    ("with open('f') as f:  # ERR\n    pass", False, PyptoSyntaxError, "is not a kernel scope",
     "open('f')"),
    ("assert n > 0  # ERR", False, UnsupportedFeatureError, "assert needs a compile-time",
     "assert"),
    ("assert N < 0, 'too big'  # ERR", False, PyptoSyntaxError,
     "compile-time assertion failed: too big", "assert"),
    ("for i in pl.range(4):  # ERR\n    pass\nelse:\n    pass", False, UnsupportedFeatureError,
     "for/else", "for"),
    ("for i in pl.range(0, 4, 0):  # ERR\n    pass", False, PyptoSyntaxError,
     "loop step must not be 0", "pl.range(0"),
    ("for i in pl.range(4, foo=1):  # ERR\n    pass", False, PyptoSyntaxError,
     "unexpected keyword argument 'foo'", "pl.range(4"),
    ("for i in pl.pipeline(4):  # ERR\n    pass", False, PyptoSyntaxError,
     "pl.pipeline needs stage=K", "pl.pipeline"),
    ("for i in pl.spmd(0):  # ERR\n    pass", False, PyptoSyntaxError,
     "block count must be a positive integer", "0)"),
    ("for a in LST:  # ERR\n    pass", False, PyptoSyntaxError, "a kernel loop must use pl.range",
     "LST:"),
    ("for (a,) in pl.while_(init_values=(n,)):\n    a = a - 1  # ERR", False, PyptoSyntaxError,
     "the first statement of a pl.while_ body must be pl.cond", "a = a - 1"),
    ("pl.cond(n > 0)  # ERR", False, PyptoSyntaxError, "pl.cond(...) can only be used",
     "pl.cond"),
    ("pl.parallel(4)  # ERR", False, PyptoSyntaxError, "pl.parallel(...) can only be used",
     "pl.parallel"),
    ("pl.static_assert(n > 0)  # ERR", False, PyptoSyntaxError,
     "pl.static_assert needs a compile-time condition", "n > 0"),
    ("pl.func_attr({'a': 1})  # ERR", False, PyptoSyntaxError,
     "pl.func_attr must be the first statement", "pl.func_attr"),
    ("with pl.at(level=pl.Level.CORE_GROUP, bogus=1):  # ERR\n    pass", False, PyptoSyntaxError,
     "pl.at() got an unexpected keyword argument 'bogus'", "bogus"),
    ("with pl.at(pl.Level.CORE_GROUP):  # ERR\n    pass", False, PyptoSyntaxError,
     "pl.at takes keyword arguments only", "pl.at("),
    ("with pl.at(level=pl.Level.CORE_GROUP, deps=[x]):  # ERR\n    pass", False,
     PyptoTypeError, "deps= takes TaskIds", "[x]"),
    ("with pl.scope() as s:  # ERR\n    pass", False, PyptoSyntaxError,
     "pl.scope does not bind a value", "s:"),
    ("y, t = pl.spmd_submit(pl.exp, x, core_num=2)  # ERR", False, PyptoSyntaxError,
     "first argument must be a kernel", "pl.exp, x"),
    ("a, b = n  # ERR", False, PyptoTypeError, "cannot unpack a pl.Scalar", "a, b"),
    ("a: pl.Scalar[pl.FP32] = n  # ERR", False, PyptoTypeError, "does not match",
     "pl.Scalar[pl.FP32]"),
    ("a: int  # ERR", False, PyptoSyntaxError, "a bare annotation declares nothing", "a: int"),
    ("m = x @ x  # ERR", False, UnsupportedFeatureError, "Python operator '@'", "x @ x"),
    ("m = x < x  # ERR", False, UnsupportedFeatureError, "Python operator '<'", "x < x"),
    ("m = n is None  # ERR", False, UnsupportedFeatureError, "operator 'is' is not supported",
     "n is None"),
    ("m = 1 // 0  # ERR", False, PyptoTypeError, "raised ZeroDivisionError", "1 // 0"),
    ("m = pl.FP32(3)  # ERR", False, InvalidOperationError, "'pl.FP32' is not callable",
     "pl.FP32(3)"),
    ("m = pl.tensor.dim(x, 7)  # ERR", False, InvalidOperationError, "axis 7 is out of range",
     "7)"),
    ("m = pl.reshape(x, [3, 5])  # ERR", False, InvalidOperationError, "cannot reshape",
     "[3, 5]"),
    ("m = k(x, y)  # ERR", False, InvalidOperationError, "cannot call another @pl.jit entry",
     "k(x, y)"),
    ("m = pl.Level.NOPE  # ERR", False, PyptoTypeError, "has no attribute 'NOPE'",
     "pl.Level.NOPE"),
    ("m = yield n  # ERR", False, UnsupportedFeatureError, "'(yield n)' is not supported",
     "yield"),
    ("m = pl.add(*x)  # ERR", False, UnsupportedFeatureError, "only compile-time lists",
     "*x"),
    ("m = pl.exp(x, 3)  # ERR", True, InvalidOperationError, "pl.exp() takes at most 1 "
     "positional argument", "3)"),
    ("y[0:T, :] = 3.0  # ERR", True, PyptoTypeError, "right side of a subscript assignment",
     "y[0:T"),
    ("y.T[0:T] = a  # ERR", True, PyptoSyntaxError, "must be a plain name", "y.T"),
    ("LST[0] = a  # ERR", True, PyptoSyntaxError, "cannot assign into the compile-time value",
     "LST"),
    ("b = pl.create_tensor([n, T], dtype=pl.FP32)  # ERR", True, DynamicShapeError,
     "pl.create_tensor: this shape entry is a run-time value", "n, T]"),
    ("b = pl.full([T, n], dtype=pl.FP32, value=0.0)  # ERR", True, DynamicShapeError,
     "pl.full: this shape entry is a run-time value", "n]"),
    ("z = pl.zeros([T, T])  # ERR", True, InvalidOperationError, "pl has no attribute 'zeros'",
     "pl.zeros"),
    ("z = undefined_thing  # ERR", False, UndefinedNameError,
     "name 'undefined_thing' is not defined", "undefined_thing"),
    ("with pl.manual_scope():\n    with pl.at(level=pl.Level.CORE_GROUP):\n"
     "        with pl.scope():  # ERR\n            pass", False, ScopeError,
     "pl.scope is an orchestration scope", "pl.scope()"),
]


def _indent(body: str, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in body.splitlines())


_counter = itertools.count()


def _cell(body: str, region: bool) -> tuple[str, str]:
    src = HEAD + (REGION + _indent(body, 8) if region else _indent(body, 4)) + TAIL
    filename = f"<pypto-cell-{next(_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    return src, filename


@pytest.mark.parametrize("body,region,exc,match,token", CASES,
                         ids=[c[0].splitlines()[0][:40] for c in CASES])
def test_unsupported_construct_is_a_located_user_error(body, region, exc, match, token):
    src, filename = _cell(body, region)
    try:
        ns: dict = {"__name__": "cell"}
        exec(compile(src, filename, "exec"), ns)
        with pytest.raises(PyptoError) as info:
            ns["k"].compile()
        err = info.value
        assert isinstance(err, exc), f"{type(err).__name__}: {err}"
        assert match in err.message, err.message
        lines = src.splitlines()
        line = next(i for i, t in enumerate(lines, 1) if t.rstrip().endswith("# ERR"))
        col = lines[line - 1].index(token) + 1
        assert (err.span.file, err.span.line, err.span.col) == (filename, line, col), str(err)
        assert lines[line - 1].rstrip() in str(err)  # the rendering shows the cell's line
    finally:
        linecache.cache.pop(filename, None)


def test_builtin_hints():
    src, filename = _cell("m = max(n, 4)  # ERR", False)
    try:
        ns: dict = {"__name__": "cell"}
        exec(compile(src, filename, "exec"), ns)
        with pytest.raises(UnsupportedFeatureError) as info:
            ns["k"].compile()
        assert "pl.max(a, b)" in info.value.hint
    finally:
        linecache.cache.pop(filename, None)


def test_every_unsupported_construct_comes_with_a_hint():
    missing = []
    for body, region, *_ in CASES:
        src, filename = _cell(body, region)
        try:
            ns: dict = {"__name__": "cell"}
            exec(compile(src, filename, "exec"), ns)
            try:
                ns["k"].compile()
            except PyptoError as err:
                if not err.hint:
                    missing.append(f"{body.splitlines()[0]!r}: {err.message}")
        finally:
            linecache.cache.pop(filename, None)
    assert not missing, "\n".join(missing)
