"""The decorators: `@pl.jit` (+ `.inline`, `.incore`, `.host`, `.opaque`),
`@pl.program` and `@pl.function`.

A decorated function's body is never executed as Python. Compiling parses its
source (from the file, a notebook cell via linecache, or a nested definition
with its closure), runs the pass pipeline and caches the result per argument
signature. Calling an `@pl.jit` entry with numpy arrays runs it on the simulator.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pypto.ir as _ir
from pypto.errors import NotSimulatableError, PyptoDeprecationWarning, PyptoError, public_entry
from pypto.ir.nodes import FunctionKind
from pypto.ir.span import Span
from pypto.language.dsl import KernelOnlyError
from pypto.language.enums import LINQU_LEVEL, FunctionType, Level, Role
from pypto.language.kernels import (
    EXTERN_MARKS,
    KIND_NAMES,
    ExternSpec,
    FunctionDef,
    KernelFunction,
    caller_names,
    extern_spec,
    mark_core_function,
    mark_extern,
    remember_scope,
    set_parse_options,
)
from pypto.platform import DEFAULT_PLATFORM

# compile_jit's cache key of a kernel without bare-Tensor parameters on the default platform
_DEFAULT_KEY = (DEFAULT_PLATFORM, ())


class JITFunction(KernelFunction):
    """A function decorated with one of the `@pl.jit` forms: compile it, or call it with
    arrays to run it on the simulator.

    The toolchain (`pypto.compile`, `pypto.sim`) is imported on first use: this is the
    `pl` front door, above the toolchain, and importing `pl` must stay cheap.
    """

    def __repr__(self) -> str:
        if "extern" in self.options:
            return f"<pl.jit.extern {self.__qualname__}>"
        return super().__repr__()

    # -- compilation -------------------------------------------------------------

    @public_entry
    def compile(self, *args: Any, platform: str | None = None, config: Any = None,
                **kwargs: Any):
        """Parse and run the pass pipeline; returns a `CompiledProgram` (cached), which
        a call runs (`kernel.compile(x, y, config=RunConfig(...))(x, y)`).

        Example arguments are only needed for bare `pl.Tensor` parameters; dims
        declared with `pl.dynamic` stay symbolic, so one compiled program serves
        every size. `config` (a RunConfig or SimConfig) picks the platform and is
        what a call of the result starts from (its devices, say).
        """
        if config is not None:
            platform = platform or _simulator().config_platform(config)
            return self.compile(*args, platform=platform, **kwargs).configured(config)
        spec = extern_spec(self.fn)
        if spec is not None:
            raise not_simulatable(self.fn, spec, "compiled on its own")
        if any(type(a).__module__.split(".")[0] == "torch" for a in args):
            # torch example tensors (pypto-lib lowers with them): their numpy views carry
            # the shapes and dtypes bare parameters take; only a torch caller pays this
            args = _simulator().host_args(args)
        return _compiler().compile_jit(self, args, kwargs, platform=platform)

    @public_entry
    def lower(self, *args: Any, **kwargs: Any):
        """The program after every pass (no caching of the simulator state)."""
        return self.compile(*args, **kwargs).program

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any):
        """Run the kernel on the simulator; `pl.Out` / `pl.InOut` arrays are filled in place."""
        # (`public_entry`'s boundary written out: a call of a compiled kernel is a short
        # path, one Python frame fewer)
        try:
            if self.kind is FunctionKind.INLINE:
                raise KernelOnlyError(f"{self.__name__} is @pl.jit.inline: it is spliced into "
                                      "the kernels that call it and cannot be run on its own")
            spec = extern_spec(self.fn) if EXTERN_MARKS else None
            if spec is not None:
                raise not_simulatable(self.fn, spec, "run")
            sim = _TOOLCHAIN.get("sim") or _simulator()
            if not kwargs and self.bare_params is False and \
                    (config is None or (type(config) is sim.SimConfig and config.platform is None)):
                # sim speed: a kernel without bare-Tensor parameters has one specialisation
                # per platform; once compiled, go straight to the simulator
                compiled = self._cache.get(_DEFAULT_KEY)
                if compiled is not None:
                    return sim.run_compiled(compiled, args, kwargs, config)
            platform = sim.config_platform(config)  # raises for real hardware (a2a3 / a5)
            args = sim.host_args(args)  # torch CPU tensors: numpy views of their memory
            compiled = self.compile(*args, platform=platform, **kwargs)
            return sim.run_compiled(compiled, args, kwargs, config=config)
        except PyptoError as err:
            raise err.with_traceback(None) from None


class InlineFunction(JITFunction):
    """A helper spliced into the kernels that call it (`@pl.inline`, `@pl.jit.inline`):
    the real toolchain's name for what these decorators make. It cannot run alone."""


