"""Helpers for frontend tests: find the `# ERR:<tag>` line of a kernel and check that an
error (or warning) points exactly at a token on it."""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import pypto.language as pl

KERNELS = Path(__file__).with_name("kernels")


def where(path: str | os.PathLike, tag: str, token: str | None = None, offset: int = 0
          ) -> tuple[int, int]:
    """(line, column) of `token` on the single line of `path` marked `# ERR:<tag>`.
    Columns are 1-based; without a token, the first non-blank column."""
    lines = Path(path).read_text().splitlines()
    pattern = re.compile(rf"#\s*ERR:{re.escape(tag)}(\s|$)")
    hits = [i for i, text in enumerate(lines) if pattern.search(text)]
    assert len(hits) == 1, f"marker ERR:{tag} found {len(hits)} times in {path}"
    text = lines[hits[0]]
    if token is None:
        col = len(text) - len(text.lstrip()) + 1
    else:
        assert token in text, f"{token!r} not on the ERR:{tag} line: {text!r}"
        col = text.index(token) + 1
    return hits[0] + 1, col + offset


def same_file(a: str, b: str | os.PathLike) -> bool:
    return os.path.realpath(a) == os.path.realpath(str(b))


def assert_at(err: Any, path: str | os.PathLike, tag: str, token: str | None = None,
              offset: int = 0) -> None:
    line, col = where(path, tag, token, offset)
    span = err.span
    assert span is not None and span.known, f"no location on {err!r}"
    assert same_file(span.file, path), f"{span.file} is not {path}"
    assert (span.line, span.col) == (line, col), (
        f"expected {line}:{col}, got {span.line}:{span.col}\n{err}")


def compile_error(kernel: Any, exc: type, match: str, path: str | os.PathLike, tag: str,
                  token: str | None = None, *, offset: int = 0, args: tuple = ()) -> Any:
    """Compile `kernel`, expect `exc` whose message contains `match`, located at the
    token on the `# ERR:<tag>` line of `path`. Returns the error."""
    with pytest.raises(exc) as info:
        kernel.compile(*args)
    err = info.value
    assert match in err.message, f"{match!r} not in {err.message!r}"
    assert_at(err, path, tag, token, offset)
    return err


def misplaced_at_run(kernel: Any, match: str, path: str | os.PathLike, tag: str,
                     token: str | None = None, *, args: tuple = ()) -> Any:
    """Core work in orchestration code (`match`, at the token on the `# ERR:<tag>` line):
    the kernel compiles with a located warning there, and running it raises the located
    `ScopeError` (passes/placement.py). Returns the error."""
    from pypto.errors import ScopeError

    compiled = kernel.compile(*args)
    warned = [w for w in compiled.warnings if match in w.message]
    assert warned, f"no warning with {match!r} in {[w.message for w in compiled.warnings]}"
    assert "the program compiles, but running it is refused" in warned[0].message
    assert_at(warned[0], path, tag, token)
    with pytest.raises(ScopeError) as info:
        kernel(*args)
    err = info.value
    assert match in err.message, f"{match!r} not in {err.message!r}"
    assert_at(err, path, tag, token)
    assert "cannot run" in err.note
    return err


def refused_at_run(kernel: Any, exc: type, match: str, path: str | os.PathLike, tag: str,
                   token: str | None = None, *, args: tuple = ()) -> Any:
    """What compiles as with the real toolchain and cannot run here (`match`, at the
    token on the `# ERR:<tag>` line; passes/runnable.py): a located warning at compile,
    the located `exc` when run, before anything runs. Returns the error."""
    compiled = kernel.compile(*args)
    warned = [w for w in compiled.warnings if match in w.message]
    assert warned, f"no warning with {match!r} in {[w.message for w in compiled.warnings]}"
    assert "the program compiles, but running it is refused" in warned[0].message
    assert_at(warned[0], path, tag, token)
    with pytest.raises(exc) as info:
        kernel(*args)
    err = info.value
    assert type(err) is exc and match in err.message, f"{match!r} not in {err.message!r}"
    assert_at(err, path, tag, token)
    assert err.hint and "compiles" in err.note
    return err


def load_kernels(name: str) -> Any:
    """Import `tests/frontend/kernels/<name>.py` as a module."""
    path = KERNELS / f"{name}.py"
    mod_name = f"frontend_kernels_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


# Shapes and symbols the rule-test kernels share.
N = 64
T = 16
D = 32
CHUNK = 4
B_DYN = pl.dynamic("B_DYN")
S_DYN = pl.dynamic("S_DYN")


def helper(v):
    """A plain Python function kernels call with run-time values (a rule violation)."""
    return v
