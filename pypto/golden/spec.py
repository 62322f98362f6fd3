"""`TensorSpec` and `ScalarSpec`: what the harness builds for each kernel argument.

Specs are written once and work with either array library:

* numpy flavour - dtype is a numpy / ml_dtypes dtype, a `pl` dtype (`pl.FP32`) or a
  string; `init_value` is None, a number, an array or a callable.
* torch flavour - dtype is a `torch.dtype` and/or `init_value` is a tensor or a
  torch factory (`torch.randn`, `torch.rand`, `torch.zeros`, `torch.ones`). Inputs
  are then created with torch itself, so a script's `torch.manual_seed` gives the
  same data as on the reference harness.
"""
from __future__ import annotations

import ctypes
import inspect
import numbers
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.errors import UserError
from pypto.golden import _interop as io
from pypto.ir.span import Span


class SpecError(UserError, ValueError):
    """A `TensorSpec` that cannot describe an array (a dtype that is none, a negative or
    non-integer dim), located at the `TensorSpec(...)` call that made it."""

    code = "E103"


def _caller_span() -> Span | None:
    """The span of the call that constructed the spec: the first frame outside this
    module and the dataclass-generated `__init__`."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in (__file__, "<string>"):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    info = inspect.getframeinfo(frame, context=0)
    pos = getattr(info, "positions", None)
    if pos is not None and pos.col_offset is not None and pos.end_lineno is not None \
            and pos.end_col_offset is not None:
        return Span(info.filename, info.lineno, pos.col_offset + 1, pos.end_lineno,
                    pos.end_col_offset + 1)
    return Span(info.filename, info.lineno, 1, info.lineno, 2)


def _np_factory_call(fn: Any, shape: tuple, dtype: np.dtype) -> np.ndarray | None:
    """numpy's own factories, called the way each one wants its shape."""
    if fn is np.zeros or fn is np.ones or fn is np.empty:
        return fn(shape, dtype=dtype)
    if fn is np.random.randn or fn is np.random.rand:
        return np.asarray(fn(*shape)).astype(dtype)
    if fn is np.random.standard_normal or fn is np.random.random:
        return np.asarray(fn(size=shape)).astype(dtype)
    return None


def _torch_factories(torch: Any) -> tuple:
    return (torch.randn, torch.rand, torch.zeros, torch.ones)


