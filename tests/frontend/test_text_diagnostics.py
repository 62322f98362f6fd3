"""Malformed text given to `pl.parse` gets a located diagnostic: the error class, the
message, and the line and column in the text, rendered with the offending line."""
from __future__ import annotations

import textwrap

import pytest

import pypto.language as pl
from pypto.errors import (
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    UndefinedNameError,
    UnsupportedFeatureError,
)

X = "x: pl.Tensor[[64], pl.FP32]"


def fn(body: str, params: str = X, head: str = "@pl.function") -> str:
    """A module-level function: decorator on line 1, `def` on line 2, body from line 3."""
    return f"{head}\ndef f({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def prog(body: str) -> str:
    """A program: its first method's decorator on line 3, `def` on line 4, body from 5."""
    return "@pl.program\nclass P:\n" + textwrap.indent(fn(body, f"self, {X}"), "    ")


CASES = [
    # (id, text, error class, message fragment, line, column)
    ("syntax", "x = (\n", PyptoSyntaxError, "invalid syntax: '(' was never closed", 1, 5),
    ("unknown enum member", fn("return x\n", head="@pl.function(type=pl.FunctionType.Bad_é)"),
     PyptoSyntaxError, "unknown FunctionType value: Bad_é", 1, 35),
    ("import", "import numpy as np\n" + fn("return x\n"), UnsupportedFeatureError,
     "imports only pypto", 1, 1),
    ("module statement", "print(1)\n", UnsupportedFeatureError,
     "at module level the IR text form has imports, constants and one", 1, 1),
    ("undecorated", "def f(x):\n    return x\n", PyptoSyntaxError,
     "'f' is not a @pl.function", 1, 1),
    ("decorator args", fn("return x\n", head="@pl.function(1)"), PyptoSyntaxError,
     "takes keyword options only", 1, 2),
    ("class body", "@pl.program\nclass P:\n    N = 4\n", UnsupportedFeatureError,
     "holds @pl.function methods only", 3, 5),
    ("entry", "@pl.program(entry='g')\nclass P:\n" + textwrap.indent(
        fn("return x\n", f"self, {X}"), "    "), PyptoSyntaxError,
     "entry 'g' is not a function of the program", 1, 19),
    ("default", fn("return x\n", X + " = 1"), UnsupportedFeatureError,
     "plain positional parameters", 2, 1),
    ("no self", "@pl.program\nclass P:\n" + textwrap.indent(fn("return x\n"), "    "),
     PyptoSyntaxError, "takes self first", 4, 5),
    ("annotation", fn("return x\n", "x"), PyptoTypeError,
     "Parameter 'x' missing type annotation", 2, 7),
    ("bare tensor", fn("return x\n", "x: pl.Tensor"), PyptoTypeError,
     "parameter 'x' needs a shape", 2, 7),
    ("function type", fn("return x\n", head="@pl.function(type='Kernel')"), PyptoSyntaxError,
     "unknown function type 'Kernel'", 1, 19),
    ("return type", fn("return x\n", X + ") -> (pl.Tensor"), PyptoTypeError,
     "a return type needs a shape", 2, 40),
    ("func_attr", fn("pl.func_attr({1: 'a'})\nreturn x\n"), PyptoSyntaxError,
     "pl.func_attr takes one dict literal", 3, 5),
    ("func_attr later", fn("y: pl.Tensor[[64], pl.FP32] = pl.exp(x)\npl.func_attr({})\n"),
     PyptoSyntaxError, "pl.func_attr must be the first statement", 4, 5),
    ("annotation type", fn("y: pl.Tensor[[64], 3] = pl.exp(x)\n"), PyptoTypeError,
     "pl.Tensor's dtype must be a pl dtype", 3, 8),
    ("unknown function", prog("y = self.g(x)\nreturn y\n"), UndefinedNameError,
     "the program has no function 'g'", 5, 13),
    ("launch attribute", prog("y = self.f(x, launch='at', blocks=4)\n"), PyptoTypeError,
     "unknown launch attribute 'blocks'", 5, 36),
    ("launch kind", prog("y = self.f(x, name_hint='r')\n"), PyptoSyntaxError,
     "a task launch needs launch='at' or 'spmd'", 5, 13),
    ("python call", fn("y = len(x)\n"), InvalidOperationError,
     "'len' cannot be called on run-time values here", 3, 9),
    ("undefined", fn("y = pl.exp(z)\n"), UndefinedNameError, "name 'z' is not defined", 3, 16),
    ("unknown op", fn("y = pl.expo(x)\n"), InvalidOperationError,
     "pl has no attribute 'expo'", 3, 9),
    ("op arguments", fn("y = pl.exp(x, x)\n"), InvalidOperationError,
     "pl.exp() takes at most 1 positional arguments", 3, 19),
    ("binding", fn("x.y = pl.exp(x)\n"), PyptoSyntaxError, "a binding is a plain name", 3, 5),
    ("statement", fn("while x:\n    pass\n"), UnsupportedFeatureError,
     "'While' is not a statement of the IR text form", 3, 5),
    ("chained", fn("a = b = pl.exp(x)\n"), PyptoSyntaxError,
     "chained assignment is not in the IR text form", 3, 5),
    ("unpack", fn("a, b = pl.exp(x)\n"), PyptoTypeError,
     "cannot bind a pl.Tensor[[64], pl.FP32] value to 2 names", 3, 5),
    ("yield outside", fn("y = pl.yield_(x)\n"), PyptoSyntaxError,
     "pl.yield_ outside a loop or an if", 3, 9),
    ("yield arity", fn("for i, (a,) in pl.range(0, 2, init_values=(x,)):\n"
                       "    b, c = pl.yield_(a)\n"), PyptoSyntaxError,
     "pl.yield_ of 1 values is bound to 2 names", 4, 16),
    ("no effect", fn("3\n"), PyptoSyntaxError, "this statement has no effect", 3, 5),
    ("loop", fn("for i in range(4):\n    pass\n"), PyptoSyntaxError,
     "a loop of the IR text form iterates pl.range", 3, 14),
    ("bounds", fn("for i in pl.range(0, 1, 2, 3):\n    pass\n"), PyptoSyntaxError,
     "a loop takes 1 to 3 bounds", 3, 14),
    ("carry target", fn("for i in pl.range(2, init_values=(x,)):\n    pass\n"),
     PyptoSyntaxError, "with init_values the target is `i, (a, b, ...)`", 3, 9),
    ("while args", fn("for (a,) in pl.while_(3, init_values=(x,)):\n    pass\n"),
     PyptoSyntaxError, "pl.while_ takes only init_values=(...)", 3, 17),
    ("while target", fn("for (a, b) in pl.while_(init_values=(x,)):\n    pass\n"),
     PyptoSyntaxError, "pl.while_ needs a tuple target matching init_values", 3, 9),
    ("while cond", fn("for (a,) in pl.while_(init_values=(x,)):\n    b = pl.yield_(a)\n"),
     PyptoSyntaxError, "a pl.while_ body starts with pl.cond(<condition>)", 4, 9),
    ("if arms", fn("n: pl.Scalar[pl.INDEX] = 1\nif n == 1:\n    a = pl.yield_(x)\n"
                   "else:\n    b = pl.yield_(x)\n"), PyptoSyntaxError,
     "both arms of an if must pl.yield_ the same names", 4, 5),
    ("with", fn("with open('f'):\n    pass\n"), PyptoSyntaxError,
     "a with-statement of the IR text form opens one pl scope", 3, 5),
    ("declaration", fn("x.y: pl.Scalar[pl.INDEX]\n"), PyptoSyntaxError,
     "a declaration names one variable", 3, 5),
]


