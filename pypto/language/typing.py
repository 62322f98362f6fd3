"""Annotation objects: `pl.Tensor[[M, N], pl.FP32]`, `pl.Out[...]`, `pl.Scalar[...]`,
and `pl.dynamic` dimension symbols (with the arithmetic annotations may use)."""
from __future__ import annotations

import operator
from typing import Any

from pypto.ir.dtypes import DType
from pypto.ir.record import record


class DimExpr:
    """Python-level arithmetic over DynVars, as written in annotations
    (`pl.Tensor[[B_DYN * S_DYN, D], ...]`)."""

    def _bin(self, other: Any, op: str, swap: bool = False) -> DimExpr:
        return DynBinary(op, other, self) if swap else DynBinary(op, self, other)

    def __add__(self, o): return self._bin(o, "+")
    def __radd__(self, o): return self._bin(o, "+", True)
    def __sub__(self, o): return self._bin(o, "-")
    def __rsub__(self, o): return self._bin(o, "-", True)
    def __mul__(self, o): return self._bin(o, "*")
    def __rmul__(self, o): return self._bin(o, "*", True)
    def __floordiv__(self, o): return self._bin(o, "//")
    def __rfloordiv__(self, o): return self._bin(o, "//", True)
    def __mod__(self, o): return self._bin(o, "%")
    def __rmod__(self, o): return self._bin(o, "%", True)

    def __bool__(self) -> bool:
        raise TypeError("a dynamic dimension has no truth value at definition time")


_PY_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
           "%": operator.mod}