# The toolchain, imported on first use: this module is the `pl` front door, above the
# compiler and the simulator, and `import pypto.language` must stay cheap.
_TOOLCHAIN: dict[str, Any] = {}


def _compiler() -> Any:
    """The module `pypto.compile` (a CompiledProgram it makes runs on the simulator)."""
    mod = _TOOLCHAIN.get("compile")
    if mod is None:
        import pypto.compile as compiler

        compiler.use_runner(_run_compiled_program)
        _TOOLCHAIN["compile"] = mod = compiler
    return mod


def _ir_compile(program: Any, *, output_dir: str | None, platform: str | None,
                distributed_config: Any) -> Any:
    """`pypto.ir.compile` (installed below): a decorated program or function compiled
    for `platform`, or the compiled program a lowered `Program` came from."""
    if isinstance(program, (JITFunction, ProgramDef)):
        compiled = program.compile(platform=platform)
    else:
        compiled = _compiler().compiled_for(program)
        if compiled is None:
            raise TypeError(f"pypto.ir.compile takes a @pl.program, a @pl.jit function or a "
                            f"Program their .lower() made, not {type(program).__name__}")
    if distributed_config is not None:
        ids = tuple(getattr(distributed_config, "device_ids", ()) or ())
        compiled = compiled.configured(_simulator().SimConfig(device_ids=ids or None))
    if output_dir is not None:
        compiled = dataclasses.replace(compiled, _output_dir=None)
        compiled.write_output(output_dir)
    return compiled


_ir.use_compiler(_ir_compile)


def _run_compiled_program(compiled: Any, args: tuple, kwargs: dict, config: Any) -> Any:
    """A call of a CompiledProgram: on the simulator, with the call's config laid over the
    compile's (whose devices it keeps when the call names none: the real compiled
    program is built for its devices)."""
    sim = _simulator()
    base = compiled.run_config
    if base is not None and config is not None:
        given = sim.SimConfig.from_any(config)
        if given.device_ids is None:
            config = dataclasses.replace(given, device_ids=sim.SimConfig.from_any(base).device_ids)
    elif config is None:
        config = base
    return sim.run_compiled(compiled, sim.host_args(args), kwargs, config=config)


def _simulator() -> Any:
    """The package `pypto.sim`."""
    mod = _TOOLCHAIN.get("sim")
    if mod is None:
        import pypto.sim as mod

        _TOOLCHAIN["sim"] = mod
    return mod


class _JitDecorator:
    """`pl.jit` and its variants, each usable bare or with keyword options."""

    def __init__(self, kind: FunctionKind, allowed: tuple[str, ...], marks: dict | None = None):
        self._kind = kind
        self._allowed = allowed
        self._marks = dict(marks or {})  # options every function it makes carries

    def __call__(self, fn: Callable | None = None, **options: Any):
        for key in options:
            if key not in self._allowed:
                raise TypeError(f"@pl.{KIND_NAMES[self._kind]} got an unexpected keyword "
                                f"argument {key!r}")
        if fn is None:
            return functools.partial(self.__call__, **options)
        return self.decorate(fn, options, caller_names(1))

    def decorate(self, fn: Callable, options: dict, names: dict | None) -> Any:
        """The function `fn` decorated with `options`; `names`: the decorating frame's."""
        if isinstance(fn, JITFunction):
            fn = fn.fn
        remember_scope(fn, names)
        if "auto_scope" in options:
            set_parse_options(fn, auto_scope=bool(options["auto_scope"]))
        cls = InlineFunction if self._kind is FunctionKind.INLINE else JITFunction
        return cls(fn, self._kind, {**self._marks, **options})


