"""Where the PTO-ISA headers are, for code that builds hand-written kernels.

The real toolchain resolves a pinned PTO-ISA checkout (cloning it when needed) and
returns its `include` directory, which `@pl.jit.extern(include_dirs=...)` kernels pass
to the C++ compiler. pypto-lab builds no C++ - a hand-written kernel is not
simulatable - so nothing is cloned: the directory is `$PTO_ISA_ROOT/include` when
that is set (a checkout the user has), else where pypto-lab would keep one. It need
not exist; modules that compute their include paths at import time still import.
"""
from __future__ import annotations

import os
from pathlib import Path

_DEFAULT_ROOT = Path.home() / ".cache" / "pypto-lab" / "pto-isa"


def pto_isa_root() -> Path:
    """The PTO-ISA checkout: `$PTO_ISA_ROOT`, else pypto-lab's (possibly absent) one."""
    env = os.environ.get("PTO_ISA_ROOT")
    return Path(env).resolve() if env else _DEFAULT_ROOT


def pto_isa_include_dir() -> Path:
    """The include directory of the PTO-ISA checkout (see the module docstring)."""
    return pto_isa_root() / "include"


__all__ = ["pto_isa_include_dir", "pto_isa_root"]
