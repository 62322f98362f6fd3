"""The golden harness: run a kernel on the simulator and check it against a reference.

Same public names and semantics as pypto-lib's `golden` package, so kernel files
written for it run unmodified (`pypto-sim kernel.py`, or `import golden` resolving
here). Arrays are numpy natively; torch dtypes, factories and tensors are accepted
when the caller uses torch, and torch is never imported otherwise.

    from pypto.golden import TensorSpec, run_jit, ratio_allclose
    result = run_jit(kernel, [TensorSpec("x", [64, 64], np.float32, init_value=np.random.randn),
                              TensorSpec("y", [64, 64], np.float32, is_output=True)],
                     golden_fn=lambda v: v["y"].__setitem__(..., v["x"] * 2))
    print(result.report())

`PYPTO_GOLDEN_NUM_THREADS` sets torch's thread count once torch is in use.
"""
from pypto.golden._interop import torch_or_none as _torch_or_none
from pypto.golden.comparators import (
    error_distribution,
    mapped_pool_ratio_allclose,
    topk_pair_compare,
)
from pypto.golden.report import Mismatch, OutputCheck, RunResult, Unwritten
from pypto.golden.runner import run, run_jit
from pypto.golden.spec import ScalarSpec, TensorSpec
from pypto.golden.validation import (
    isclose,
    ratio_allclose,
    ratio_reldiff,
    validate_golden,
)

_torch_or_none()  # apply PYPTO_GOLDEN_NUM_THREADS if torch is already loaded

__all__ = [
    "Mismatch",
    # pypto-lab additions
    "OutputCheck",
    "RunResult",
    "ScalarSpec",
    "TensorSpec",
    "Unwritten",
    "error_distribution",
    "isclose",
    "mapped_pool_ratio_allclose",
    "ratio_allclose",
    "ratio_reldiff",
    "run",
    "run_jit",
    "topk_pair_compare",
    "validate_golden",
]
