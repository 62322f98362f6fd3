"""torch at the boundary: torch specs, torch goldens and comparators, .pt replay.
Skipped when torch is not installed; see test_no_torch for the numpy-only guarantee."""
import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pypto.golden import (  # noqa: E402
    ScalarSpec,
    TensorSpec,
    ratio_allclose,
    run_jit,
    topk_pair_compare,
    validate_golden,
)
from pypto.golden import _interop as io  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)


def test_bf16_round_trip_is_bit_exact():
    t = torch.randn(5, 7).to(torch.bfloat16)
    a = io.to_numpy(t)
    assert a.dtype == BF16
    back = io.to_torch(a.copy())
    assert back.dtype == torch.bfloat16 and torch.equal(back, t)
    f8 = torch.randn(4).to(torch.float8_e4m3fn)
    assert io.to_numpy(f8).dtype == np.dtype(ml_dtypes.float8_e4m3fn)


def test_torch_spec_uses_torch_rng():
    spec = TensorSpec("x", [3, 4], torch.bfloat16, init_value=torch.randn)
    assert spec.uses_torch and spec.np_dtype == BF16
    torch.manual_seed(7)
    a = spec.create_array()
    torch.manual_seed(7)
    ref = torch.randn([3, 4], dtype=torch.bfloat16)
    np.testing.assert_array_equal(a.view(np.uint16), io.to_numpy(ref).view(np.uint16))
    t = spec.create_tensor()
    assert isinstance(t, torch.Tensor) and t.dtype == torch.bfloat16


def test_torch_init_forms():
    assert TensorSpec("x", [2], torch.int32, init_value=3).create_tensor().tolist() == [3, 3]
    t = TensorSpec("x", [2], torch.float32, init_value=torch.tensor([1, 2])).create_tensor()
    assert t.dtype == torch.float32
    made = TensorSpec("x", [2, 2], torch.bfloat16, init_value=lambda: torch.ones(2, 2) * 3)
    assert (made.create_array().astype(np.float32) == 3).all()


def test_torch_scalar_spec():
    s = ScalarSpec("a", torch.float32, 0.1)
    assert isinstance(s.value, torch.Tensor) and s.value.ndim == 0
    assert s.to_python() == float(np.float32(0.1))
    assert ScalarSpec("h", torch.bfloat16, 1.0).to_ctypes().value == 0x3F80


def test_validate_golden_with_torch_tensors():
    x = torch.ones(4)
    validate_golden({"y": x}, {"y": x.clone()})
    with pytest.raises(AssertionError, match="dtype mismatch"):
        validate_golden({"y": x}, {"y": x.to(torch.bfloat16)})
    ok, _ = ratio_allclose()(x, x, actual_outputs={}, expected_outputs={}, inputs={},
                             rtol=1e-5, atol=1e-5)
    assert ok
    vals = torch.tensor([[3.0, 2.0, 2.0]])
    cmp = topk_pair_compare("v")
    assert cmp(torch.tensor([[0, 2, 1]]), torch.tensor([[0, 1, 2]]),
               actual_outputs={"v": vals}, expected_outputs={}, inputs={}, rtol=0, atol=0)[0]


def test_torch_golden_and_comparator(fake_kernel, tmp_path):
    seen = {}

    def body(d):
        d["y"][:] = (d["x"].astype(np.float32) * 2).astype(d["y"].dtype)

    def golden(v):
        seen["golden"] = type(v["x"])
        v["y"][:] = (v["x"].float() * 2).to(torch.bfloat16)

    def cmp(actual, expected, **kw):
        seen["cmp"] = type(actual)
        seen["inputs"] = {k: type(t) for k, t in kw["inputs"].items()}
        return torch.equal(actual, expected), "differs"

    k = fake_kernel("dbl", [("x", "In"), ("n", "In"), ("y", "Out")], body)
    specs = [TensorSpec("x", [4, 8], torch.bfloat16, init_value=torch.randn),
             ScalarSpec("n", torch.int32, 4),
             TensorSpec("y", [4, 8], torch.bfloat16, is_output=True)]
    r = run_jit(k, specs, golden, compare_fn={"y": cmp}, save_data=True, verbose=False,
                compile_cfg=dict(output_dir=str(tmp_path)))
    assert r.passed, r.error
    assert seen["golden"] is torch.Tensor and seen["cmp"] is torch.Tensor
    assert seen["inputs"] == {"x": torch.Tensor, "n": torch.Tensor}
    assert r.outputs["y"].actual.dtype == BF16
    for sub, name in (("in", "x"), ("in", "n"), ("out", "y")):
        assert (tmp_path / "data" / sub / f"{name}.pt").is_file()
        (tmp_path / "data" / sub / f"{name}.npy").unlink()  # replay from .pt alone
    loaded = torch.load(tmp_path / "data" / "out" / "y.pt", weights_only=True)
    assert loaded.dtype == torch.bfloat16
    again = run_jit(k, specs, None, golden_data=str(tmp_path / "data"), verbose=False)
    assert again.passed
    np.testing.assert_array_equal(again.outputs["y"].expected.view(np.uint16),
                                  r.outputs["y"].expected.view(np.uint16))


def test_thread_setting(monkeypatch):
    monkeypatch.setattr(io, "_threads_applied", False)
    monkeypatch.setenv("PYPTO_GOLDEN_NUM_THREADS", "0")
    with pytest.raises(ValueError, match="positive integer"):
        io.torch_or_none()
    monkeypatch.setattr(io, "_threads_applied", False)
    before = torch.get_num_threads()
    monkeypatch.setenv("PYPTO_GOLDEN_NUM_THREADS", "1")
    io.torch_or_none()
    assert torch.get_num_threads() == 1
    torch.set_num_threads(before)
