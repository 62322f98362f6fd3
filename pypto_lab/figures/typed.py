"""numpy arrays as plotly typed arrays (`{"dtype", "bdata", "shape"}`), the form plotly.js
decodes straight into typed arrays: a 128x128 float32 plane is 87 KB of JSON instead of
~300 KB of decimal text, and nothing is converted to Python lists on the way."""
from __future__ import annotations

import base64

import numpy as np

_CODES = {np.dtype(np.float32): "f4", np.dtype(np.float64): "f8", np.dtype(np.int8): "i1",
          np.dtype(np.uint8): "u1", np.dtype(np.int16): "i2", np.dtype(np.int32): "i4",
          np.dtype(np.uint16): "u2", np.dtype(np.uint32): "u4"}
_DTYPES = {v: k for k, v in _CODES.items()}


def typed(a: np.ndarray) -> dict:
    """`a` (float64 becomes float32, int64 becomes int32) as a typed-array spec."""
    a = np.asarray(a)
    if a.dtype == np.float64 or (a.dtype.kind == "f" and a.dtype not in _CODES):
        a = a.astype(np.float32)
    elif a.dtype.kind in "iub" and a.dtype not in _CODES:
        a = a.astype(np.int32)
    a = np.ascontiguousarray(a)
    spec = {"dtype": _CODES[a.dtype], "bdata": base64.b64encode(a.tobytes()).decode("ascii")}
    if a.ndim > 1:
        spec["shape"] = ", ".join(str(n) for n in a.shape)
    return spec


def decode(value: object) -> np.ndarray:
    """A typed-array spec (or a plain list) back to numpy: for tests and for `go.Figure`
    users who want the numbers."""
    if isinstance(value, dict) and "bdata" in value:
        a = np.frombuffer(base64.b64decode(value["bdata"]), dtype=_DTYPES[value["dtype"]])
        if "shape" in value:
            a = a.reshape([int(n) for n in str(value["shape"]).split(",")])
        return a
    return np.asarray(value, dtype=object if value and isinstance(value, list)
                      and isinstance(value[0], str) else None)
