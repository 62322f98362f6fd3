"""`@record`: frozen value classes (IR nodes, types, op facts) that cost little to define.

A `@dataclass(frozen=True, slots=True)` costs ~0.47 ms to *define* on CPython 3.11: it
compiles six small functions (`__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__`, `__delattr__`) with one `exec` each. `import pypto.language` defines
~60 such classes, which was more than half of its import time. A record has the same
meaning as that dataclass, and is one to the standard library (`dataclasses.fields`,
`replace`, `asdict`, `is_dataclass` and pickle all work, because `__dataclass_fields__`
holds real `dataclasses.Field` objects), but it is built differently:

* `__setattr__` / `__delattr__` / pickling are shared functions, not generated ones;
* `__init__`, `__eq__`, `__hash__` and `__repr__` are compiled together, with one
  `exec`, the first time any of them is used: a class no kernel instantiates (a
  distributed type in a single-card session) never pays for them.

Fields are declared as for a dataclass: annotations, defaults, `dataclasses.field(...)`
(default_factory, compare, repr, hash). Methods the class body defines itself are kept;
`__post_init__` runs at the end of `__init__`; `eq=False` keeps identity equality.
Fields of record base classes come first, in the same order a dataclass uses.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # a marker for type checkers only (typing has it from Python 3.11)
    def dataclass_transform(**_: Any) -> Any:
        return lambda f: f

T = TypeVar("T", bound=type)

# `dataclasses.fields()` keeps the fields whose marker is this object; every record
# field is an ordinary field, so it carries it (present, unchanged, since Python 3.7).
_FIELD_MARKER = dataclasses._FIELD  # type: ignore[attr-defined]
_FACTORY = object()  # the default of an __init__ parameter whose field has a factory


@overload
def record(cls: T, /) -> T: ...
@overload
def record(*, eq: bool = True, slots: bool = True) -> Callable[[T], T]: ...


# type checkers read a record as the frozen dataclass it means
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, Field))
def record(cls: T | None = None, /, *, eq: bool = True, slots: bool = True) -> Any:
    """Make `cls` a frozen record (`@record`, or `@record(eq=False, slots=False)`)."""

    def wrap(c: T) -> T:
        return _build(c, eq=eq, slots=slots)

    return wrap if cls is None else wrap(cls)


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _own_fields(cls: type) -> list[Field]:
    own = []
    # the class's own annotations only (inherited fields come from the bases' records)
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if _is_classvar(annotation):
            continue
        default = cls.__dict__.get(name, MISSING)
        f: Any = default if isinstance(default, Field) else dataclasses.field(default=default)
        if f.default is not MISSING and type(f.default).__hash__ is None:
            # the dataclass rule: a mutable default would be shared by every instance
            raise ValueError(f"mutable default {type(f.default)} for field {name} of "
                             f"{cls.__qualname__} is not allowed: use default_factory")
        f.name, f.type = name, annotation
        f._field_type = _FIELD_MARKER
        if f.kw_only is MISSING:  # resolved as a dataclass resolves it (all positional)
            f.kw_only = False
        own.append(f)
    return own


def _build(cls: T, *, eq: bool, slots: bool) -> T:
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(base.__dict__.get("__dataclass_fields__", {}))
    own = _own_fields(cls)
    fields.update((f.name, f) for f in own)
    seen_default = None
    for f in fields.values():
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default and f.init:
            raise TypeError(f"non-default argument {f.name!r} follows default argument "
                            f"{seen_default!r} in {cls.__qualname__}")
        seen_default = seen_default or (f.name if has_default else None)

    ns = dict(cls.__dict__)
    for name in ("__dict__", "__weakref__"):
        ns.pop(name, None)
    if slots:
        inherited = {s for b in cls.__mro__[1:] for s in b.__dict__.get("__slots__", ())}
        ns["__slots__"] = tuple(f.name for f in own if f.name not in inherited)
        for f in own:
            ns.pop(f.name, None)  # a slot and a class attribute cannot share a name
        ns["__getstate__"] = _getstate
        ns["__setstate__"] = _setstate
    else:
        for f in own:  # as a dataclass does: the class attribute is the plain default
            if f.default is MISSING:
                ns.pop(f.name, None)
            else:
                ns[f.name] = f.default
    ns["__dataclass_fields__"] = fields
    # a real @dataclass subclassing a record reads its base's parameters (frozen-ness)
    ns["__dataclass_params__"] = SimpleNamespace(
        init=True, repr=True, eq=eq, order=False, unsafe_hash=False, frozen=True,
        match_args=True, kw_only=False, slots=slots, weakref_slot=False)
    ns["__match_args__"] = tuple(f.name for f in fields.values() if f.init)
    ns["__setattr__"] = _frozen_setattr
    ns["__delattr__"] = _frozen_delattr

    wanted = [m for m in ("__init__", "__repr__") if m not in cls.__dict__]
    if eq:
        if "__eq__" not in cls.__dict__:
            wanted.append("__eq__")
        if cls.__dict__.get("__hash__") is None:  # a body's own __eq__ sets it to None
            wanted.append("__hash__")
    holder: list[type] = []
    for method in wanted:
        ns[method] = _deferred(method, holder)
    built = type(cls)(cls.__name__, cls.__bases__, ns)
    built.__qualname__ = cls.__qualname__
    holder.append(built)
    return built


def _deferred(method: str, holder: list[type]) -> Callable:
    """A stand-in that compiles the class's methods on first use, then calls the real one."""

    def first_use(self: Any, *args: Any, **kwargs: Any) -> Any:
        cls = holder[0]
        if cls.__dict__.get(method) is first_use:
            _compile_methods(cls)
        return getattr(cls, method)(self, *args, **kwargs)

    first_use.__name__ = first_use.__qualname__ = method
    return first_use


