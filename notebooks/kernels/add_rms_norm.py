"""Residual add + RMSNorm, written in the layout pypto-lib kernel files use.

    residual <- x + residual                     (updated in place: pl.InOut)
    y        <- residual / rms(residual) * gamma

One compiled kernel serves any token count (TOKENS is dynamic). Run it with

    pypto-sim add_rms_norm.py [--tokens N]

Written for the pypto-lab tutorials (notebooks/07_pypto_lib_kernel_files.ipynb).
"""
import argparse

import numpy as np

import pypto.language as pl

TOKENS = pl.dynamic("TOKENS")
HIDDEN = 256
TOKEN_TILE = 16
EPS = 1e-6


@pl.jit
def add_rms_norm(
    x: pl.Tensor[[TOKENS, HIDDEN], pl.FP32],
    residual: pl.InOut[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]],
    gamma: pl.Tensor[[1, HIDDEN], pl.FP32],
    y: pl.Out[pl.Tensor[[TOKENS, HIDDEN], pl.FP32]],
):
    x.bind_dynamic(0, TOKENS)
    residual.bind_dynamic(0, TOKENS)
    y.bind_dynamic(0, TOKENS)
    n = pl.tensor.dim(x, 0)
    for r in pl.parallel(0, n, TOKEN_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_norm"):
            rows = pl.min(TOKEN_TILE, n - r)
            xt = pl.slice(x, [TOKEN_TILE, HIDDEN], [r, 0], valid_shape=[rows, HIDDEN])
            rt = pl.slice(residual, [TOKEN_TILE, HIDDEN], [r, 0], valid_shape=[rows, HIDDEN])
            s = pl.add(xt, rt)
            residual[r : r + TOKEN_TILE, :] = s
            mean_sq = pl.mul(pl.row_sum(pl.mul(s, s)), 1.0 / HIDDEN)
            inv_rms = pl.rsqrt(pl.add(mean_sq, EPS))
            y[r : r + TOKEN_TILE, :] = pl.col_expand_mul(pl.row_expand_mul(s, inv_rms),
                                                         gamma[:, :])
    return residual, y


def build_tensor_specs(tokens: int = 24):
    from golden import TensorSpec

    rng = np.random.default_rng(2024)
    return [
        TensorSpec("x", [tokens, HIDDEN], np.float32,
                   init_value=lambda: rng.standard_normal((tokens, HIDDEN))),
        TensorSpec("residual", [tokens, HIDDEN], np.float32,
                   init_value=lambda: rng.standard_normal((tokens, HIDDEN)), is_output=True),
        TensorSpec("gamma", [1, HIDDEN], np.float32,
                   init_value=lambda: rng.uniform(0.5, 1.5, (1, HIDDEN))),
        TensorSpec("y", [tokens, HIDDEN], np.float32, is_output=True),
    ]


def golden_add_rms_norm(tensors):
    s = tensors["x"] + tensors["residual"]
    tensors["residual"][:] = s
    rms = np.sqrt((s * s).mean(axis=-1, keepdims=True) + EPS)
    tensors["y"][:] = s / rms * tensors["gamma"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3",
                        choices=["a2a3", "a2a3sim", "a5", "a5sim"])
    parser.add_argument("--tokens", type=int, default=24)
    args = parser.parse_args()

    from golden import run_jit

    result = run_jit(
        add_rms_norm,
        build_tensor_specs(args.tokens),
        golden_add_rms_norm,
        runtime_cfg={"platform": args.platform},
        rtol=1e-3,
        atol=1e-3,
    )
    if not result.passed:
        print(result.error)
        raise SystemExit(1)