class DynVar(DimExpr):
    """A dynamic dimension symbol. Reuse the same object for dims that must match."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"pl.dynamic needs an identifier name, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"pl.dynamic({self.name!r})"

    def __str__(self) -> str:
        return self.name

    def evaluate(self, env: dict) -> int:
        return env[self.name]


class DynBinary(DimExpr):
    def __init__(self, op: str, lhs: Any, rhs: Any):
        self.op, self.lhs, self.rhs = op, lhs, rhs

    def __repr__(self) -> str:
        return f"({self.lhs} {self.op} {self.rhs})"

    def evaluate(self, env: dict) -> int:
        def ev(x):
            return x.evaluate(env) if isinstance(x, DimExpr) else x

        return _PY_OPS[self.op](ev(self.lhs), ev(self.rhs))


def dynamic(name: str) -> DynVar:
    """Declare a dynamic dimension `name` (module level; use in annotations only)."""
    return DynVar(name)


@record(slots=False)
class TensorView:
    """`pl.TensorView(valid_shape=[...], layout=...)` in a `pl.Tensor[...]` annotation: the
    part of the tensor that holds data. Strides and pad modes are not modelled."""

    stride: Any = None
    layout: Any = None
    valid_shape: Any = None
    pad: Any = None

    def __post_init__(self) -> None:
        if self.stride or self.pad is not None:
            raise TypeError("pl.TensorView: only valid_shape= and layout= are modelled here "
                            "(strides and pad modes are not)")


@record(slots=False)
class TileView:
    """`pl.TileView(valid_shape=[...])` in a `pl.Tile[...]` annotation: the valid region of
    the tile. The other fields of the real TileView (strides, layouts, fractal, pad) are
    not modelled."""

    valid_shape: Any = None
    stride: Any = None

    def __post_init__(self) -> None:
        if self.stride:
            raise TypeError("pl.TileView: only valid_shape= is modelled here (strides are not)")


class MemRef:
    """`pl.MemRef(...)` in a tile / tensor annotation: where the buffer lives.

    Two spellings, as in the real language: three arguments `(addr, size, offset)`
    describe an existing allocation; zero or one (`pl.MemRef("name", slots=N)`)
    declare an allocation of the kernel's own, which the compiler's packer keeps apart
    from every other buffer, with `slots` equally sized slots picked by subscript
    (`pl.MemRef("l0c", slots=2)[i % 2]`, the index may be a run-time value).

    Placement is the allocator's business: the simulator gives every tile its own
    storage, so a declaration changes no value (a kernel that relies on two tiles
    overwriting each other through one slot is not modelled). The checks the real
    parser makes on the spelling are made here: slots >= 1, a constant slot index in
    range, and no slot subscript on a three-argument MemRef."""

    def __init__(self, *args: Any, slots: int = 1) -> None:
        if len(args) not in (0, 1, 3):
            raise TypeError("pl.MemRef takes a declaration name (or nothing), or "
                            f"(addr, size, offset); got {len(args)} arguments")
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise TypeError(f"pl.MemRef slots must be a positive int, got {slots!r}")
        if len(args) == 1 and not isinstance(args[0], str):
            raise TypeError(f"a declared pl.MemRef is named by a string, got {args[0]!r}")
        if len(args) == 3 and slots != 1:
            raise TypeError("slots= declares an allocation; it does not apply to the "
                            "(addr, size, offset) form")
        self.name = args[0] if len(args) == 1 else None
        self.declared = len(args) < 3
        self.slots = slots
        self.slot: Any = None

    def __getitem__(self, index: Any) -> MemRef:
        if not self.declared or self.slot is not None:
            raise TypeError("only a declared pl.MemRef(..., slots=N) is indexed by slot")
        if isinstance(index, int) and not isinstance(index, bool) and \
                not 0 <= index < self.slots:
            raise TypeError(f"slot {index} is out of range for pl.MemRef with "
                            f"slots={self.slots}")
        picked = MemRef(*([self.name] if self.name is not None else []), slots=self.slots)
        picked.slot = index
        return picked

    def __repr__(self) -> str:
        name = repr(self.name) if self.name is not None else ""
        slot = f"[{self.slot}]" if self.slot is not None else ""
        return f"pl.MemRef({name}{', ' if name and self.slots > 1 else ''}" \
               f"{f'slots={self.slots}' if self.slots > 1 else ''}){slot}"


@record(slots=False)
class TensorAnnotation:
    shape: tuple | None  # None: bare `pl.Tensor`, shape taken from the runtime argument
    dtype: DType | None
    layout: Any = None
    view: TensorView | None = None


@record(slots=False)
class TileAnnotation:
    shape: tuple
    dtype: DType
    extras: tuple = ()


@record(slots=False)
class ScalarAnnotation:
    dtype: DType


@record(slots=False)
class DirectionAnnotation:
    direction: str  # "Out" | "InOut"
    inner: Any


@record(slots=False)
class ArrayAnnotation:
    extent: int
    dtype: DType


@record(slots=False)
class TupleAnnotation:
    items: tuple


@record(slots=False)
class HandleAnnotation:
    """`pl.Ptr`, `pl.PrefetchAsyncContext`, `pl.AsyncEvent`, `pl.AsyncSession`: the type of
    an opaque handle an op returns (an allocation, a prefetch context / event / session)."""

    name: str

    def __repr__(self) -> str:
        return f"pl.{self.name}"


Ptr = HandleAnnotation("Ptr")
PrefetchAsyncContext = HandleAnnotation("PrefetchAsyncContext")
AsyncEvent = HandleAnnotation("AsyncEvent")
AsyncSession = HandleAnnotation("AsyncSession")


def _items(key: Any) -> tuple:
    return key if isinstance(key, tuple) else (key,)


class _TensorMeta(type):
    def __getitem__(cls, key: Any) -> TensorAnnotation:
        items = _items(key)
        if len(items) < 2:
            raise TypeError("pl.Tensor needs [shape, dtype]")
        shape, dtype = items[0], items[1]
        if not isinstance(shape, (list, tuple)):
            raise TypeError("pl.Tensor's shape must be a list such as [M, N]")
        layout, view = None, None
        for extra in items[2:]:
            if isinstance(extra, TensorView):
                view = extra
            else:
                layout = extra
        return TensorAnnotation(tuple(shape), dtype, layout, view)


class Tensor(metaclass=_TensorMeta):
    """`pl.Tensor[[d0, d1, ...], dtype]`: a tensor in global memory."""

    def __init__(self, *_: Any, **__: Any):
        raise TypeError("pl.Tensor is an annotation; tensors are created by kernels "
                        "(pl.create_tensor) or passed in as arrays")


class _TileMeta(type):
    def __getitem__(cls, key: Any) -> TileAnnotation:
        items = _items(key)
        return TileAnnotation(tuple(items[0]), items[1], tuple(items[2:]))


class Tile(metaclass=_TileMeta):
    """`pl.Tile[[rows, cols], dtype]`: an on-chip buffer."""


class _ScalarMeta(type):
    def __getitem__(cls, dtype: DType) -> ScalarAnnotation:
        return ScalarAnnotation(dtype)


class Scalar(metaclass=_ScalarMeta):
    """`pl.Scalar[dtype]`: a register-width value."""


class _DirMeta(type):
    def __getitem__(cls, inner: Any) -> DirectionAnnotation:
        return DirectionAnnotation(cls.__name__, inner)


class Out(metaclass=_DirMeta):
    """`pl.Out[pl.Tensor[...]]`: written, never read; not uploaded before the kernel runs."""


class InOut(metaclass=_DirMeta):
    """`pl.InOut[pl.Tensor[...]]`: uploaded, read and written, copied back."""


class _ArrayMeta(type):
    def __getitem__(cls, key: Any) -> ArrayAnnotation:
        extent, dtype = key
        return ArrayAnnotation(extent, dtype)


class Array(metaclass=_ArrayMeta):
    """`pl.Array[extent, dtype]`: a small on-core array."""


class _TupleMeta(type):
    def __getitem__(cls, key: Any) -> TupleAnnotation:
        return TupleAnnotation(_items(key))


class Tuple(metaclass=_TupleMeta):
    """`pl.Tuple[T1, T2]`: a multi-value return annotation."""


class MemRefType:
    """`pl.MemRefType`: the real printer's annotation of a bare MemRef variable (a
    planned buffer as an SSA value). pypto-lab's IR has no such variables (buffers are
    planned inside the simulator, `pl.MemRef` only names them in tile annotations), so
    it is not a type here: annotating with it is a located error."""


class RuntimeScalarMarker:
    """`pl.RUNTIME`: a scalar parameter left unspecialized, its value given at dispatch
    (`kernel.compile(n=pl.RUNTIME)`, or `n: pl.Scalar[pl.INT32] = pl.RUNTIME`). In
    pypto-lab every scalar parameter of an entry is a run-time value already, so the
    marker asks for what happens anyway; it has no value of its own."""

    def _no_value(self, *args: Any) -> Any:
        raise TypeError("pl.RUNTIME is a compile-time marker with no value: it leaves a "
                        "scalar parameter unspecialized and cannot take part in an "
                        "expression")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _no_value
    __floordiv__ = __truediv__ = __mod__ = __lt__ = __le__ = __gt__ = __ge__ = _no_value
    __int__ = __index__ = __float__ = __bool__ = _no_value

    def __repr__(self) -> str:
        return "pl.RUNTIME"


RUNTIME = RuntimeScalarMarker()
