"""A stand-in for the real pypto's system-test harness package (`tests/st/harness`),
written for pypto-lab: the same public names, with each test case run by
`pypto.golden` on the simulator. See tools/real_pypto_tests.py."""
from harness.core.harness import DataType, PTOTestCase, TensorSpec
from harness.core.test_runner import TestRunner, TestSuite
from pypto.runtime.runner import RunConfig, RunResult

__all__ = [
           "DataType",
           "PTOTestCase",
           "RunConfig",
           "RunResult",
           "TensorSpec",
           "TestRunner",
           "TestSuite",
]
