"""Test-case classes of the system-test harness: `DataType`, `TensorSpec`, `PTOTestCase`
and the platform parameter lists, with the behaviour the real harness documents."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pytest
import torch

from pypto.backend import BackendType
from pypto.ir.pass_manager import OptimizationStrategy
from pypto.runtime.runner import RunConfig
from pypto.runtime.tensor_spec import ScalarSpec

SIM_PLATFORM_IDS: tuple[str, ...] = ("a2a3sim", "a5sim")
ONBOARD_PLATFORM_IDS: tuple[str, ...] = ("a2a3", "a5")
ALL_PLATFORM_IDS: tuple[str, ...] = (*SIM_PLATFORM_IDS, *ONBOARD_PLATFORM_IDS)

PLATFORMS = [pytest.param(p, id=p) for p in ALL_PLATFORM_IDS]
SIM_PLATFORMS = [pytest.param(p, id=p) for p in SIM_PLATFORM_IDS]
ONBOARD_PLATFORMS = [pytest.param(p, id=p) for p in ONBOARD_PLATFORM_IDS]


def platform_to_backend(platform: str) -> BackendType:
    """The SoC family a platform id belongs to."""
    return BackendType.for_platform(platform)


class DataType(Enum):
    """Element types a test tensor can have."""

    BF16 = "bf16"
    FP32 = "fp32"
    FP16 = "fp16"
    FP8E4M3FN = "fp8e4m3fn"
    FP8E8M0 = "fp8e8m0"
    FP4 = "fp4"
    INT32 = "int32"
    UINT32 = "uint32"
    INT16 = "int16"
    UINT16 = "uint16"
    INT8 = "int8"
    UINT8 = "uint8"
    INT64 = "int64"
    BOOL = "bool"

    @property
    def torch_dtype(self) -> torch.dtype:
        """The torch dtype a tensor of this type is made with. torch has no usable
        uint16 / uint32, so those are made as the signed type of the same width (the
        bits are what the kernel sees)."""
        name = _TORCH_NAMES[self]
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"this torch has no dtype torch.{name}")
        return dtype


_TORCH_NAMES = {
    DataType.BF16: "bfloat16", DataType.FP32: "float32", DataType.FP16: "float16",
    DataType.FP8E4M3FN: "float8_e4m3fn", DataType.FP8E8M0: "float8_e8m0fnu",
    DataType.FP4: "float4_e2m1fn_x2", DataType.INT32: "int32", DataType.UINT32: "int32",
    DataType.INT16: "int16", DataType.UINT16: "int16", DataType.INT8: "int8",
    DataType.UINT8: "uint8", DataType.INT64: "int64", DataType.BOOL: "bool",
}


@dataclass
class TensorSpec:
    """One tensor argument of a test: `init_value` None (zeros), a number, a tensor or
    a callable; `is_output` marks the tensors compared with the golden."""

    name: str
    shape: list[int]
    dtype: DataType
    init_value: int | float | torch.Tensor | Callable | None = None
    is_output: bool = False


class PTOTestCase(ABC):
    """A test case: its tensors, its program and its expected outputs.

    Subclasses implement `get_name`, `define_tensors`, `get_program` (a `@pl.program`
    class) and `compute_expected(tensors, params=None)` (fills the outputs in place);
    `define_scalars`, `get_platform`, `get_strategy`, `get_backend_type` and
    `get_memory_planner` may be overridden. Constructor overrides win over the class
    defaults, as in the real harness."""

    def __init__(self, config: RunConfig | None = None, *, platform: str | None = None,
                 backend_type: BackendType | None = None,
                 strategy: OptimizationStrategy | None = None, memory_planner: Any = None,
                 enable_pypto_l0c_double_buffer: bool | None = None):
        self.config = config or RunConfig()
        self._override_platform = platform
        self._override_backend = backend_type
        self._override_strategy = strategy
        self._override_memory_planner = memory_planner
        self._override_enable_pypto_l0c_double_buffer = enable_pypto_l0c_double_buffer
        self._tensor_specs: list[TensorSpec] | None = None
        self._scalar_specs: list[ScalarSpec] | None = None

    @abstractmethod
    def get_name(self) -> str: ...

    @abstractmethod
    def define_tensors(self) -> list[TensorSpec]: ...

    @abstractmethod
    def get_program(self) -> Any: ...

    @abstractmethod
    def compute_expected(self, tensors: dict[str, torch.Tensor],
                         params: dict[str, Any] | None = None) -> None: ...

    def define_scalars(self) -> list[ScalarSpec]:
        return []

    def get_strategy(self) -> OptimizationStrategy:
        return self._override_strategy or OptimizationStrategy.Default

    def get_memory_planner(self) -> Any:
        return self._override_memory_planner

    def get_enable_pypto_l0c_double_buffer(self) -> bool | None:
        return self._override_enable_pypto_l0c_double_buffer

    def get_platform(self) -> str | None:
        return self._override_platform

    def get_backend_type(self) -> BackendType:
        if self._override_platform is not None:
            return platform_to_backend(self._override_platform)
        return self._override_backend or BackendType.Ascend910B

    @property
    def tensor_specs(self) -> list[TensorSpec]:
        if self._tensor_specs is None:
            self._tensor_specs = self.define_tensors()
        return self._tensor_specs

    @property
    def scalar_specs(self) -> list[ScalarSpec]:
        if self._scalar_specs is None:
            self._scalar_specs = self.define_scalars()
        return self._scalar_specs
