"""Rendering of located errors (text and HTML), spans for kernels defined in closures,
in other files and in notebook-style cells, and the two exception families."""
from __future__ import annotations

import ast
import linecache
import re
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest
from frontend_helpers import assert_at, load_kernels, where

import pypto.language as pl
from pypto.diagnostics import render_html, render_text
from pypto.errors import (
    InternalError,
    InvalidOperationError,
    PyptoError,
    PyptoSyntaxError,
    PyptoWarning,
    UserError,
)

HERE = __file__
N = 64
T = 16


@pl.jit
def unknown_attr(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        a = x[0:T, :]
        y[0:T, :] = pl.ad(a, a)  # ERR:render
    return y


def _error(kernel, *args):
    with pytest.raises(PyptoError) as info:
        kernel.compile(*args)
    return info.value


# --- text ------------------------------------------------------------------------------------


def test_text_rendering_layout():
    err = _error(unknown_attr)
    line, col = where(HERE, "render", "pl.ad")
    text = render_text(err)
    assert str(err) == text
    lines = text.splitlines()
    assert lines[0] == "error[E300]: pl has no attribute 'ad'"
    assert lines[1] == f"  --> {HERE}:{line}:{col}"
    source = linecache.getline(HERE, line).rstrip("\n")
    rows = [r for r in lines if re.match(rf"\s*{line} \| ", r)]
    assert len(rows) == 1 and rows[0].endswith(source)
    gutter = rows[0].index("| ") + 2
    caret = lines[lines.index(rows[0]) + 1]
    assert caret.strip().startswith("|")
    assert caret.index("^") - gutter == col - 1
    assert caret.count("^") == len("pl.ad")
    # the lines around it are shown for context, numbered
    assert any(re.match(rf"\s*{line - 1} \| ", r) for r in lines)
    assert any(re.match(rf"\s*{line + 1} \| ", r) for r in lines)
    assert lines[-1] == "   = help: did you mean pl.add?"


def test_text_rendering_with_note_and_without_span():
    err = InvalidOperationError("it broke", None, hint="fix it", note="because")
    text = render_text(err)
    assert text.splitlines() == ["error[E300]: it broke", "   = help: fix it",
                                 "   = note: because"]


def test_warning_rendering_is_located():
    from pypto.ir.span import Span

    w = PyptoWarning("looks wrong", Span(HERE, 3, 5), hint="check it")
    assert str(w) == f"{HERE}:3:5: looks wrong (hint: check it)"
    assert render_text(w).startswith("warning: looks wrong")


def test_caret_counts_characters_not_bytes():
    @pl.jit
    def unicode_line(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        z = ("réduction → ok", pl.ad)  # ERR:unicode
        return y

    err = _error(unicode_line)
    assert_at(err, HERE, "unicode", "pl.ad")
    line, col = where(HERE, "unicode", "pl.ad")
    caret = str(err).splitlines()
    row = next(i for i, r in enumerate(caret) if re.match(rf"\s*{line} \| ", r))
    gutter = caret[row].index("| ") + 2
    assert caret[row + 1].index("^") - gutter == col - 1


# --- HTML ------------------------------------------------------------------------------------


def test_html_rendering():
    err = _error(unknown_attr)
    line, col = where(HERE, "render", "pl.ad")
    out = err._repr_html_()
    assert out == render_html(err)
    assert out.startswith('<div class="pypto-diagnostic"')
    assert "error[E300]</b>: pl has no attribute &#x27;ad&#x27;" in out
    assert f"--&gt; {HERE}:{line}:{col}" in out
    assert "<mark>pl.ad</mark>" in out
    assert '<div class="pp-bad">' in out
    assert "= help: did you mean pl.add?" in out


def test_html_escapes_user_text():
    err = InvalidOperationError("a <b> & c", None, hint="use <pl.add>")
    out = render_html(err)
    assert "a &lt;b&gt; &amp; c" in out and "use &lt;pl.add&gt;" in out
    assert "<b>" not in out.replace("<b style", "")


# --- where kernels come from -------------------------------------------------------------------


def test_error_in_a_closure_kernel():
    tile = T  # a closure variable the kernel reads

    def make():
        @pl.jit
        def nested(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
                a = x[0:tile, :]
                y[0:tile, :] = pl.exp(a) - a  # ERR:closure
            return y

        return nested

    err = _error(make())
    assert_at(err, HERE, "closure", "pl.exp(a) - a")
    assert "Python operator '-'" in err.message
    # the snippet shows the real (indented) line
    line, _ = where(HERE, "closure")
    assert linecache.getline(HERE, line).rstrip() in str(err)


def test_error_inside_an_inline_from_another_file():
    k = load_kernels("helper_kernels")
    err = _error(k.calls_broken_helper)
    assert_at(err, k.__file__, "helper_op", "pl.exp(a) * 2.0")


CELL = '''\
import pypto.language as pl

N = 64


@pl.jit
def cell_kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cell"):
        y[0:16, :] = pl.exp(x[0:16, :], fast=True)
    return y
'''


def test_error_in_a_notebook_cell_registered_in_linecache():
    filename = "<ipython-input-7-0123456789ab>"
    linecache.cache[filename] = (len(CELL), None, CELL.splitlines(True), filename)
    try:
        ns: dict = {"__name__": "__main__"}
        exec(compile(CELL, filename, "exec"), ns)
        err = _error(ns["cell_kernel"])
        line = next(i for i, t in enumerate(CELL.splitlines(), 1) if "fast=True" in t)
        col = CELL.splitlines()[line - 1].index("fast=True") + 1
        assert err.span.file == filename
        assert (err.span.line, err.span.col) == (line, col)
        text = str(err)
        assert f"--> {filename}:{line}:{col}" in text
        assert "pl.exp(x[0:16, :], fast=True)" in text
        assert "<mark>fast=True</mark>" in err._repr_html_()
    finally:
        linecache.cache.pop(filename, None)


def test_code_without_source_is_a_located_user_error():
    ns: dict = {"__name__": "__main__"}
    exec(compile(CELL, "<string-without-linecache>", "exec"), ns)
    err = _error(ns["cell_kernel"])
    assert isinstance(err, PyptoSyntaxError)  # the real parser's class for it
    assert "cannot read the source" in err.message
    assert "notebook cell" in err.hint


def test_a_kernel_given_on_the_command_line_parses(tmp_path):
    """`python -c CODE`: the kernel's source is the command line's code."""
    code = textwrap.dedent("""\
        import numpy as np
        import pypto.language as pl

        @pl.jit
        def add_one(x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                y[0:64] = pl.add(x[0:64], 1.0)
            return y

        y = np.zeros(64, np.float32)
        add_one(np.arange(64, dtype=np.float32), y)
        print(y[5])
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "6.0"


# --- the API boundary drops compiler frames ------------------------------------------------------


def _frames(err: BaseException) -> str:
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))


def test_user_error_from_compile_shows_no_compiler_frames():
    err = _error(unknown_attr)
    tb = _frames(err)
    assert "pypto/frontend" not in tb and "pypto/compile.py" not in tb
    assert "test_diagnostics.py" in tb  # the user's own call is still there
    assert err.__cause__ is None and err.__suppress_context__
    assert "pl has no attribute 'ad'" in tb


def test_user_error_from_call_shows_no_compiler_frames():
    @pl.jit
    def broken(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        z = pl.exp(x)  # compute op outside a region
        return y

    x = np.zeros((N, N), np.float32)
    with pytest.raises(PyptoError) as info:
        broken(x, np.zeros_like(x))
    tb = _frames(info.value)
    assert "pypto/frontend" not in tb and "pypto/compile.py" not in tb
    assert "compute op" in tb


def test_user_error_from_a_program_shows_no_compiler_frames():
    @pl.program
    class Broken:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
            z = pl.nope(x)
            return y

    with pytest.raises(PyptoError) as info:
        Broken.compile()
    assert "pypto/frontend" not in _frames(info.value)


def test_internal_error_is_a_separate_family_with_full_traceback(monkeypatch):
    from pypto.frontend import dispatch

    def crash(p, node):
        raise ZeroDivisionError("handler bug")

    monkeypatch.setitem(dispatch.STATEMENTS, ast.Pass, crash)

    @pl.jit
    def has_pass(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        pass
        return y

    with pytest.raises(InternalError) as info:
        has_pass.compile()
    err = info.value
    assert not isinstance(err, PyptoError)
    assert not issubclass(InternalError, PyptoError) and not issubclass(PyptoError, InternalError)
    assert isinstance(err.__cause__, ZeroDivisionError)
    assert "pypto/frontend" in _frames(err)  # a bug keeps its frames
    assert "test_diagnostics.py" in str(err)  # and says which kernel line it crashed on


def test_user_error_classes_carry_span_hint_note():
    assert issubclass(UserError, PyptoError)
    err = UserError("m", None, "h", "n")
    assert (err.message, err.span, err.hint, err.note) == ("m", None, "h", "n")


def test_warnings_point_at_the_kernel_line():
    @pl.jit.inline
    def out_inline(x: pl.Tensor[[N, N], pl.FP32],
                   y: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):  # ERR:warnline
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="h"):
            y[0:T, :] = pl.exp(x[0:T, :])
        return y

    @pl.jit
    def entry(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        y = out_inline(x, y)
        return y

    with pytest.warns(PyptoWarning) as rec:
        compiled = entry.compile()
    line, col = where(HERE, "warnline", "pl.InOut")
    r = next(r for r in rec if "pl.InOut on parameter 'y'" in str(r.message))
    assert (r.filename, r.lineno) == (HERE, line)
    assert (r.message.span.line, r.message.span.col) == (line, col)
    assert any("pl.InOut" in str(w) for w in compiled.warnings)


def test_gutter_follows_the_line_number_width():
    from pypto.ir.span import Span

    lines = [f"line {i}\n" for i in range(1, 121)]
    filename = "<wide-gutter>"
    linecache.cache[filename] = (0, None, lines, filename)
    try:
        err = InvalidOperationError("bad", Span(filename, 100, 1, 100, 5), hint="h", note="n")
        text = str(err).splitlines()
        assert text[1] == f"   --> {filename}:100:1"
        assert text[2] == "    |"
        assert " 99 | line 99" in text and "100 | line 100" in text
        assert "    | ^^^^" in text
        assert text[-2:] == ["    = help: h", "    = note: n"]
    finally:
        linecache.cache.pop(filename, None)