class _ExternDecorator:
    """`@pl.jit.extern(core_type=..., source=... | aic_source=..., aiv_source=...)`: an
    InCore kernel whose body is hand-written C++; the decorated function is its signature
    (a `...` body). Kernels may call it like a `@pl.jit.incore` function; the simulator
    cannot run it, so a run that reaches its launch stops there with `NotSimulatableError`
    (compiling, the region graph and the text form work as for any kernel).

    Source paths are resolved against the file defining the stub, as the real toolchain
    does, but they need not exist here: nothing is built from them on the simulator."""

    def __call__(self, fn: Callable | None = None, *, core_type: str = "aiv",
                 source: Any = None, aic_source: Any = None, aiv_source: Any = None,
                 dual_aiv_dispatch: bool = False,
                 include_dirs: Sequence[Any] | None = None) -> Any:
        if core_type not in ("aic", "aiv", "mixed"):
            raise ValueError(f"@pl.jit.extern core_type must be 'aic', 'aiv', or 'mixed', got "
                             f"{core_type!r}")
        if dual_aiv_dispatch and core_type != "mixed":
            raise ValueError("@pl.jit.extern dual_aiv_dispatch=True requires core_type='mixed'")
        if isinstance(include_dirs, (str, bytes, os.PathLike)):
            raise TypeError("@pl.jit.extern include_dirs must be a sequence of paths, got "
                            f"{type(include_dirs).__name__}")

        def make(f: Callable) -> JITFunction:
            if core_type == "mixed":
                if aic_source is None or aiv_source is None:
                    raise ValueError("@pl.jit.extern(core_type='mixed') requires both "
                                     "aic_source= and aiv_source=")
                sources: tuple = (aic_source, aiv_source)
            else:
                single = source if source is not None else (aic_source or aiv_source)
                if single is None:
                    raise ValueError(f"@pl.jit.extern(core_type={core_type!r}) requires source=")
                sources = (single,)
            spec = ExternSpec(core_type, tuple(_beside(f, s) for s in sources),
                              bool(dual_aiv_dispatch),
                              tuple(_beside(f, d) for d in include_dirs or ()))
            mark_extern(f, spec)
            remember_scope(f, caller_names(1 if fn is None else 2))
            return JITFunction(f, FunctionKind.INCORE, {"extern": spec})

        return make if fn is None else make(fn)


def _beside(fn: Callable, path: Any) -> str:
    """`path`, made absolute against the directory of the file defining `fn`."""
    p = os.fspath(path)
    if not os.path.isabs(p):
        try:
            src = inspect.getsourcefile(fn)
        except TypeError:
            src = None
        if src is not None and not src.startswith("<"):
            p = os.path.join(os.path.dirname(src), p)
    return os.path.abspath(p)


def def_span(fn: Callable) -> Span | None:
    """Where `fn` is defined (its `def` line)."""
    try:
        file = inspect.getsourcefile(fn) or "<unknown>"
        lines, line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    for i, text in enumerate(lines):  # past the decorators
        if text.lstrip().startswith(("def ", "async def ")):
            return Span(file, line + i, len(text) - len(text.lstrip()) + 1)
    return Span(file, line, 1)


def not_simulatable(fn: Callable, spec: ExternSpec, what: str) -> NotSimulatableError:
    return NotSimulatableError(
        f"{fn.__name__} is {spec.describe()}: its body is C++ that the simulator cannot "
        f"{'compile' if what.startswith('compiled') else 'run'}", def_span(fn),
        hint="call it from a @pl.jit kernel to see it in the region graph; simulate the "
             "kernels around it with a pypto stand-in for it, or run it on hardware")


class _Jit(_JitDecorator):
    def __init__(self) -> None:
        super().__init__(FunctionKind.ORCHESTRATION, ("auto_scope",))
        self.inline = _JitDecorator(FunctionKind.INLINE, ("auto_scope",))
        self.incore = _JitDecorator(FunctionKind.INCORE, ("level",))
        self.host = _JitDecorator(FunctionKind.HOST, ("auto_scope",))
        self.opaque = _JitDecorator(FunctionKind.OPAQUE, ())
        self.extern = _ExternDecorator()


jit = _Jit()
# `@pl.inline`: the @pl.program form's helper spliced into each caller (a @pl.jit.inline
# meant to be called from @pl.function methods, so calling it there mixes no forms)
_program_inline = _JitDecorator(FunctionKind.INLINE, (), {"program_form": True})


def inline(func: Callable) -> InlineFunction:
    """`@pl.inline`: a helper of the @pl.program form spliced into each caller."""
    return _program_inline.decorate(func, {}, caller_names(1))


# --- the @pl.program form -----------------------------------------------------------