@dataclass
class TensorSpec:
    """One tensor argument of the kernel, in the entry function's parameter order.

    name        the kernel parameter's name
    shape       concrete dims (ints), even where the kernel declares `pl.dynamic` dims
    dtype       torch / numpy / ml_dtypes / `pl` dtype, or a dtype name
    init_value  None (zeros), a constant, an array / tensor, a factory
                (`torch.randn`, `np.random.randn`, ...) called with the shape, or a
                zero-argument callable returning array-like data
    is_output   validate this tensor against the golden. Whether it is uploaded is
                decided by the kernel's own annotation: `pl.Out` starts with device
                residue, `pl.InOut` starts from `init_value`.
    resident    multi-card only (None/False, a worker id, or "stacked"); accepted
                and recorded, the single-process simulator has no device memory
                to keep it in.
    """

    name: str
    shape: list
    dtype: Any
    init_value: Any = field(default=None)
    is_output: bool = False
    resident: Any = None

    def __post_init__(self) -> None:
        self.shape = self._checked_shape()
        try:
            io.np_dtype(self.dtype)
        except (TypeError, ValueError, AttributeError) as exc:
            raise SpecError(f"TensorSpec {self.name!r}: dtype {self.dtype!r} is not a dtype "
                            f"({exc})", _caller_span(),
                            hint="give a numpy / ml_dtypes / torch dtype, a pl dtype "
                                 "(pl.FP32) or a dtype name such as 'float32' or "
                                 "'bfloat16'") from None
        r = self.resident
        if r is None or r is False or r == "stacked":
            return
        if isinstance(r, bool):
            raise ValueError(f"TensorSpec {self.name!r}: resident=True does not say where; "
                             'give a worker id (resident=0) or resident="stacked"')
        if isinstance(r, int):
            if r < 0:
                raise ValueError(f"TensorSpec {self.name!r}: resident worker id {r} is negative")
            return
        raise ValueError(f"TensorSpec {self.name!r}: resident must be None/False, an int worker "
                         f'id or "stacked", not {r!r}')

    def _checked_shape(self) -> list:
        try:
            dims = list(self.shape)
        except TypeError:
            dims = None
        if dims is None or any(isinstance(d, (bool, np.bool_)) or
                               not isinstance(d, numbers.Integral) for d in dims):
            raise SpecError(f"TensorSpec {self.name!r}: shape {self.shape!r} must be a list of "
                            "integers", _caller_span(),
                            hint="concrete dims, e.g. shape=[32, 16] (a pl.dynamic dim "
                                 "of the kernel gets the size this run uses)")
        bad = [(ax, int(d)) for ax, d in enumerate(dims) if d < 0]
        if bad:
            ax, d = bad[0]
            raise SpecError(f"TensorSpec {self.name!r}: shape {[int(x) for x in dims]} has "
                            f"the negative dim {d} at axis {ax}", _caller_span(),
                            hint="every dim is a size: 0 or more")
        return [int(d) for d in dims]

    # -- description ---------------------------------------------------------------

    @property
    def is_resident(self) -> bool:
        return self.resident is not None and self.resident is not False

    @property
    def np_dtype(self) -> np.dtype:
        return io.np_dtype(self.dtype)

    @property
    def uses_torch(self) -> bool:
        """True when the spec itself names torch (dtype, tensor or torch factory)."""
        return io.is_torch_object(self.dtype) or io.is_torch_object(self.init_value)

    # -- data ------------------------------------------------------------------------

    def create_tensor(self) -> Any:
        """A fresh tensor: a torch tensor for torch-flavoured specs, else a numpy array."""
        if self.uses_torch:
            return self._create_torch()
        return self.create_array()

    def create_array(self) -> np.ndarray:
        """A fresh numpy array of the spec's dtype (torch specs are made by torch)."""
        if self.uses_torch:
            return io.to_numpy(self._create_torch())
        dtype = self.np_dtype
        shape = tuple(self.shape)
        v = self.init_value
        if v is None:
            return np.zeros(shape, dtype=dtype)
        if isinstance(v, (bool, int, float, np.generic)):
            return np.full(shape, v, dtype=dtype)
        if isinstance(v, (np.ndarray, list, tuple)):
            return np.array(v).astype(dtype)
        if callable(v):
            made = _np_factory_call(v, shape, dtype)
            if made is not None:
                return made
            result = v()
            if io.is_torch_tensor(result):
                result = io.to_numpy(result)
            return np.array(result).astype(dtype)
        raise TypeError(f"TensorSpec {self.name!r}: unsupported init_value of type "
                        f"{type(v).__name__}")

    def _create_torch(self) -> Any:
        torch = io.torch_or_none()
        if torch is None:  # pragma: no cover - uses_torch implies an imported torch
            raise RuntimeError("torch-flavoured TensorSpec without torch imported")
        dtype = self.dtype if io.is_torch_dtype(self.dtype) else io.torch_dtype(self.np_dtype)
        v = self.init_value
        if v is None:
            return torch.zeros(self.shape, dtype=dtype)
        if isinstance(v, (bool, int, float)):
            return torch.full(self.shape, v, dtype=dtype)
        if isinstance(v, torch.Tensor):
            return v.to(dtype=dtype)
        if isinstance(v, np.ndarray):
            return io.to_torch(v.copy()).to(dtype=dtype)
        if callable(v):
            if any(v is f for f in _torch_factories(torch)):
                return v(self.shape, dtype=dtype)
            made = _np_factory_call(v, tuple(self.shape), np.dtype(np.float32))
            result = made if made is not None else v()
            if isinstance(result, np.ndarray):
                return io.to_torch(result.copy()).to(dtype=dtype)
            return torch.as_tensor(result, dtype=dtype)
        raise TypeError(f"TensorSpec {self.name!r}: unsupported init_value of type "
                        f"{type(v).__name__}")


# ---------------------------------------------------------------------------------------
# ScalarSpec

