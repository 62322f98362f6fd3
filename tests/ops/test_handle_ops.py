"""Ops returning opaque handles: pl.tile.alloc / pl.tensor.alloc (a pl.Ptr) and the
pl.prefetch family (context, event, session, wait): values unchanged, the protocol and
the source's shape checked, errors located."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InvalidOperationError, SimulationError
from pypto.ir.equal import assert_structural_equal
from pypto.ir.printer import print_program
from pypto.ir.types import HandleType
from pypto.ops.handles import Allocation
from tests.frontend.frontend_helpers import assert_at
from tests.ops.helpers import attr, impl, lit, rule, scalar

N = 128


@pl.jit
def warm_then_copy(a: pl.Tensor[[1, N], pl.FP32], b: pl.Tensor[[N], pl.FP32],
                   out: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="warm"):
        ctx = pl.prefetch.make_context()
        ev = pl.prefetch.async_prefetch(a, ctx)
        pl.prefetch.async_prefetch(b, ctx)
        session = pl.prefetch.session(ctx)
        done = pl.prefetch.wait(ev, session)
        ptr = pl.tile.alloc(pl.Mem.Vec, 4 * N)
        t = pl.load(a, [0, 0], [1, N])
        out = pl.store(t, [0, 0], out)
    return out


def test_a_prefetch_leaves_every_value_as_it_was():
    a = np.arange(N, dtype=np.float32).reshape(1, N)
    b = np.ones(N, np.float32)
    out = np.zeros_like(a)
    warm_then_copy(a, b, out)
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(b, np.ones(N, np.float32))


def test_handles_are_typed_and_round_trip_through_the_text_form():
    prog = warm_then_copy.compile().program
    text = print_program(prog)
    for line in ("ctx: pl.PrefetchAsyncContext = pl.prefetch.make_context()",
                 "ev: pl.AsyncEvent = pl.prefetch.async_prefetch(a, ctx)",
                 "session: pl.AsyncSession = pl.prefetch.session(ctx)",
                 "done: pl.Scalar[pl.BOOL] = pl.prefetch.wait(ev, session)",
                 "ptr: pl.Ptr = pl.tile.alloc(pl.MemorySpace.Vec, 512)"):
        assert line in text, text
    assert_structural_equal(pl.parse(text), prog)


def test_alloc_returns_a_ptr_recording_space_and_size():
    assert rule("tile.alloc", attr(pl.Mem.Mat), lit(1024)) == HandleType("Ptr")
    assert rule("tensor.alloc", attr(pl.Mem.Vec), scalar(pl.INT64)) == HandleType("Ptr")
    a = impl("tile.alloc", pl.Mem.Mat, 1024, pinned=True)
    assert isinstance(a, Allocation) and a.memory_space is pl.Mem.Mat and a.size == 1024
    assert str(pl.Ptr) == "pl.Ptr" and pl.PtrType is pl.Ptr


@pl.jit
def bad_alloc_size(a: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ptr = pl.tile.alloc(pl.Mem.Vec, 0)  # ERR:size
        out = pl.store(pl.load(a, [0, 0], [1, N]), [0, 0], out)
    return out


@pl.jit
def prefetch_2d(a: pl.Tensor[[4, 32], pl.FP32], out: pl.Out[pl.Tensor[[4, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(a, ctx)  # ERR:flat
        out = pl.store(pl.load(a, [0, 0], [4, 32]), [0, 0], out)
    return out


@pl.jit
def wait_on_context(a: pl.Tensor[[N], pl.FP32], out: pl.Out[pl.Tensor[[N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ctx = pl.prefetch.make_context()
        ev = pl.prefetch.async_prefetch(a, ctx)
        pl.prefetch.wait(ev, ctx)  # ERR:session
        out = pl.store(pl.load(a, [0], [N]), [0], out)
    return out


@pl.jit
def tensor_as_context(a: pl.Tensor[[N], pl.FP32], out: pl.Out[pl.Tensor[[N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.prefetch.async_prefetch(a, a)  # ERR:ctx
        out = pl.store(pl.load(a, [0], [N]), [0], out)
    return out


@pytest.mark.parametrize("kernel, match, tag, token", [
    (bad_alloc_size, "must be a positive integer, got 0", "size", "0)"),
    (prefetch_2d, "flat contiguous logical 1D GM region", "flat", "a, ctx"),
    (wait_on_context, "expects session to be a AsyncSession", "session", "ctx)"),
    (tensor_as_context, "expects ctx to be a PrefetchAsyncContext", "ctx", "a)"),
])
def test_bad_handle_arguments_are_located(kernel, match, tag, token):
    with pytest.raises(InvalidOperationError) as info:
        kernel.compile()
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, tag, token)


@pl.jit
def crossed_sessions(a: pl.Tensor[[N], pl.FP32], out: pl.Out[pl.Tensor[[N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="crossed"):
        c1 = pl.prefetch.make_context()
        c2 = pl.prefetch.make_context()
        ev = pl.prefetch.async_prefetch(a, c1)
        pl.prefetch.wait(ev, pl.prefetch.session(c2))  # ERR:crossed
        out = pl.store(pl.load(a, [0], [N]), [0], out)
    return out


def test_waiting_in_another_contexts_session_is_a_fault():
    a = np.ones(N, np.float32)
    with pytest.raises(SimulationError) as info:
        crossed_sessions(a, np.zeros_like(a))
    assert "started on another prefetch context" in info.value.message
    assert_at(info.value, __file__, "crossed", "pl.prefetch.wait")
