"""From a decorated function to a `CompiledProgram`: parse, run the pipeline, cache."""
from __future__ import annotations

import ast
import dataclasses
import inspect
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.frontend import ProgramBuilder, check_program_externals, program_kind
from pypto.ir.nodes import Direction, FunctionKind, Program
from pypto.ir.printer import print_program
from pypto.language.enums import FunctionType
from pypto.language.kernels import parse_options
from pypto.language.typing import Tensor
from pypto.passes import PassContext, default_pipeline, run_pipeline
from pypto.platform import DEFAULT_PLATFORM


@dataclass
class CompiledProgram:
    """A compiled kernel: the final IR, the per-pass records and the analyses the
    passes published (regions, units, buffer estimates, task dependencies)."""

    program: Program
    records: list = field(default_factory=list)
    analyses: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    platform: str = DEFAULT_PLATFORM
    source: Any = None  # the JITFunction / ProgramDef compiled
    # the run configuration given to `.compile(..., config=)` (its devices are the ones
    # the program was compiled for), what a call of the compiled program starts from
    run_config: Any = None

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """Run the compiled program on the simulator, as the real
        `kernel.compile(...)(args)`: `pl.Out` / `pl.InOut` arrays are filled in place.
        A call's `config` is laid over the one given when compiling (a call that names
        no devices runs on the compile's)."""
        if not _RUNNER:
            raise RuntimeError("no simulator is installed: import pypto.language first")
        return _RUNNER[0](self, args, kwargs, config)

    def configured(self, config: Any) -> CompiledProgram:
        """This program with `config` as the one it was compiled with."""
        if config is None or config is self.run_config:
            return self
        return dataclasses.replace(self, run_config=config)

    @property
    def output_dir(self) -> str:
        """The directory of what compiling produced. The real toolchain writes generated
        C++ and the passes' dumps there; pypto-lab generates no device code, so it holds
        the printed program (`program.py`, the text `pl.parse` reads back), written on
        first access under the system's temporary directory (or where
        `pypto.ir.compile(..., output_dir=)` said)."""
        if self._output_dir is None:
            self.write_output(tempfile.mkdtemp(prefix=f"pypto_lab_{self.program.name}_"))
        return str(self._output_dir)

    def write_output(self, directory: str) -> None:
        """Write the printed program into `directory` (made if missing); it becomes
        `output_dir`."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        (out / "program.py").write_text(print_program(self.program), encoding="utf-8")
        object.__setattr__(self, "_output_dir", str(out))

    _output_dir: str | None = field(default=None, repr=False, compare=False)

    @property
    def param_names(self) -> list[str]:
        """The entry's parameter names, in order (the real call-shape contract)."""
        return [p.var.name for p in self.entry.params]

    @property
    def output_indices(self) -> list[int]:
        """The positions of the entry's pl.Out / pl.InOut parameters."""
        return [i for i, p in enumerate(self.entry.params) if p.direction is not Direction.IN]

    @property
    def has_return(self) -> bool:
        """Whether the entry returns values."""
        return bool(self.entry.returns)

    @property
    def entry(self):
        return self.program.entry_function

    @property
    def regions(self) -> list:
        return self.analyses.get("regions", [])

    def function(self, name: str):
        return self.program.function(name)

    def __repr__(self) -> str:
        kinds: dict[str, int] = {}
        for f in self.program.functions:
            kinds[f.kind.value] = kinds.get(f.kind.value, 0) + 1
        return (f"<CompiledProgram {self.program.name} on {self.platform}: "
                + ", ".join(f"{n} {k}" for k, n in kinds.items()) + ">")


# How a CompiledProgram is run: `(compiled, args, kwargs, config) -> result`, installed by
# `pypto.language.jit` (the simulator sits beside the compiler, not under it).
_RUNNER: list[Callable[..., Any]] = []


def use_runner(run: Callable[..., Any]) -> None:
    _RUNNER[:] = [run]


def _arg_key(values: tuple) -> tuple:
    key: list[tuple] = []
    nd = np.ndarray
    for v in values:
        if type(v) is nd:  # sim speed: str(dtype) costs ~4 us; the dtype is its own key
            key.append(("array", v.shape, v.dtype))
        elif hasattr(v, "shape") and hasattr(v, "dtype"):
            key.append(("array", tuple(v.shape), str(v.dtype)))
        else:
            key.append(("value", type(v).__name__))
    return tuple(key)


_BARE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# id(program) -> the CompiledProgram whose final program it is (`compiled_for`)
_BY_PROGRAM: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def compiled_for(program: Program) -> CompiledProgram | None:
    """The compiled program whose final IR is `program` (what `.lower()` returned)."""
    c = _BY_PROGRAM.get(id(program))
    return c if c is not None and c.program is program else None