_INT_RANGES = {
    "int8": (ctypes.c_int8, -(1 << 7), (1 << 7) - 1),
    "int32": (ctypes.c_int32, -(1 << 31), (1 << 31) - 1),
    "int64": (ctypes.c_int64, -(1 << 63), (1 << 63) - 1),
    "uint8": (ctypes.c_uint8, 0, (1 << 8) - 1),
}
SCALAR_DTYPE_NAMES = ("int8", "int32", "int64", "uint8", "bool", "float32", "float16",
                      "bfloat16")


@dataclass
class ScalarSpec:
    """A scalar argument (`pl.Scalar[...]` parameter).

    dtype is one of int8/int32/int64/uint8/bool/float32/float16/bfloat16 (torch, numpy
    or `pl` spelling). `value` is checked against the dtype, then kept as a 0-dim
    tensor (torch dtypes) or 0-dim array (anything else) holding the dtype-rounded
    number; `to_python()` is what golden functions see.
    """

    name: str
    dtype: Any
    value: Any

    def __post_init__(self) -> None:
        kind = self.dtype_name
        if kind not in SCALAR_DTYPE_NAMES:
            raise ValueError(f"ScalarSpec {self.name!r}: dtype {self.dtype!r} is not a scalar "
                             f"dtype; use one of {', '.join(SCALAR_DTYPE_NAMES)}")
        v = self.value
        if io.is_torch_tensor(v) or isinstance(v, np.ndarray):
            if v.ndim != 0:
                raise ValueError(f"ScalarSpec {self.name!r}: value must be 0-dim, got shape "
                                 f"{tuple(v.shape)}")
            if io.dtype_label(v.dtype) != kind:
                raise ValueError(f"ScalarSpec {self.name!r}: value dtype "
                                 f"{io.dtype_label(v.dtype)} differs from dtype {kind}")
            return
        if isinstance(v, np.generic):
            v = v.item()
        self._check_python_value(kind, v)
        if io.is_torch_dtype(self.dtype):
            torch = io.torch_or_none()
            self.value = torch.tensor(v, dtype=self.dtype)
        else:
            self.value = np.array(v, dtype=io.np_dtype(kind))

    def _check_python_value(self, kind: str, v: Any) -> None:
        if kind in _INT_RANGES:
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"ScalarSpec {self.name!r} ({kind}) needs an int, got "
                                 f"{type(v).__name__}")
            _, lo, hi = _INT_RANGES[kind]
            if not lo <= v <= hi:
                raise ValueError(f"ScalarSpec {self.name!r}: {v} does not fit {kind} "
                                 f"[{lo}, {hi}]")
        elif kind == "bool":
            if not isinstance(v, bool):
                raise ValueError(f"ScalarSpec {self.name!r} (bool) needs a bool, got "
                                 f"{type(v).__name__}")
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"ScalarSpec {self.name!r} ({kind}) needs an int or float, got "
                             f"{type(v).__name__}")

    @property
    def uses_torch(self) -> bool:
        return io.is_torch_object(self.dtype) or io.is_torch_tensor(self.value)

    @property
    def dtype_name(self) -> str:
        return io.dtype_label(self.dtype)

    @property
    def np_dtype(self) -> np.dtype:
        return io.np_dtype(self.dtype_name)

    def to_python(self) -> int | float | bool:
        """The value as a Python number, rounded to the scalar's dtype."""
        return self.value.item()

    def to_ctypes(self) -> ctypes._SimpleCData:
        """The runtime ABI form: ints and floats natively, fp16/bf16 as raw 16 bits."""
        kind = self.dtype_name
        if kind in _INT_RANGES:
            return _INT_RANGES[kind][0](int(self.to_python()))
        if kind == "bool":
            return ctypes.c_bool(bool(self.to_python()))
        if kind == "float32":
            return ctypes.c_float(float(self.to_python()))
        half = np.array(self.to_python(), dtype=io.np_dtype(kind))
        return ctypes.c_uint16(int(half.view(np.uint16)))


def __getattr__(name: str) -> Any:
    # SUPPORTED_SCALAR_DTYPES: torch dtypes when torch is in use (as in pypto-lib), else numpy
    if name == "SUPPORTED_SCALAR_DTYPES":
        torch = io.torch_or_none()
        if torch is not None:
            return tuple(getattr(torch, n) for n in SCALAR_DTYPE_NAMES)
        return tuple(io.np_dtype(n) for n in SCALAR_DTYPE_NAMES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
