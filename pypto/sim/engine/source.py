"""The one writer of generated Python: every function the simulator writes as source.

Three parts of the simulator write Python source to save the frames of closures on hot
paths: the op call written for its call-site shape (`engine/opcall.py`), statement
lists with their loops and ifs written out (`engine/bodygen.py`) and the batched region
bodies (`batch/codegen.py`). They all compile through `run_source`, which

* names the source `<pypto:KIND:NAME#N>` (KIND: what wrote it; NAME: the function or
  call-site shape it is for; N: a number making the name unique in the process),
* registers its lines in `linecache` under that name, so that a traceback through
  generated code shows the generated line and pdb can list it (the entry lives as long
  as the function made from it: `keep_lines`),
* and, with `SimConfig.source_dump` (or `PYPTO_SIM_SOURCE_DUMP`), writes it to a file
  of that directory, `KIND.NAME.N.py`, for reading.

`SimConfig.source="plain"` (or `PYPTO_SIM_SOURCE=plain`) runs the plain closures the
generated functions stand in for instead: the same values, traces and faults (the
equivalence tests run both), slower.
"""
from __future__ import annotations

import itertools
import linecache
import os
import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

_numbers = itertools.count()
_lock = threading.Lock()
_texts: dict[str, tuple[str, str]] = {}  # filename -> (its dump file's name, its text)
_dumped: set[tuple[str, str]] = set()  # (directory, filename) written already


def run_source(kind: str, name: str, text: str, namespace: dict[str, Any],
               dump: str | None = None) -> str:
    """Compile and run the source `text` in `namespace` (its definitions land there);
    returns its file name, `<pypto:KIND:NAME#N>`. With `dump`, a directory, also
    writes the source there."""
    n = next(_numbers)
    filename = f"<pypto:{kind}:{name}#{n}>"
    code = compile(text, filename, "exec")
    # (size, mtime, lines, name): an mtime of None keeps `linecache.checkcache` from
    # dropping an entry it finds no file for
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    _texts[filename] = (f"{kind}.{_safe(name)}.{n}.py", text)
    exec(code, namespace)
    if dump is not None:
        dump_source(filename, dump)
    return filename


def keep_lines(owner: Callable[..., Any], filename: str) -> None:
    """Keep the lines of `filename` while `owner` (a function made from it) lives; a
    process compiling many programs would otherwise hold every source it wrote."""
    weakref.finalize(owner, _forget, filename)


def _forget(filename: str) -> None:
    linecache.cache.pop(filename, None)
    _texts.pop(filename, None)


def dump_source(filename: str, directory: str) -> None:
    """Write the source compiled as `filename` into `directory` (once per directory: a
    source made once for the process, an op call's, is written by each run asking)."""
    key = (directory, filename)
    if key in _dumped:
        return
    got = _texts.get(filename)
    if got is None:
        return
    base, text = got
    with _lock:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, base), "w", encoding="utf-8") as f:
            f.write(f"# {filename}\n{text}")
        _dumped.add(key)


def _safe(name: str) -> str:
    """`name` as part of a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]


__all__ = ["dump_source", "keep_lines", "run_source"]