def _bare_params(fn: Any) -> bool:
    # Cached per function (sim speed, issue 7): inspect.signature on every kernel call
    # cost ~40 us.
    try:
        return _BARE[fn]
    except (KeyError, TypeError):
        pass
    r = _bare_params_uncached(fn)
    try:
        _BARE[fn] = r
    except TypeError:
        pass
    return r


def _bare_params_uncached(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.annotation is Tensor or (isinstance(p.annotation, str) and
                                          _may_be_bare(p.annotation)) for p in params)


def _may_be_bare(text: str) -> bool:
    """Might the string annotation `text` (`from __future__ import annotations`) be a
    bare `pl.Tensor`? Not when it is a subscript (`pl.Tensor[[M, N], pl.FP32]`,
    `pl.Out[...]`: as such an annotation object is not `Tensor` itself); any plain name
    might be an alias of it."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return True
    return not isinstance(tree.body, ast.Subscript)


def compile_jit(jitfn: Any, args: tuple, kwargs: dict, platform: str | None = None
                ) -> CompiledProgram:
    platform = platform or DEFAULT_PLATFORM
    bare = jitfn.bare_params
    if bare is None:
        bare = jitfn.bare_params = _bare_params(jitfn.fn)
    key = (platform, _arg_key(args) if bare else ())
    cached = jitfn._cache.get(key)
    if cached is not None:
        return cached
    builder = ProgramBuilder(platform, jit_entry=jitfn)
    kind = jitfn.kind if jitfn.kind is not FunctionKind.INLINE else FunctionKind.ORCHESTRATION
    name = jitfn.fn.__name__
    values = list(args) if args else None
    builder.parse_function(jitfn.fn, kind, name, args=values, entry=True)
    program = Program(name, tuple(builder.functions.values()), name)
    compiled = _finish(program, builder, platform, jitfn)
    jitfn._cache[key] = compiled
    return compiled


def compile_program(progdef: Any, args: tuple, kwargs: dict, platform: str | None = None
                    ) -> CompiledProgram:
    platform = platform or DEFAULT_PLATFORM
    entry = _program_entry(progdef)
    fdef = progdef.functions[entry]
    # like compile_jit: an entry with bare pl.Tensor parameters is specialised per shape
    # and dtype of its arguments
    key = (platform, _arg_key(args) if _bare_params(fdef.fn) else ())
    cached = progdef._cache.get(key)
    if cached is not None:
        return cached
    # the real parser parses every method; its name rules for external functions hold
    # for the methods the entry does not reach too
    check_program_externals(progdef)
    builder = ProgramBuilder(platform)
    kind = program_kind(fdef)
    builder.parse_function(fdef.fn, kind, entry, args=list(args) or None, entry=True,
                           self_object=progdef)
    program = Program(progdef.__name__, tuple(builder.functions.values()), entry)
    compiled = _finish(program, builder, platform, progdef)
    progdef._cache[key] = compiled
    return compiled


def _program_entry(progdef: Any) -> str:
    # A multi-card program's entry is its host function, which dispatches the others; a
    # host SubWorker is a callback that host function calls (the entry only alone).
    funcs = {n: f for n, f in progdef.functions.items()
             if not parse_options(f.fn).get("subworker")}
    host = [n for n, f in funcs.items() if program_kind(f) is FunctionKind.HOST]
    if host:
        return host[0]
    orch = [n for n, f in funcs.items() if f.type is FunctionType.Orchestration]
    if orch:
        return orch[0]
    opaque = [n for n, f in funcs.items() if f.type in (FunctionType.Opaque, None)]
    return opaque[-1] if opaque else next(iter(funcs or progdef.functions))


def compile_ir(program: Program, platform: str | None = None) -> CompiledProgram:
    """A `Program` read from text (`pl.parse` / `pl.loads`, e.g. a printed program)
    through the pass pipeline, as a parsed `@pl.program` goes; its source is itself."""
    ctx = PassContext(platform=platform or DEFAULT_PLATFORM, warnings=[])
    final, records = run_pipeline(program, default_pipeline(), ctx)
    return CompiledProgram(final, records, ctx.analyses, ctx.warnings,
                           platform or DEFAULT_PLATFORM, program)


def _finish(program: Program, builder: Any, platform: str, source: Any) -> CompiledProgram:
    ctx = PassContext(platform=platform, warnings=list(builder.warnings))
    ctx.analyses["parse_refusals"] = tuple(builder.refusals)  # (CheckRunnable reports them)
    final, records = run_pipeline(program, default_pipeline(), ctx)
    compiled = CompiledProgram(final, records, ctx.analyses, ctx.warnings, platform, source)
    _BY_PROGRAM[id(final)] = compiled
    return compiled
