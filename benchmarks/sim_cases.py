"""The benchmark's kernels written the ways pypto-lib writes them (issue 17), each with
a numpy reference (one call: the unit) and a hand-written numpy tile loop (the bar).

The hand loops are what a numpy programmer would write over the same tiles: one slice
per tile, numpy operators on it (broadcasting a row statistic, fancy indexing for a
gather), results stored through slice assignment, numpy's own handling of a short
last slice for the tails, float32 arithmetic as the kernel's. No preallocated scratch
or `out=` tricks the kernel cannot express either.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

import pypto.language as pl

# --- add-scalar with the inner loop sequential ---------------------------------------------

AM, AN, AT_M, AT_N = 1024, 512, 128, 256


@pl.jit
def add_inner_range(x: pl.Tensor[[AM, AN], pl.FP32], y: pl.Out[pl.Tensor[[AM, AN], pl.FP32]]):
    for i in pl.parallel(0, AM, AT_M):
        for j in pl.range(0, AN, AT_N):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
                y[i:i + AT_M, j:j + AT_N] = pl.add(x[i:i + AT_M, j:j + AT_N], 1.0)
    return y


def add_loop(x, y):
    for i in range(0, AM, AT_M):
        for j in range(0, AN, AT_N):
            y[i:i + AT_M, j:j + AT_N] = x[i:i + AT_M, j:j + AT_N] + np.float32(1.0)


# --- pl.Scalar parameters ------------------------------------------------------------------

SM, SN, ST_M, ST_N = 1024, 512, 64, 256


@pl.jit
def scale_shift(x: pl.Tensor[[SM, SN], pl.FP32], alpha: pl.Scalar[pl.FP32],
                beta: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor[[SM, SN], pl.FP32]]):
    for i in pl.parallel(0, SM, ST_M):
        for j in pl.range(0, SN, ST_N):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="axpb"):
                t = x[i:i + ST_M, j:j + ST_N]
                y[i:i + ST_M, j:j + ST_N] = pl.add(pl.mul(t, alpha), beta)
    return y


def scale_shift_numpy(x, alpha, beta):
    return x * np.float32(alpha) + np.float32(beta)


def scale_shift_loop(x, alpha, beta, y):
    a, b = np.float32(alpha), np.float32(beta)
    for i in range(0, SM, ST_M):
        for j in range(0, SN, ST_N):
            y[i:i + ST_M, j:j + ST_N] = x[i:i + ST_M, j:j + ST_N] * a + b


# --- valid_shape tails -----------------------------------------------------------------------

VM, VN, VT = 1000, 256, 64  # 16 row blocks, the last one 40 rows


@pl.jit
def softmax_tail(x: pl.Tensor[[VM, VN], pl.FP32], y: pl.Out[pl.Tensor[[VM, VN], pl.FP32]]):
    for r in pl.parallel(0, VM, VT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
            rows = pl.min(VT, VM - r)
            t = pl.slice(x, [VT, VN], [r, 0], valid_shape=[rows, VN])
            mx = pl.row_max(t)
            e = pl.exp(pl.row_expand_sub(t, mx))
            y[r:r + VT, :] = pl.row_expand_div(e, pl.row_sum(e))
    return y


def softmax_numpy(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_tail_loop(x, y):
    for r in range(0, VM, VT):
        t = x[r:r + VT, :]
        e = np.exp(t - t.max(axis=1, keepdims=True))
        y[r:r + VT, :] = e / e.sum(axis=1, keepdims=True)


# --- a gather: embedding rows by token id ------------------------------------------------------

GT, GV, GD, G_TILE = 512, 4096, 512, 16


@pl.jit
def embed_gather(ids: pl.Tensor[[GT], pl.INT32], table: pl.Tensor[[GV, GD], pl.FP32],
                 y: pl.Out[pl.Tensor[[GT, GD], pl.FP32]]):
    for t0 in pl.parallel(0, GT, G_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="embed_rows"):
            for k in pl.range(G_TILE):
                row = pl.cast(pl.read(ids, [t0 + k]), pl.INDEX)
                y[t0 + k:t0 + k + 1, :] = table[row:row + 1, :]
    return y


def embed_numpy(ids, table):
    return table[ids]


def embed_loop(ids, table, y):
    for t0 in range(0, GT, G_TILE):
        y[t0:t0 + G_TILE, :] = table[ids[t0:t0 + G_TILE]]


# --- a data-dependent condition: padding tokens (id -1) get zero rows ---------------------------

PT, P_TILE = 512, 16


@pl.jit
def embed_padded(ids: pl.Tensor[[PT], pl.INT32], table: pl.Tensor[[GV, GD], pl.FP32],
                 y: pl.Out[pl.Tensor[[PT, GD], pl.FP32]]):
    for t0 in pl.parallel(0, PT, P_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="embed_padded"):
            for k in pl.range(P_TILE):
                row = pl.read(ids, [t0 + k])
                if row >= 0:
                    r = pl.cast(row, pl.INDEX)
                    y[t0 + k:t0 + k + 1, :] = table[r:r + 1, :]
                else:
                    y[t0 + k:t0 + k + 1, :] = pl.full([1, GD], dtype=pl.FP32, value=0.0)
    return y


def embed_padded_numpy(ids, table):
    return np.where((ids >= 0)[:, None], table[np.maximum(ids, 0)], np.float32(0.0))


def embed_padded_loop(ids, table, y):
    for t0 in range(0, PT, P_TILE):
        rows = ids[t0:t0 + P_TILE]
        tile = table[np.maximum(rows, 0)]
        tile[rows < 0] = 0.0
        y[t0:t0 + P_TILE, :] = tile


# --- dynamic shapes ----------------------------------------------------------------------------

DN = pl.dynamic("DN")
DC, DT = 512, 32


@pl.jit
def rms_dynamic(x: pl.Tensor[[DN, DC], pl.FP32], y: pl.Out[pl.Tensor[[DN, DC], pl.FP32]]):
    x.bind_dynamic(0, DN)
    y.bind_dynamic(0, DN)
    n = pl.tensor.dim(x, 0)
    for r in pl.parallel(0, n, DT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_rows"):
            t = x[r:r + DT, :]
            ss = pl.row_sum(pl.mul(t, t))
            inv = pl.rsqrt(pl.add(pl.mul(ss, 1.0 / DC), 1e-6))
            y[r:r + DT, :] = pl.row_expand_mul(t, inv)
    return y


def rms_numpy(x):
    ss = (x * x).sum(axis=1, keepdims=True)
    return x * (np.float32(1.0) / np.sqrt(ss * np.float32(1.0 / DC) + np.float32(1e-6)))


def rms_loop(x, y):
    for r in range(0, x.shape[0], DT):
        t = x[r:r + DT, :]
        ss = (t * t).sum(axis=1, keepdims=True)
        y[r:r + DT, :] = t * (np.float32(1.0) / np.sqrt(ss * np.float32(1.0 / DC) +
                                                         np.float32(1e-6)))


# --- pl.pipeline stages (the K loop of a matmul, double-buffered) -------------------------------

PM, PK, PN, P_TM, P_TN, P_TK = 256, 1024, 256, 64, 128, 128


@pl.jit
def matmul_pipeline(a: pl.Tensor[[PM, PK], pl.BF16], b: pl.Tensor[[PK, PN], pl.BF16],
                    c: pl.Out[pl.Tensor[[PM, PN], pl.FP32]]):
    for i in pl.parallel(0, PM, P_TM):
        for j in pl.parallel(0, PN, P_TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_pipe"):
                acc = pl.matmul(a[i:i + P_TM, 0:P_TK], b[0:P_TK, j:j + P_TN],
                                out_dtype=pl.FP32)
                for k in pl.pipeline(P_TK, PK, P_TK, stage=2):
                    acc = pl.matmul_acc(acc, a[i:i + P_TM, k:k + P_TK], b[k:k + P_TK, j:j + P_TN])
                c[i:i + P_TM, j:j + P_TN] = acc
    return c


def matmul_numpy(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


def matmul_pipeline_loop(a, b, c):
    for i in range(0, PM, P_TM):
        for j in range(0, PN, P_TN):
            acc = np.zeros((P_TM, P_TN), np.float32)
            for k in range(0, PK, P_TK):
                acc += a[i:i + P_TM, k:k + P_TK].astype(np.float32) @ \
                    b[k:k + P_TK, j:j + P_TN].astype(np.float32)
            c[i:i + P_TM, j:j + P_TN] = acc


# --- a mixed cube / vector region: matmul, bias, ReLU -----------------------------------------

XM, XK, XN, X_TM, X_TN = 512, 256, 512, 128, 128


@pl.jit
def matmul_bias_relu(a: pl.Tensor[[XM, XK], pl.BF16], b: pl.Tensor[[XK, XN], pl.BF16],
                     bias: pl.Tensor[[1, XN], pl.FP32],
                     c: pl.Out[pl.Tensor[[XM, XN], pl.FP32]]):
    for i in pl.parallel(0, XM, X_TM):
        for j in pl.parallel(0, XN, X_TN):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_bias_relu"):
                acc = pl.matmul(a[i:i + X_TM, :], b[:, j:j + X_TN], out_dtype=pl.FP32)
                biased = pl.col_expand_add(acc, bias[:, j:j + X_TN])
                c[i:i + X_TM, j:j + X_TN] = pl.relu(biased)
    return c


def mbr_numpy(a, b, bias):
    return np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, np.float32(0))


def mbr_loop(a, b, bias, c):
    for i in range(0, XM, X_TM):
        for j in range(0, XN, X_TN):
            acc = a[i:i + X_TM, :].astype(np.float32) @ b[:, j:j + X_TN].astype(np.float32)
            c[i:i + X_TM, j:j + X_TN] = np.maximum(acc + bias[:, j:j + X_TN], np.float32(0))


# --- a loop body of two regions: projection tile, then its residual add ----------------------

BM, BK, BN, B_TN = 64, 512, 2048, 256


@pl.jit
def proj_residual(h: pl.Tensor[[BM, BK], pl.BF16], w: pl.Tensor[[BK, BN], pl.BF16],
                  res: pl.Tensor[[BM, BN], pl.FP32], y: pl.Out[pl.Tensor[[BM, BN], pl.FP32]]):
    for ob in pl.range(BN // B_TN):
        o0 = ob * B_TN
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):
            acc = pl.matmul(h[:, :], w[:, o0:o0 + B_TN], out_dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="residual"):
            y[:, o0:o0 + B_TN] = pl.add(acc, res[:, o0:o0 + B_TN])
    return y


def proj_residual_numpy(h, w, res):
    return h.astype(np.float32) @ w.astype(np.float32) + res


def proj_residual_loop(h, w, res, y):
    hf = h.astype(np.float32)
    for o0 in range(0, BN, B_TN):
        acc = hf @ w[:, o0:o0 + B_TN].astype(np.float32)
        y[:, o0:o0 + B_TN] = acc + res[:, o0:o0 + B_TN]


# --- the cases -------------------------------------------------------------------------------

def cases(rng: np.random.Generator, config_ub_off, trace_cfg, trace_ub_off):
    """(key, label, sim, sim traced, numpy, loop, check) per kernel, as sim_bench.cases."""
    x = rng.standard_normal((AM, AN)).astype(np.float32)
    y = np.zeros_like(x)
    yield ("add_range", "add-scalar, inner pl.range (128x256)*",
           lambda: add_inner_range(x, y, config=config_ub_off),
           lambda: add_inner_range(x, y, config=trace_ub_off),
           lambda: x + np.float32(1.0), lambda: add_loop(x, y),
           lambda: (y, x + np.float32(1.0)))
    xs = rng.standard_normal((SM, SN)).astype(np.float32)
    ys = np.zeros_like(xs)
    yield ("scalar", "pl.Scalar params a*x+b fp32 1024x512 (64x256)",
           lambda: scale_shift(xs, 0.75, -0.5, ys),
           lambda: scale_shift(xs, 0.75, -0.5, ys, config=trace_cfg),
           lambda: scale_shift_numpy(xs, 0.75, -0.5),
           lambda: scale_shift_loop(xs, 0.75, -0.5, ys),
           lambda: (ys, scale_shift_numpy(xs, 0.75, -0.5)))
    xv = rng.standard_normal((VM, VN)).astype(np.float32)
    yv = np.zeros_like(xv)
    yield ("tail", "softmax 1000x256, valid_shape tail (64 rows)",
           lambda: softmax_tail(xv, yv), lambda: softmax_tail(xv, yv, config=trace_cfg),
           lambda: softmax_numpy(xv), lambda: softmax_tail_loop(xv, yv),
           lambda: (yv, softmax_numpy(xv)))
    ids = rng.integers(0, GV, GT).astype(np.int32)
    table = rng.standard_normal((GV, GD)).astype(np.float32)
    ye = np.zeros((GT, GD), np.float32)
    yield ("gather", "embedding gather 512 of 4096x512 (16 rows)",
           lambda: embed_gather(ids, table, ye),
           lambda: embed_gather(ids, table, ye, config=trace_cfg),
           lambda: embed_numpy(ids, table), lambda: embed_loop(ids, table, ye),
           lambda: (ye, embed_numpy(ids, table)))
    idp = rng.integers(0, GV, PT).astype(np.int32)
    idp[rng.random(PT) < 0.25] = -1  # a quarter of the tokens are padding
    yp = np.zeros((PT, GD), np.float32)
    yield ("padded", "gather with padding ids (if row >= 0), 512 of 4096x512",
           lambda: embed_padded(idp, table, yp),
           lambda: embed_padded(idp, table, yp, config=trace_cfg),
           lambda: embed_padded_numpy(idp, table), lambda: embed_padded_loop(idp, table, yp),
           lambda: (yp, embed_padded_numpy(idp, table)))
    xd = rng.standard_normal((768, DC)).astype(np.float32)
    yd = np.zeros_like(xd)
    yield ("dynamic", "rms rows, dynamic N=768x512 (32 rows)",
           lambda: rms_dynamic(xd, yd), lambda: rms_dynamic(xd, yd, config=trace_cfg),
           lambda: rms_numpy(xd), lambda: rms_loop(xd, yd), lambda: (yd, rms_numpy(xd)))
    a = rng.standard_normal((PM, PK)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((PK, PN)).astype(ml_dtypes.bfloat16)
    c = np.zeros((PM, PN), np.float32)
    yield ("pipeline", "matmul, pl.pipeline K loop 256x1024x256",
           lambda: matmul_pipeline(a, b, c), lambda: matmul_pipeline(a, b, c, config=trace_cfg),
           lambda: matmul_numpy(a, b), lambda: matmul_pipeline_loop(a, b, c),
           lambda: (c, matmul_numpy(a, b)))
    am = rng.standard_normal((XM, XK)).astype(ml_dtypes.bfloat16)
    bm = rng.standard_normal((XK, XN)).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal((1, XN)).astype(np.float32)
    cm = np.zeros((XM, XN), np.float32)
    yield ("mixed", "matmul+bias+relu, cube/vector 512x256x512",
           lambda: matmul_bias_relu(am, bm, bias, cm),
           lambda: matmul_bias_relu(am, bm, bias, cm, config=trace_cfg),
           lambda: mbr_numpy(am, bm, bias), lambda: mbr_loop(am, bm, bias, cm),
           lambda: (cm, mbr_numpy(am, bm, bias)))
    h = rng.standard_normal((BM, BK)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((BK, BN)).astype(ml_dtypes.bfloat16)
    res = rng.standard_normal((BM, BN)).astype(np.float32)
    yb = np.zeros((BM, BN), np.float32)
    yield ("two_regions", "proj tile + residual, 2 regions per pl.range",
           lambda: proj_residual(h, w, res, yb),
           lambda: proj_residual(h, w, res, yb, config=trace_cfg),
           lambda: proj_residual_numpy(h, w, res), lambda: proj_residual_loop(h, w, res, yb),
           lambda: (yb, proj_residual_numpy(h, w, res)))
