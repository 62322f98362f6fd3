"""Nothing is lost: what a kernel call may and may not do to the caller's arrays.

The contract (pypto.sim, as decided for issue 8):

* `pl.In` arrays are never modified, whether the run succeeds or fails, even when the
  kernel writes its input (the write goes to a device copy).
* A compile error, or an argument error (wrong dtype / shape / rank, a read-only output,
  a bad scalar), is raised before anything is touched: every array stays byte-identical.
* `pl.Out` / `pl.InOut` arrays are written on success. When a run *faults* part way,
  outputs the simulator works on in place (C-contiguous, writable, not aliased) hold a
  partial result: the SimulationError names them in `err.partial_outputs` and in its
  note. Outputs simulated in a separate device buffer (non-contiguous views, aliased
  arguments) are copied back only on success, so a failed run leaves them untouched.
* Runs are deterministic: the residue of unwritten device memory (NaN for floats, a
  seeded byte pattern for integers) and `pl.random` are seeded, so two runs, or two
  processes with different hash seeds, give bit-identical outputs.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import robust_kernels as k

from pypto.errors import PyptoError, SimulationError, UnsupportedFeatureError
from pypto.sim import SimConfig

N = 64
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def snapshot(*arrays):
    return [(a.dtype, a.shape, a.tobytes()) for a in arrays]


# --- failing runs ---------------------------------------------------------------------------------


def test_fault_leaves_in_arrays_and_names_the_partial_outputs():
    x, y, z = rand(N, N), np.full((N, N), 7.0, np.float32), rand(N, N, seed=1)
    x0 = x.copy()
    with pytest.raises(SimulationError) as info:
        k.writes_then_faults(x, 60, y, z)  # x[60:76] runs past the end in the second region
    err = info.value
    assert err.span is not None and err.span.known
    assert x.tobytes() == x0.tobytes()
    assert set(err.partial_outputs) == {"y", "z"}
    assert "partial result" in err.note and "'y'" in err.note
    assert "partial result" in str(err)


def test_fault_leaves_outputs_simulated_in_a_separate_buffer_untouched():
    x, z = rand(N, N), rand(N, N, seed=1)
    big = np.full((N, 2 * N), 5.0, np.float32)
    y = big[:, ::2]  # a strided view: not simulated in place
    zbig = np.full((N, 2 * N), 3.0, np.float32)
    zv = zbig[:, 1::2]
    before = snapshot(x, big, zbig)
    with pytest.raises(SimulationError) as info:
        k.writes_then_faults(x, 60, y, zv)
    assert snapshot(x, big, zbig) == before
    assert info.value.partial_outputs == ()


def test_successful_run_writes_outputs_and_keeps_inputs():
    x, y, z = rand(N, N), np.zeros((N, N), np.float32), rand(N, N, seed=1)
    x0, z0 = x.copy(), z.copy()
    k.writes_then_faults(x, 0, y, z)
    assert x.tobytes() == x0.tobytes()
    np.testing.assert_array_equal(z, z0 + x0)
    np.testing.assert_array_equal(y[16:], x0[16:] + 1)


def test_kernel_writing_its_input_never_reaches_the_caller():
    x, y = rand(N, N), np.zeros((N, N), np.float32)
    x0 = x.copy()
    k.writes_its_input(x, y)
    assert x.tobytes() == x0.tobytes() and x.flags.writeable
    np.testing.assert_array_equal(y, x0 + 1)


# --- errors before the run ------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["w_shape", "w_dtype", "k_array", "k_float", "w_rank"])
def test_argument_errors_touch_nothing(bad):
    x, y, w = rand(N, N), np.full((N, N), 9.0, np.float32), rand(N, N, seed=2)
    kk = 3
    if bad == "w_shape":
        w = rand(N, N + 1)
    elif bad == "w_dtype":
        w = w.astype(np.float64)
    elif bad == "w_rank":
        w = rand(N)
    elif bad == "k_array":
        kk = np.ones(3)
    else:
        kk = 2.5
    before = snapshot(x, y, w)
    with pytest.raises(SimulationError) as info:
        k.out_then_scalar(x, y, kk, w)
    assert info.value.span is not None and info.value.span.known
    assert snapshot(x, y, w) == before  # y (an Out before the bad argument) included


def test_read_only_output_is_rejected_before_anything_is_written():
    x = rand(N, N)
    y = np.full((N, N), 4.0, np.float32)
    z = np.full((N, N), 4.0, np.float32)
    z.flags.writeable = False
    before = snapshot(x, y, z)
    with pytest.raises(SimulationError, match="read-only") as info:
        k.two_outputs(x, y, z)
    assert info.value.span.known
    assert snapshot(x, y, z) == before


def test_read_only_input_is_fine():
    x = rand(N, N)
    x.flags.writeable = False
    y = np.zeros((N, N), np.float32)
    k.two_outputs(x, y, np.zeros((N, N), np.float32))
    np.testing.assert_array_equal(y, x)


def test_compile_error_leaves_every_array_byte_identical():
    a = rand(N, N).astype(ml_dtypes.bfloat16)
    b = np.random.default_rng(1).integers(-100, 100, (N, N)).astype(np.int8)
    c = np.random.default_rng(2).random((N, N)) < 0.5
    y = np.full((N, N), np.nan, np.float32)
    before = snapshot(a, b, c, y)
    with pytest.raises(UnsupportedFeatureError) as info:
        k.mixed_dtypes(a, b, c, y)
    assert info.value.span.known and info.value.span.file.endswith("robust_kernels.py")
    assert snapshot(a, b, c, y) == before


def test_a_later_run_does_not_change_arrays_of_an_earlier_one():
    x1, y1 = rand(N, N, seed=1), np.zeros((N, N), np.float32)
    z1 = np.zeros((N, N), np.float32)
    k.two_outputs(x1, y1, z1)
    kept = snapshot(x1, y1, z1)
    x2, y2, z2 = rand(N, N, seed=2), np.zeros((N, N), np.float32), np.zeros((N, N), np.float32)
    k.two_outputs(x2, y2, z2)
    with pytest.raises(PyptoError):
        k.two_outputs(x2, y2, np.zeros((N, N + 1), np.float32))
    assert snapshot(x1, y1, z1) == kept


# --- determinism ----------------------------------------------------------------------------------


def _run_partly_written(seed: int = 0):
    x = rand(N, N, seed=seed)
    i = np.arange(N * N, dtype=np.int32).reshape(N, N)
    y = np.zeros((N, N), np.float32)
    j = np.zeros((N, N), np.int32)
    # fresh memory, as the harness starts a pure pl.Out (a direct call starts from the
    # caller's zeros: `SimConfig.out_start`)
    k.partly_written(x, i, y, j, config=SimConfig(out_start="fresh"))
    return y, j


def test_two_runs_are_bit_identical_including_residue():
    y1, j1 = _run_partly_written()
    y2, j2 = _run_partly_written()
    assert np.isnan(y1[16:]).all()  # unwritten rows are residue, not zeros
    assert (j1[16:] != 0).any()  # integer residue is garbage, not zeros
    assert y1.tobytes() == y2.tobytes() and j1.tobytes() == j2.tobytes()


def test_random_bits_are_seeded():
    x = rand(16, 32)
    r1, r2 = np.zeros((16, 32), np.uint32), np.zeros((16, 32), np.uint32)
    k.random_bits(x, r1)
    k.random_bits(x, r2)
    assert r1.tobytes() == r2.tobytes() and len(np.unique(r1)) > 100


def test_seed_kernels_are_deterministic():
    import fuzz_seeds_runner as runner

    assert runner.digest() == runner.digest()


_DIGEST = """
import sys
sys.path[:0] = [{here!r}, {fuzz!r}]
import fuzz_seeds_runner, robust_kernels as k, numpy as np, hashlib
h = hashlib.sha256(fuzz_seeds_runner.digest().encode())
x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
i = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
y, j = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.int32)
k.partly_written(x, i, y, j)
h.update(y.tobytes()); h.update(j.tobytes())
print(h.hexdigest())
"""


def test_processes_with_different_hash_seeds_agree():
    code = _DIGEST.format(here=str(HERE), fuzz=str(ROOT / "tests" / "fuzz"))
    outs = []
    for hs in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hs, PYTHONPATH=str(ROOT))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300, cwd=str(ROOT))
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append(r.stdout.strip().splitlines()[-1])
    assert outs[0] == outs[1]
