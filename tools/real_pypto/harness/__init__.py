"""A stand-in for the real pypto's system-test harness package (`tests/st/harness`),
written for pypto-lab: the same public names, with each test case run by
`pypto.golden` on the simulator. See tools/real_pypto_tests.py."""
from pypto.runtime.runner import RunConfig, RunResult

from harness.core.harness import DataType, PTOTestCase, TensorSpec
from harness.core.test_runner import TestRunner, TestSuite

__all__ = ["PTOTestCase", "TensorSpec", "RunConfig", "RunResult", "DataType", "TestRunner",
           "TestSuite"]
