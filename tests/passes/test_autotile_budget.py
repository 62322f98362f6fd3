"""The on-chip budget as the real compiler's AutoTileMatmulL0 leaves it: an oversized
matmul output drained per sub-tile, a rint downcast feeding a matmul folded into the
cube's Acc -> Mat drain, a batched matmul loaded per batch when it overflows L1; and
manual L0 tiles still checked as written."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.ir import dtypes
from pypto.passes.autotile import output_subtile
from pypto.passes.regions import RegionInfo


def _only(compiled) -> RegionInfo:
    (r,) = compiled.regions
    return r


@pl.jit
def big_direct(a: pl.Tensor[[256, 128], pl.FP32], b: pl.Tensor[[128, 256], pl.FP32],
               out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="big_direct"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)  # [256, 256] FP32 = 256 KiB > L0C
        out = pl.assemble(out, c, [0, 0])
    return out


@pl.jit
def big_chain(a: pl.Tensor[[256, 64], pl.BF16], b: pl.Tensor[[64, 256], pl.BF16],
              e: pl.Tensor[[256, 64], pl.BF16], out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="big_chain"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")  # folded: FIXPIPE writes bf16 into Mat
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


@pl.jit
def big_chain_round(a: pl.Tensor[[256, 64], pl.BF16], b: pl.Tensor[[64, 256], pl.BF16],
                    e: pl.Tensor[[256, 64], pl.BF16],
                    out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="big_chain_round"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16)  # default "round" (ties away): a vector tcvt
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


@pl.jit
def big_epilogue(a: pl.Tensor[[256, 128], pl.FP32], b: pl.Tensor[[128, 256], pl.FP32],
                 out: pl.Out[pl.Tensor[[256, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="big_epilogue"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, pl.exp(c), [0, 0])  # a vector use: the Acc is whole
    return out


@pl.jit
def manual_l0(a: pl.Tensor[[256, 256], pl.FP16], b: pl.Tensor[[256, 64], pl.FP16],
              out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="manual_l0"):
        am = pl.load(a, [0, 0], [256, 256], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [256, 64], target_memory=pl.Mem.Mat)
        al = pl.move(am, target_memory=pl.Mem.Left)  # 128 KiB in a 64 KiB L0A
        bl = pl.move(bm, target_memory=pl.Mem.Right)
        c = pl.tile.matmul(al, bl)
        out = pl.store(c, [0, 0], out)
    return out


@pl.jit
def batched(a: pl.Tensor[[4, 64, 128], pl.FP32], b: pl.Tensor[[4, 512, 128], pl.FP32],
            c: pl.Out[pl.Tensor[[4, 64, 512], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="batched"):
        cm = pl.matmul(a, b, b_trans=True, out_dtype=pl.FP32)  # 1.1 MiB of operands
        c = pl.assemble(c, cm, [0, 0, 0])
    return c


def test_subtile_chooser_fits_l0c_with_int32_row_padding():
    assert output_subtile(256, 256, dtypes.FP32, 128 * 1024) == (256, 128)
    assert output_subtile(128, 128, dtypes.FP32, 128 * 1024) == (128, 128)
    m, n = output_subtile(16, 1152, dtypes.INT32, 128 * 1024)
    assert 32 * n * 4 <= 128 * 1024 and m == 16 and n % 16 == 0  # M=16 occupies 32 rows


def test_oversized_direct_store_output_keeps_one_subtile_in_l0c():
    r = _only(big_direct.compile())
    assert r.classification == "cube"
    assert r.l0c_bytes == 256 * 128 * 4 and r.over_budget == ()
    a = np.random.default_rng(0).standard_normal((256, 128)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((128, 256)).astype(np.float32)
    out = np.zeros((256, 256), np.float32)
    big_direct(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)


def test_rint_downcast_into_a_matmul_is_folded_onto_the_cube():
    r = _only(big_chain.compile())
    assert r.classification == "cube" and r.pipe is None
    assert r.ub_bytes == 0 and r.over_budget == ()
    space = {b.name: b.space for b in big_chain.compile().analyses["buffers"]["big_chain_big_chain"
                                                                           ].buffers}
    assert space["cb"] == "Mat"


def test_default_round_cast_stays_a_vector_op():
    r = _only(big_chain_round.compile())
    assert r.classification == "mixed"
    assert r.pipe is not None and r.pipe.directions == ("C->V", "V->C")


def test_a_vector_use_keeps_the_whole_accumulator_and_fails_its_budget():
    r = _only(big_epilogue.compile())
    assert r.l0c_bytes == 256 * 256 * 4 and "Acc" in r.over_budget
    a = np.ones((256, 128), np.float32)
    b = np.ones((128, 256), np.float32)
    with pytest.raises(SimulationError, match=r"'big_epilogue' .* needs about 262,144 bytes") as e:
        big_epilogue(a, b, np.zeros((256, 256), np.float32))
    assert "test_autotile_budget.py:58:9" in str(e.value)  # at the matmul


def test_manual_l0_operands_are_checked_as_written():
    r = _only(manual_l0.compile())
    assert "Left" in r.over_budget
    with pytest.raises(SimulationError, match=r"bytes of L0A \(Left\)"):
        manual_l0(np.ones((256, 256), np.float16), np.ones((256, 64), np.float16),
                  np.zeros((256, 64), np.float32))


def test_batched_matmul_over_l1_is_staged_one_batch_at_a_time():
    r = _only(batched.compile())
    # one batch of each operand in Mat (32 KiB + 256 KiB), one [64, 512] FP32 page in L0C
    assert r.l1_bytes == 64 * 128 * 4 + 512 * 128 * 4
    assert r.l0c_bytes == 64 * 512 * 4 and r.over_budget == ()
