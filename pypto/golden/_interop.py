"""The numpy / torch boundary of the harness.

The harness works on numpy arrays (bf16 and fp8 through `ml_dtypes`). torch is
optional and is never imported here: a torch object can only reach us if the
caller already imported torch, so `sys.modules["torch"]` is the way in. Every
helper that needs torch asks `torch_or_none()` first.
"""
from __future__ import annotations

import os
import sys
from typing import Any

import ml_dtypes
import numpy as np

# numpy dtype name <-> torch dtype attribute name (identical spellings)
_SHARED_NAMES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16",
    "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
)
# storage views used to move a dtype numpy/torch cannot exchange directly
_BIT_VIEW = {
    "bfloat16": ("int16", np.int16),
    "float8_e4m3fn": ("uint8", np.uint8),
    "float8_e5m2": ("uint8", np.uint8),
    "float8_e8m0fnu": ("uint8", np.uint8),
}

_threads_applied = False


def torch_or_none():
    """The torch module if (and only if) something already imported it."""
    torch = sys.modules.get("torch")
    if torch is not None:
        _apply_thread_setting(torch)
    return torch


def _apply_thread_setting(torch: Any) -> None:
    """Honour PYPTO_GOLDEN_NUM_THREADS once torch is around (no default is forced)."""
    global _threads_applied
    if _threads_applied:
        return
    raw = os.environ.get("PYPTO_GOLDEN_NUM_THREADS")
    if raw is None or not hasattr(torch, "set_num_threads"):
        return
    _threads_applied = True
    n = parse_thread_count(raw)
    torch.set_num_threads(n)


def parse_thread_count(raw: str) -> int:
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n <= 0:
        raise ValueError(f"PYPTO_GOLDEN_NUM_THREADS must be a positive integer, got {raw!r}")
    return n


def _from_torch_module(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "torch"


def is_torch_tensor(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def is_torch_dtype(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.dtype)


def is_torch_object(obj: Any) -> bool:
    """A torch tensor, dtype, or a function living in the torch package."""
    if is_torch_tensor(obj) or is_torch_dtype(obj):
        return True
    mod = getattr(obj, "__module__", None) or ""
    return callable(obj) and mod.split(".")[0] == "torch"


def np_dtype(dtype: Any) -> np.dtype:
    """Normalise a spec dtype (torch / numpy / ml_dtypes / pl / string) to numpy."""
    if is_torch_dtype(dtype):
        name = str(dtype).split(".", 1)[1]
        if name not in _SHARED_NAMES:
            raise TypeError(f"torch dtype {dtype} has no numpy equivalent in the harness")
        if name in _BIT_VIEW:
            return np.dtype(getattr(ml_dtypes, name))
        return np.dtype(name)
    np_attr = getattr(dtype, "np", None)  # a pl DType
    if isinstance(np_attr, np.dtype):
        return np_attr
    if isinstance(dtype, str):
        if hasattr(ml_dtypes, dtype) and not hasattr(np, dtype):
            return np.dtype(getattr(ml_dtypes, dtype))
        return np.dtype(dtype)
    return np.dtype(dtype)


def torch_dtype(dtype: np.dtype) -> Any:
    torch = sys.modules["torch"]
    name = np.dtype(dtype).name
    try:
        return getattr(torch, name)
    except AttributeError:
        raise TypeError(f"numpy dtype {name} has no torch equivalent") from None


def dtype_label(dtype: Any) -> str:
    """Short dtype text for reports: 'bfloat16', 'float32'."""
    if is_torch_dtype(dtype):
        return str(dtype).split(".", 1)[1]
    try:
        return np_dtype(dtype).name
    except TypeError:
        return str(dtype)


def to_numpy(value: Any) -> Any:
    """torch tensor -> numpy array (bf16/fp8 through a bit view); arrays pass through."""
    if is_torch_tensor(value):
        torch = sys.modules["torch"]
        t = value.detach().cpu()
        name = str(t.dtype).split(".", 1)[1]
        if name in _BIT_VIEW:
            view_name, np_view = _BIT_VIEW[name]
            target = np.dtype(getattr(ml_dtypes, name))
            return t.contiguous().view(getattr(torch, view_name)).numpy().view(np_view).view(target)
        return t.numpy()
    return value


def to_torch(array: np.ndarray) -> Any:
    """numpy array -> torch tensor of the matching dtype (shares memory when it can)."""
    torch = sys.modules["torch"]
    a = np.ascontiguousarray(array)
    name = a.dtype.name
    if name in _BIT_VIEW:
        _view_name, np_view = _BIT_VIEW[name]
        return torch.from_numpy(a.view(np_view)).view(getattr(torch, name))
    if a.dtype == np.bool_ or a.dtype.kind in "iuf":
        return torch.from_numpy(a)
    raise TypeError(f"cannot hand a {name} array to torch")


def as_numpy(value: Any) -> np.ndarray:
    """Anything array-like (torch tensor, numpy array, number) as a numpy array."""
    v = to_numpy(value)
    return v if isinstance(v, np.ndarray) else np.asarray(v)


def is_floating(dtype: np.dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or dtype.name.startswith(("float", "bfloat"))


_BF16 = np.dtype(ml_dtypes.bfloat16)


def to_f32(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == _BF16:
        # bf16 is the top half of an fp32: widening the bits is exact and ~8x faster
        # than ml_dtypes' elementwise cast (seconds on a 100M-element output)
        wide = a.view(np.uint16).astype(np.uint32)
        wide <<= 16
        return wide.view(np.float32)
    return a.astype(np.float32)
