"""Specs of the real toolchain's runtime: `TensorSpec` is `pypto.golden`'s (same fields,
torch or numpy dtypes), `ScalarSpec` names a scalar by its C type."""
from __future__ import annotations

from dataclasses import dataclass

from pypto.golden.spec import ScalarSpec as GoldenScalarSpec
from pypto.golden.spec import TensorSpec

# C type of a scalar argument -> the dtype pypto.golden's ScalarSpec holds it in
SCALAR_CTYPES = {"int64": "int64", "int32": "int32", "uint64": None, "uint32": None,
                 "float": "float32", "double": None}


@dataclass
class ScalarSpec:
    """A scalar argument: name, value and C type ("int64", "int32", "uint64",
    "uint32", "float", "double")."""

    name: str
    value: int | float
    ctype: str = "int64"

    def __post_init__(self) -> None:
        if self.ctype not in SCALAR_CTYPES:
            raise ValueError(f"Unsupported ctype {self.ctype!r} for scalar {self.name!r}; "
                             f"expected one of {list(SCALAR_CTYPES)}")

    def to_golden(self) -> GoldenScalarSpec:
        """The same scalar as a `pypto.golden.ScalarSpec`."""
        dtype = SCALAR_CTYPES[self.ctype]
        if dtype is None:
            raise ValueError(f"scalar {self.name!r}: C type {self.ctype} has no pl scalar "
                             "dtype on the simulator (int64, int32 and float do)")
        return GoldenScalarSpec(self.name, dtype, self.value)


__all__ = ["SCALAR_CTYPES", "ScalarSpec", "TensorSpec"]
