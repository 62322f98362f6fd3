"""Cells used by the workbench tests (the text of `%%pypto` cells) and helpers."""
import pytest


def simulator_available() -> bool:
    try:
        from pypto.golden import run_jit  # noqa: F401
        from pypto.sim import simulate  # noqa: F401
    except ImportError:
        return False
    return True


needs_sim = pytest.mark.skipif(not simulator_available(), reason="pypto.sim not available yet")


MIXED = '''
import pypto.language as pl

@pl.jit
def mlp(a: pl.Tensor[[128, 64], pl.FP16], w: pl.Tensor[[64, 128], pl.FP16],
        y: pl.Out[pl.Tensor[[128, 128], pl.FP16]], z: pl.Out[pl.Tensor[[128, 128], pl.FP16]]):
    for i in pl.parallel(0, 128, 64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_act",
                   optimizations=[pl.split(pl.SplitMode.UP_DOWN)]) as t1:
            ta = a[i:i+64, :]
            acc = pl.matmul(ta, w)
            y[i:i+64, :] = pl.exp(acc)
    for k in pl.pipeline(0, 128, 32, stage=2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="post", deps=[t1]):
            t = y[k:k+32, :]
            z[k:k+32, :] = pl.add(t, t)
    for b in pl.spmd(4, name_hint="sq"):
        u = z[b*32:b*32+32, :]
        z[b*32:b*32+32, :] = pl.mul(u, u)
    return y, z
'''

# Writes rows 0:48 of a 64-row pl.Out: rows 48:64 are never written.
PARTIAL = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def partial(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for r in pl.parallel(0, 48, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            t = x[r:r+16, :]
            y[r:r+16, :] = pl.exp(t)
    return y

specs = [TensorSpec("x", [64, 64], np.float32,
                    init_value=lambda: np.random.default_rng(0).standard_normal((64, 64))),
         TensorSpec("y", [64, 64], np.float32, is_output=True)]

def golden(v):
    v["y"][:] = np.exp(v["x"])
'''

BAD = '''
import pypto.language as pl

@pl.jit
def broken(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:64, :] = pl.exp(undefined_name)
    return y
'''

# Writes every row of a 64-row pl.Out in four tasks: passes.
FULL = PARTIAL.replace("pl.parallel(0, 48, 16)", "pl.parallel(0, 64, 16)")

# MIXED with its inputs: a mixed split region, a pl.pipeline(stage=2) loop with deps=,
# an SPMD region (run without a golden: only the trace matters)
MIXED_RUN = MIXED + '''
import numpy as np
from pypto.golden import TensorSpec

specs = [TensorSpec("a", [128, 64], np.float16, init_value=0.01),
         TensorSpec("w", [64, 128], np.float16, init_value=0.01),
         TensorSpec("y", [128, 128], np.float16, is_output=True),
         TensorSpec("z", [128, 128], np.float16, is_output=True)]
'''

# Two vector tasks through an orchestration tensor `tmp` (tagged for the args dump), a
# third one beside them: `scale` (task 0, 64x64) -> `shift` (task 2, 64x64) is the chain
# that sets the makespan; `side` (task 1, 16x64) runs on another core at the same time.
CHAIN = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def chain(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
          z: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    pl.dump_tag(tmp)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        tmp[:, :] = pl.mul(pl.exp(x[:, :]), 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="side"):
        z[:, :] = pl.add(x[0:16, :], 1.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift"):
        y[:, :] = pl.add(tmp[:, :], 1.0)
    return y, z

specs = [TensorSpec("x", [64, 64], np.float32,
                    init_value=lambda: np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
                    / 4096),
         TensorSpec("y", [64, 64], np.float32, is_output=True),
         TensorSpec("z", [16, 64], np.float32, is_output=True)]

def golden(v):
    v["y"][:] = np.exp(v["x"]) * 2 + 1
    v["z"][:] = v["x"][0:16] + 1
'''