def _compile_methods(cls: type) -> None:
    fields = list(cls.__dict__["__dataclass_fields__"].values())
    env: dict[str, Any] = {"_set": object.__setattr__, "_FACTORY": _FACTORY}
    lines: list[str] = []
    replaced = [m for m in ("__init__", "__repr__", "__eq__", "__hash__")
                if getattr(cls.__dict__.get(m), "__qualname__", None) == m]

    if "__init__" in replaced:
        params, body = ["self"], []
        for f in fields:
            if not f.init:
                continue
            if f.default_factory is not MISSING:
                env[f"_factory_{f.name}"] = f.default_factory
                params.append(f"{f.name}=_FACTORY")
                body.append(f"    _set(self, {f.name!r}, _factory_{f.name}() "
                            f"if {f.name} is _FACTORY else {f.name})")
            else:
                if f.default is not MISSING:
                    env[f"_default_{f.name}"] = f.default
                    params.append(f"{f.name}=_default_{f.name}")
                else:
                    params.append(f.name)
                body.append(f"    _set(self, {f.name!r}, {f.name})")
        if hasattr(cls, "__post_init__"):
            body.append("    self.__post_init__()")
        lines += [f"def __init__({', '.join(params)}):", *(body or ["    pass"])]
    if "__repr__" in replaced:
        shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields if f.repr)
        lines += ["def __repr__(self):", f"    return f'{{type(self).__qualname__}}({shown})'"]
    compared = [f.name for f in fields if f.compare]
    if "__eq__" in replaced:
        mine = "".join(f"self.{n}," for n in compared)
        theirs = "".join(f"other.{n}," for n in compared)
        lines += ["def __eq__(self, other):",
                  "    if other.__class__ is self.__class__:",
                  f"        return ({mine}) == ({theirs})",
                  "    return NotImplemented"]
    if "__hash__" in replaced:
        hashed = "".join(f"self.{f.name}," for f in fields
                         if (f.compare if f.hash is None else f.hash))
        lines += ["def __hash__(self):", f"    return hash(({hashed}))"]
    exec("\n".join(lines), env)  # one compile for all of the class's methods
    for method in replaced:
        fn = env[method]
        fn.__qualname__ = f"{cls.__qualname__}.{method}"
        type.__setattr__(cls, method, fn)


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list:
    return [getattr(self, name) for name in self.__dataclass_fields__]


def _setstate(self: Any, state: list) -> None:
    for name, value in zip(self.__dataclass_fields__, state):
        object.__setattr__(self, name, value)