@pytest.mark.parametrize("text, cls, message, line, col",
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_malformed_text_gets_a_located_error(text, cls, message, line, col):
    with pytest.raises(cls) as info:
        pl.parse(text, filename="<bad text>")
    err = info.value
    assert message in err.message
    assert (err.span.file, err.span.line, err.span.col) == ("<bad text>", line, col)
    rendered = str(err)
    assert f"--> <bad text>:{line}:{col}" in rendered
    assert f"{line} | {text.splitlines()[line - 1]}" in rendered  # the offending line


def test_text_without_or_with_several_kernels_is_a_value_error():
    with pytest.raises(ValueError, match=r"No @pl\.function or @pl\.program found in <string>"):
        pl.parse("N = 4\n")
    two = fn("return x\n") + fn("return x\n").replace("def f", "def g")
    with pytest.raises(ValueError, match=r"Multiple functions/programs found in <string>: "
                                         r"\['f', 'g'\]"):
        pl.parse(two)
    with pytest.raises(ValueError, match=r"Expected @pl\.program but found @pl\.function"):
        pl.parse_program(fn("return x\n"))


def test_a_source_map_points_errors_at_the_original_file():
    text = fn("y = pl.exp(z)\n")
    with pytest.raises(UndefinedNameError) as info:
        pl.parse(text, source_map={3: ("kernel.py", 40, 9)})
    assert (info.value.span.file, info.value.span.line, info.value.span.col) == \
        ("kernel.py", 40, 9)


def test_text_that_is_not_python_is_a_python_syntax_error_too():
    """The real `pl.parse` raises Python's SyntaxError for it; ours is both, located."""
    with pytest.raises(SyntaxError) as info:
        pl.parse(fn("return x +\n"))
    assert isinstance(info.value, PyptoSyntaxError)
    assert (info.value.lineno, info.value.offset) == (3, 15)
    assert "invalid syntax" in info.value.message


def test_an_unknown_enum_member_hint_lists_the_members():
    with pytest.raises(PyptoSyntaxError) as info:
        pl.parse(fn("return x\n", head="@pl.function(type=pl.FunctionType.BadType)"))
    assert "AIC" in info.value.hint and "Orchestration" in info.value.hint
