"""`TestRunner`: run one `PTOTestCase` on the pypto-lab simulator through `pypto.golden`.

The case's program is compiled and run for the platform it asks for (else the
session's), its tensors are made from its specs, `compute_expected` is the golden,
and every output is compared the way the real runtime validates a run: elementwise
`isclose(actual, expected, rtol, atol)` with the case's `RunConfig` tolerances, where a
NaN in the golden marks a don't-care element.
"""
from __future__ import annotations

import os
import time
import traceback
from typing import Any

import numpy as np

from harness.core.harness import PTOTestCase
from pypto.golden import TensorSpec as GoldenTensorSpec
from pypto.golden import _interop as io
from pypto.golden import run
from pypto.golden.validation import isclose
from pypto.runtime.runner import RunConfig, RunResult


def _as_numpy(x: Any) -> np.ndarray:
    return np.asarray(io.to_numpy(x))


def _close(a: np.ndarray, e: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    if a.dtype.kind == "V" or e.dtype.kind == "V":  # bf16 / fp8 stored as ml_dtypes
        a, e = io.to_f32(a), io.to_f32(e)
    care = ~np.isnan(e.astype(np.float64)) if e.dtype.kind == "f" else True
    return isclose(a, e, rtol=rtol, atol=atol) | ~np.broadcast_to(care, e.shape)


def runtime_compare(actual: Any, expected: Any, *, rtol: float, atol: float,
                    **_: Any) -> tuple[bool, str]:
    """The real runtime's validation rule: isclose everywhere the golden is not NaN."""
    a, e = _as_numpy(actual), _as_numpy(expected)
    if a.shape != e.shape:
        return False, f"    shape {a.shape} differs from the golden's {e.shape}"
    ok = _close(a, e, rtol, atol)
    if ok.all():
        return True, ""
    bad = np.flatnonzero(~ok)
    return False, (f"    Mismatched elements: {bad.size}/{a.size}  rtol={rtol} atol={atol}; "
                   f"first at flat index {bad[:8].tolist()}")


runtime_compare.__name__ = "isclose, NaN golden = don't care"
runtime_compare.bad_mask = lambda a, e, rtol, atol, **_: ~_close(_as_numpy(a), _as_numpy(e),
                                                            rtol, atol)


def golden_specs(case: PTOTestCase) -> list:
    """The case's tensor specs (then its scalars) as pypto.golden specs, in order."""
    specs: list = [GoldenTensorSpec(s.name, list(s.shape), s.dtype.torch_dtype,
                                    init_value=s.init_value, is_output=s.is_output)
                   for s in case.tensor_specs]
    specs += [s.to_golden() for s in case.scalar_specs]
    return specs


def on_sim(platform: str) -> str:
    """With REAL_PYPTO_HARDWARE_ON_SIM set (`real_pypto_tests.py --hardware-on-sim`), a case
    written for the hardware (a2a3, a5) runs on its simulator (a2a3sim, a5sim)."""
    if os.environ.get("REAL_PYPTO_HARDWARE_ON_SIM") and platform in ("a2a3", "a5"):
        return platform + "sim"
    return platform


class TestRunner:
    """Runs test cases on the simulator (`run(case) -> RunResult`)."""

    __test__ = False

    def __init__(self, config: RunConfig | None = None):
        self.config = config or RunConfig()

    def run(self, test_case: PTOTestCase) -> RunResult:
        name = test_case.get_name()
        platform = on_sim(test_case.get_platform() or self.config.platform)
        t0 = time.time()
        try:
            program = test_case.get_program()
            if program is None:
                raise ValueError(f"test case {name} returned no program from get_program()")
            specs = golden_specs(test_case)
            outputs = [s.name for s in specs if getattr(s, "is_output", False)]
            cfg = test_case.config
            result = run(program, specs,
                         golden_fn=lambda tensors: test_case.compute_expected(tensors),
                         runtime_cfg={"platform": platform}, rtol=cfg.rtol, atol=cfg.atol,
                         compare_fn={o: runtime_compare for o in outputs}, verbose=False)
        except Exception as exc:  # noqa: BLE001 - reported as the case's failure
            return RunResult(passed=False, test_name=name,
                             error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}",
                             execution_time=time.time() - t0)
        error = None if result.passed else result.report()
        return RunResult(passed=result.passed, test_name=name, error=error,
                         execution_time=time.time() - t0)


class TestSuite:
    """A named list of test cases run together."""

    __test__ = False

    def __init__(self, name: str, config: RunConfig | None = None):
        self.name = name
        self.config = config or RunConfig()
        self.cases: list[PTOTestCase] = []

    def add_test(self, test_case: PTOTestCase) -> TestSuite:
        self.cases.append(test_case)
        return self

    def run_all(self, runner: TestRunner | None = None) -> dict[str, RunResult]:
        runner = runner or TestRunner(self.config)
        return {c.get_name(): runner.run(c) for c in self.cases}

    def summary(self, results: dict[str, RunResult]) -> str:
        passed = sum(r.passed for r in results.values())
        return f"{self.name}: {passed}/{len(results)} passed"
