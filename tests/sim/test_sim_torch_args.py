"""Kernels take CPU torch tensors as arguments (the real toolchain's tests call them that
way): each becomes a numpy view of the tensor's memory, so a pl.Out / pl.InOut tensor is
filled in place, bf16 and fp8 included. Calling with numpy never imports torch."""
import subprocess
import sys

import pytest

import pypto.language as pl

N = 16


@pl.jit
def double(x: pl.Tensor[[N, N], pl.BF16], out: pl.Out[pl.Tensor[[N, N], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [N, N])
        pl.store(pl.add(t, t), [0, 0], out)
    return out


@pl.jit
def accumulate(x: pl.Tensor, acc: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [N, N])
        a = pl.load(acc, [0, 0], [N, N])
        pl.store(pl.add(a, t), [0, 0], acc)
    return acc


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[N, N], pl.FP16], y: pl.Out[pl.Tensor[[N, N], pl.FP16]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.assemble(y, pl.mul(x, 2.0), [0, 0])
        return y


def test_bf16_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    x = torch.randn(N, N, dtype=torch.bfloat16)
    out = torch.zeros(N, N, dtype=torch.bfloat16)
    double(x, out)
    assert torch.equal(out, x + x)


def test_bare_tensor_parameters_take_their_shape_and_dtype_from_torch():
    torch = pytest.importorskip("torch")
    x = torch.randn(N, N)
    acc = torch.full((N, N), 1.5)
    accumulate(x, acc)
    assert torch.allclose(acc, x + 1.5)
    x16 = torch.randn(N, N, dtype=torch.float16)
    y16 = torch.zeros(N, N, dtype=torch.float16)
    Scale(x16, y16)
    assert torch.equal(y16, x16 * 2)


def test_compile_and_lower_take_torch_example_tensors():
    # pypto-lib's qwen3_14b/decode_layer_a8w8.py lowers its kernel on a simulator
    # platform with torch tensors as the examples: `entry.lower(*inputs, out)`
    torch = pytest.importorskip("torch")
    x = torch.randn(N, N, dtype=torch.bfloat16)
    acc = torch.zeros(N, N, dtype=torch.bfloat16)
    params = accumulate.lower(x, acc).entry_function.params
    assert [(p.var.type.shape, p.var.type.dtype) for p in params] == [((N, N), pl.BF16)] * 2
    params = accumulate.compile(x.float(), acc.float()).program.entry_function.params
    assert [p.var.type.dtype for p in params] == [pl.FP32] * 2


def test_a_strided_output_view_is_filled_in_place():
    torch = pytest.importorskip("torch")
    base = torch.zeros(N, 2 * N, dtype=torch.bfloat16)
    x = torch.randn(N, N, dtype=torch.bfloat16)
    double(x, base[:, ::2])
    assert torch.equal(base[:, ::2], x + x) and not base[:, 1::2].any()


def test_numpy_calls_do_not_import_torch():
    code = ("import numpy as np, sys\n"
            "sys.path.insert(0, {!r})\n"
            "import test_sim_torch_args as t\n"
            "x = np.ones((16, 16), np.float32); acc = np.zeros_like(x)\n"
            "t.accumulate(x, acc)\n"
            "assert (acc == 1).all()\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n").format(
                str(__import__("pathlib").Path(__file__).parent),)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
