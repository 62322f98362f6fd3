"""A kernel's source is read as the file holds it now (issue 16, item 2): after an edit
and `importlib.reload` (what `%autoreload` does) the edited body runs - also after an
edit that keeps the file's line count and its first and last lines."""
from __future__ import annotations

import importlib
import linecache
import os
import sys

import numpy as np

import pypto.language as pl

_HEAD = '''import pypto.language as pl


@pl.jit
def kernel(x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="body"):
'''
# The first version ends with two blank lines; the edit adds a statement in their place,
# so the file keeps its line count, its first line and its last line ("# end").
_V1 = _HEAD + '''        y[:, :] = pl.add(x[:, :], 1.0)


# end
'''
_V2 = _HEAD + '''        y[:, :] = pl.add(x[:, :], 1.0)
        y[:, :] = pl.mul(x[:, :], 3.0)

# end
'''


def _write(path, text: str, bump: int) -> None:
    path.write_text(text)
    st = os.stat(path)
    # a later modification time, as an editor saving seconds later gives (the import
    # system and linecache both compare it)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump * 2_000_000_000))


def test_reload_after_an_edit_runs_the_edited_kernel(tmp_path, monkeypatch):
    path = tmp_path / "edited_kernel_mod.py"
    _write(path, _V1, 0)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    lines1, lines2 = _V1.splitlines(), _V2.splitlines()
    assert (len(lines1), lines1[0], lines1[-1]) == (len(lines2), lines2[0], lines2[-1])
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    try:
        mod = importlib.import_module("edited_kernel_mod")
        mod.kernel(x, y)
        np.testing.assert_array_equal(y, x + 1)
        _write(path, _V2, 1)
        mod = importlib.reload(mod)
        mod.kernel(x, y)
        np.testing.assert_array_equal(y, x * 3)  # the edited body, with its last statement
        # and back: the first version runs again
        _write(path, _V1, 2)
        mod = importlib.reload(mod)
        mod.kernel(x, y)
        np.testing.assert_array_equal(y, x + 1)
    finally:
        sys.modules.pop("edited_kernel_mod", None)
        linecache.checkcache(str(path))


def test_notebook_cells_keep_their_source():
    """Cells have no file: their source lives in linecache only, and reading a fresh
    file's source must not drop it."""
    name = "<ipython-input-16-reload>"
    src = _V2.replace("kernel", "cell_kernel")
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    try:
        scope: dict = {}
        exec(compile(src, name, "exec"), scope)
        x = np.ones((8, 16), np.float32)
        y = np.zeros_like(x)
        scope["cell_kernel"](x, y)
        np.testing.assert_array_equal(y, x * 3)
        assert isinstance(scope["cell_kernel"], type(pl.jit(lambda: None)))
    finally:
        linecache.cache.pop(name, None)
