"""`pypto.ir`: the IR (nodes, types, dtypes, the printer) and `pypto.ir.compile`, the
real toolchain's compile entry (`compiled = ir.compile(program, platform=...)`).

The compiler sits above the IR, so `compile` runs the one `pypto.language` installs
(`use_compiler`) when it is imported: a kernel is written with `pl`, which is imported
first.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.nodes import Function, Program

_COMPILER: list[Callable[..., Any]] = []


def use_compiler(compile_fn: Callable[..., Any]) -> None:
    _COMPILER[:] = [compile_fn]


def compile(program: Any, output_dir: str | None = None, strategy: Any = None,
            dump_passes: Any = True, backend_type: Any = None, skip_ptoas: bool = False,
            verification_level: Any = None, diagnostic_phase: Any = None,
            disabled_diagnostics: Any = None, memory_planner: Any = None,
            enable_pypto_l0c_double_buffer: bool | None = None, profiling: bool = False,
            platform: str | None = None, distributed_config: Any = None,
            analyze_auto_scopes_for_deps: bool = False, emit_source_loc: bool | None = None,
            dump_ptoas_passes: bool = False, runtime: Any = None) -> Any:
    """Compile `program` (a `@pl.program`, a `@pl.jit` function, or a `Program` that
    their `.lower()` / `.compile().program` made) for `platform`: the callable
    `CompiledProgram`. With `output_dir` the printed program is written there; with
    `distributed_config`, a call runs on its devices. The options of the real code
    generator and pass dumps (strategy, backend, ptoas, diagnostics, memory planner)
    are accepted and have no effect: pypto-lab runs its own pipeline and generates no
    device code."""
    if not _COMPILER:
        raise RuntimeError("pypto.ir.compile needs the compiler: import pypto.language first")
    return _COMPILER[0](program, output_dir=output_dir, platform=platform,
                        distributed_config=distributed_config)


__all__ = ["Function", "Program", "compile", "use_compiler"]
