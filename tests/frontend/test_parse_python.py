"""`parse_python` survives CPython 3.11's spurious AST recursion-depth SystemError
(python/cpython#106905: shared state raced by threads) and passes other errors on."""
import ast

import pytest

from pypto.frontend import source


def test_a_spurious_recursion_mismatch_is_retried(monkeypatch):
    real = ast.parse
    calls = []

    def flaky(text, **kw):
        calls.append(text)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=180, after=201)")
        return real(text, **kw)

    monkeypatch.setattr(source.ast, "parse", flaky)
    tree = source.parse_python("x = 1\n")
    assert isinstance(tree.body[0], ast.Assign) and len(calls) == 2


def test_other_errors_are_not_swallowed(monkeypatch):
    def broken(text, **kw):
        raise SystemError("something else")

    monkeypatch.setattr(source.ast, "parse", broken)
    with pytest.raises(SystemError, match="something else"):
        source.parse_python("x = 1\n")
    with pytest.raises(SyntaxError):
        monkeypatch.undo()
        source.parse_python("x = = 1\n")


def test_a_mismatch_that_persists_is_raised(monkeypatch):
    def always(text, **kw):
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    monkeypatch.setattr(source.ast, "parse", always)
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        source.parse_python("x = 1\n")
