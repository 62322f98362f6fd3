"""Test-case definitions and the runner (pypto-lab stand-in; see harness/__init__.py)."""
from harness.core.harness import (
    ALL_PLATFORM_IDS,
    ONBOARD_PLATFORM_IDS,
    ONBOARD_PLATFORMS,
    PLATFORMS,
    SIM_PLATFORM_IDS,
    SIM_PLATFORMS,
    PTOTestCase,
    ScalarSpec,
    TensorSpec,
    platform_to_backend,
)
from harness.core.test_runner import TestRunner
from pypto.runtime.runner import RunConfig, RunResult

__all__ = [
    "ALL_PLATFORM_IDS",
    "ONBOARD_PLATFORMS",
    "ONBOARD_PLATFORM_IDS",
    "PLATFORMS",
    "SIM_PLATFORMS",
    "SIM_PLATFORM_IDS",
    "PTOTestCase",
    "RunConfig",
    "RunResult",
    "ScalarSpec",
    "TensorSpec",
    "TestRunner",
    "platform_to_backend",
]