def function(func: Callable | None = None, *, type: Any = FunctionType.Opaque,
             level: Any = None, role: Any = None, attrs: Any = None, auto_scope: bool = True,
             strict_ssa: bool = False, external_source: Any = None):
    """`@pl.function(type=pl.FunctionType.Opaque | Orchestration | InCore)`."""
    if type is FunctionType.Opaque:
        type = None  # the default: what the function's body and level make it
    if attrs:  # (a falsey non-dict is still checked when the function compiles)
        warnings.warn(PyptoDeprecationWarning(
            "@pl.function(attrs=...) is deprecated: the decorator runs before the parameters "
            "exist, so its attrs cannot reference parameters; write pl.func_attr({...}) as the "
            "first statement of the body"), stacklevel=2)
    options = {"level": level, "role": role, "attrs": attrs, "auto_scope": auto_scope,
               "strict_ssa": strict_ssa}

    def make(f: Callable) -> FunctionDef:
        remember_scope(f, caller_names(2))  # the class body (or function) decorating f
        # no alpha-renaming pass runs before the real parser reads a @pl.function (its
        # @pl.jit specializer renames same-scope rebindings), so a name is one variable
        set_parse_options(f, one_var_per_name=True)
        if strict_ssa:
            set_parse_options(f, strict_ssa=True)
        if not auto_scope:
            set_parse_options(f, auto_scope=False)
        if role is Role.SubWorker and LINQU_LEVEL.get(level, 0) >= LINQU_LEVEL[Level.HOST]:
            # a host callback: Python kept as source, never parsed as pl (subworker.py)
            set_parse_options(f, subworker=level.name)
        kind = {"AIC": ("core_type", "aic"), "AIV": ("core_type", "aiv"),
                "Group": ("group", True)}.get(getattr(type, "name", ""))
        if attrs is not None:  # checked and merged with pl.func_attr's when it compiles
            set_parse_options(f, attrs=attrs)
        if kind is not None:
            mark_core_function(f, (kind,))
        if external_source is not None:
            core = {"AIC": "aic", "AIV": "aiv"}.get(getattr(type, "name", ""), "mixed")
            mark_extern(f, ExternSpec(core, (_beside(f, external_source),)))
        return FunctionDef(f, type, options)

    return make if func is None else make(func)


class ProgramDef:
    """A class decorated with `@pl.program`: a set of functions calling each other via self."""

    def __init__(self, cls: type, options: dict, names: dict | None = None):
        self.cls = cls
        self.options = options
        self.__name__ = cls.__name__
        self.name = cls.__name__  # the real @pl.program's value is an ir.Program: its name
        self.functions = {n: v for n, v in vars(cls).items() if isinstance(v, FunctionDef)}
        self._cache: dict = {}  # compiled programs by (platform, argument key)
        if not self.functions:
            raise TypeError(f"@pl.program class {cls.__name__} has no @pl.function methods")
        for f in self.functions.values():  # the methods also see the program's frame
            remember_scope(f.fn, names)
            if options.get("strict_ssa"):
                set_parse_options(f.fn, strict_ssa=True)

    def __repr__(self) -> str:
        return f"<pl.program {self.__name__}: {', '.join(self.functions)}>"

    @public_entry
    def compile(self, *args: Any, platform: str | None = None, config: Any = None,
                **kwargs: Any):
        """Parse and run the pass pipeline (see `JITFunction.compile`)."""
        if config is not None:
            platform = platform or _simulator().config_platform(config)
            return self.compile(*args, platform=platform, **kwargs).configured(config)
        if any(type(a).__module__.split(".")[0] == "torch" for a in args):
            args = _simulator().host_args(args)  # as JITFunction.compile
        return _compiler().compile_program(self, args, kwargs, platform=platform)

    @public_entry
    def lower(self, *args: Any, **kwargs: Any):
        return self.compile(*args, **kwargs).program

    @public_entry
    def __call__(self, *args: Any, config: Any = None, **kwargs: Any):
        sim = _simulator()
        platform = sim.config_platform(config)  # raises for real hardware (a2a3 / a5)
        args = sim.host_args(args)  # torch CPU tensors: numpy views of their memory
        compiled = self.compile(*args, platform=platform, **kwargs)
        return sim.run_compiled(compiled, args, kwargs, config=config)


def program(cls: type | None = None, *, strict_ssa: bool = False):
    """`@pl.program` on a class whose methods are `@pl.function`s."""
    def make(c: type) -> ProgramDef:
        return ProgramDef(c, {"strict_ssa": strict_ssa}, caller_names(2))

    return make if cls is None else make(cls)
