"""End-to-end numerics of softmax / gemm / rms_norm style kernels against numpy."""
import warnings

import ml_dtypes
import numpy as np
import pytest
import sim_kernels as k

import pypto.sim as sim

warnings.filterwarnings("ignore", category=UserWarning)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_softmax(platform):
    x = rand(256, 128) * 4
    y = np.zeros_like(x)
    r = sim.simulate(k.softmax, x, y, platform=platform)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert len(r.tasks) == 4 and not r.trace.edges
    assert r.platform.name == platform


def test_gemm_bf16_with_fp32_accumulation():
    a = rand(256, 256, seed=1).astype(ml_dtypes.bfloat16)
    b = rand(256, 128, seed=2).astype(ml_dtypes.bfloat16)
    c = np.zeros((256, 128), np.float32)
    r = sim.simulate(k.gemm, a, b, c)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)
    assert len(r.tasks) == 4
    t = r.tasks[0]
    assert t.units == {"cube", "mte"}
    assert t.flops == 2 * 128 * 64 * 256
    assert t.op_counts["cube"] == 4
    # 4 k-steps, each MAD = 21 + 1 * ceil(128/16) * ceil(64/16) * ceil(64/16) cycles on A2/A3
    assert t.cycles["cube"] == pytest.approx(4 * (21 + 8 * 4 * 4))
    assert t.cycles["fix"] > 0 and t.bytes["l0c_drain"] == 128 * 64 * 4


def test_rms_norm():
    x = rand(64, 1024)
    w = rand(1, 1024, seed=3)
    y = np.zeros_like(x)
    k.rms_norm(x, w, y)
    ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_example_softmax_runs():
    import pathlib
    import runpy

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "softmax.py"
    ns = runpy.run_path(str(path))
    x = np.random.default_rng(0).standard_normal((ns["ROWS"], ns["COLS"])).astype(np.float32)
    y = np.zeros_like(x)
    ns["softmax"](x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert np.abs(y - e / e.sum(axis=1, keepdims=True)).max() < 1e-6
