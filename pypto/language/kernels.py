"""What the decorators make: the Python function, its kind and its options.

The parser reads these objects; it never runs them. `pypto.language.jit` builds on
them with what a user does with a kernel (compile it, run it on the simulator), so
the frontend, which sits below the toolchain, depends only on this module.
"""
from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import Any

from pypto.ir.nodes import FunctionKind
from pypto.ir.record import record
from pypto.language.enums import FunctionType

KIND_NAMES = {
    FunctionKind.ORCHESTRATION: "jit", FunctionKind.INLINE: "jit.inline",
    FunctionKind.INCORE: "jit.incore", FunctionKind.HOST: "jit.host",
    FunctionKind.OPAQUE: "jit.opaque",
}


class KernelFunction:
    """A function decorated with one of the `@pl.jit` forms (`JITFunction` adds the verbs)."""

    def __init__(self, fn: Callable, kind: FunctionKind, options: dict | None = None):
        self.fn = fn
        self.kind = kind
        self.options = dict(options or {})
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = getattr(fn, "__module__", "")
        self.__wrapped__ = fn
        self._cache: dict = {}  # compiled programs by (platform, argument key)
        # whether its parameters include bare pl.Tensor ones (then it is specialised per
        # argument shape and dtype); None until its first compile looks
        self.bare_params: bool | None = None

    def __repr__(self) -> str:
        return f"<pl.{KIND_NAMES.get(self.kind, 'jit')} {self.__qualname__}>"


class FunctionDef:
    """A method decorated with `@pl.function(type=...)` inside a `@pl.program` class."""

    def __init__(self, fn: Callable, type: Any, options: dict):
        self.fn = fn
        self.type = type
        self.options = options
        self.__name__ = fn.__name__

    @property
    def name(self) -> str:
        return self.__name__

    @property
    def func_type(self) -> Any:
        """The `type=` it was declared with (the real Function's func_type)."""
        return self.type if self.type is not None else FunctionType.Opaque

    def __call__(self, *args: Any, **kwargs: Any):
        raise TypeError(f"{self.__name__} is a @pl.function: call it from a function of the "
                        "same @pl.program as self." + self.__name__ + "(...)")


# --- hand-written kernels -------------------------------------------------------------


@record(slots=False)
class ExternSpec:
    """A kernel whose body is hand-written C++ (`@pl.jit.extern`, or `@pl.function(...,
    external_source=...)`): the Python function declares only its signature."""

    core_type: str  # "aic", "aiv" or "mixed"
    sources: tuple[str, ...]  # the C++ entry file(s), absolute
    dual_aiv_dispatch: bool = False
    include_dirs: tuple[str, ...] = ()

    def describe(self) -> str:
        files = ", ".join(dict.fromkeys(self.sources)) or "no source"
        return f"a hand-written {self.core_type} kernel ({files})"


# decorated Python function -> its ExternSpec
_EXTERN: weakref.WeakKeyDictionary[Callable, ExternSpec] = weakref.WeakKeyDictionary()


def mark_extern(fn: Callable, spec: ExternSpec) -> None:
    _EXTERN[fn] = spec


# non-empty when any live function is marked (sim speed: a call of a kernel tests this
# before looking its function up, which makes a weak reference)
EXTERN_MARKS: dict = _EXTERN.data  # type: ignore[attr-defined]


def extern_spec(fn: Callable) -> ExternSpec | None:
    """The spec of `fn` when its body is hand-written C++, else None."""
    if not EXTERN_MARKS:
        return None
    try:
        return _EXTERN.get(fn)
    except TypeError:
        return None


# --- core-group functions ------------------------------------------------------------

# a @pl.function(type=AIC | AIV | Group) method -> the attributes its IR function carries:
# ("core_type", "aic" | "aiv") or ("group", True), then its `attrs=` (dual_aiv_dispatch,
# split, ...)
_CORE_ATTRS: weakref.WeakKeyDictionary[Callable, tuple] = weakref.WeakKeyDictionary()


def mark_core_function(fn: Callable, attrs: tuple) -> None:
    _CORE_ATTRS[fn] = attrs


def core_function_attrs(fn: Callable) -> tuple:
    try:
        return _CORE_ATTRS.get(fn, ())
    except TypeError:
        return ()


# --- the names visible where a kernel was decorated ----------------------------------

# decorated Python function -> the local namespaces of the frames that decorated it,
# innermost first (a @pl.program method: its class body, then the program's frame)
_SCOPES: weakref.WeakKeyDictionary[Callable, list[dict]] = weakref.WeakKeyDictionary()


def caller_names(depth: int) -> dict | None:
    """A snapshot of the local names of the frame `depth` levels above the caller (the
    code applying a decorator); None at module level, whose names are the function's
    own globals. A kernel's annotations and body may name the locals of the function
    that decorates it - the real parser resolves them the same way."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:  # above a script's top level (`@pl.function(...)` in __main__)
        return None
    if frame.f_locals is frame.f_globals:
        return None
    return dict(frame.f_locals)


def remember_scope(fn: Callable, names: dict | None) -> None:
    """Record `names` as visible to `fn` (after the namespaces already recorded)."""
    if names is None:
        return
    try:
        _SCOPES.setdefault(fn, []).append(names)
    except TypeError:  # not weak-referenceable (a builtin): nothing to resolve in it
        pass


def decoration_scope(fn: Callable) -> list[dict]:
    """The namespaces recorded for `fn`, innermost first."""
    try:
        return list(_SCOPES.get(fn, ()))
    except TypeError:
        return []


# decorated Python function -> parse options its decorator set (`strict_ssa`)
_OPTIONS: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()


def set_parse_options(fn: Callable, **options: Any) -> None:
    """Options the parser honours for `fn` (`strict_ssa=True`: each name assigned once
    per scope)."""
    try:
        _OPTIONS.setdefault(fn, {}).update(options)
    except TypeError:
        pass


def parse_options(fn: Callable) -> dict:
    try:
        return dict(_OPTIONS.get(fn, {}))
    except TypeError:
        return {}
