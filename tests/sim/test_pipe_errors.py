"""Every refusal of the cross-core pipe ops and of core groups, with its message and its
place: argument errors when the kernel compiles, protocol faults when the group runs."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InvalidOperationError, ScopeError, SimulationError
from tests.frontend.frontend_helpers import assert_at

D = 16
SLOT = D * D * 4
F32 = pl.FP32
T = pl.Tensor[[D, D], F32]
T3 = pl.Tensor[[2, D, D], F32]


def _cube_only(kind: str):
    """One AIC function whose pipe call is wrong in the way `kind` says."""
    @pl.program
    class Bad:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T, a3: T3, out: pl.Out[T]) -> T:
            if kind == "tensor":
                pl.tpush_to_aiv(a, split=0)  # ERR:tensor
            if kind == "rank":
                pl.tpush_to_aiv(pl.load(a3, [0, 0, 0], [2, D, D]), split=1)  # ERR:rank
            if kind == "local":
                pl.aic_initialize_pipe(dir_mask=1, slot_size=SLOT, slot_num=2,
                                       local_slot_num=4)  # ERR:local
            if kind == "buf":
                pl.aic_initialize_pipe(pl.load(a, [0, 0], [D, D]),  # ERR:buf
                                       dir_mask=1, slot_size=SLOT)
            if kind == "name":
                pl.reserve_buffer(name="", size=SLOT)  # ERR:name
            if kind == "size":
                pl.reserve_buffer(name="ring", size=0)  # ERR:size
            if kind == "free":
                t: pl.Tile[[D, D], F32, pl.Mem.Mat] = pl.tpop_from_aiv()
                pl.tfree_to_aiv(t, split=1)  # ERR:free
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T, a3: T3, out: pl.Out[T]) -> T:
            out = self.cube(a, a3, out)
            return out
    return Bad


@pytest.mark.parametrize("kind, match, token", [
    ("tensor", "pl.tpush_to_aiv sends an on-chip tile", "a,"),
    ("rank", "with split=1 divides a 2-D tile between the AIV lanes", "pl.load"),
    ("local", "local_slot_num (4) must not exceed slot_num (2)", "4"),
    ("buf", "'c2v_consumer_buf' is a buffer base address (an integer)", "pl.load"),
    ("name", "name must be a non-empty string", '""'),
    ("size", "'size' must be an integer >= 1, got 0", "0"),
    ("free", "takes its split from the tpop that produced the tile", "1"),
])
def test_bad_pipe_arguments_are_located(kind, match, token):
    with pytest.raises(InvalidOperationError) as info:
        _cube_only(kind).compile()
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, kind, token)


def _group(kind: str):
    """A C2V pair whose run breaks the pipe protocol in the way `kind` says."""
    @pl.program
    class Broken:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T, big: pl.Tensor[[2 * D, D], F32], out: pl.Out[T]):
            peer = pl.import_peer_buffer(name="ring", peer_func="vec")
            pl.aic_initialize_pipe(peer, dir_mask=1, slot_size=SLOT, id=0)
            if kind == "twopipes":
                pl.aic_initialize_pipe(peer, dir_mask=1, slot_size=SLOT, id=1)
            if kind == "slot":
                pl.tpush_to_aiv(pl.load(big, [0, 0], [2 * D, D]), split=0)  # ERR:slot
            else:
                pl.tpush_to_aiv(pl.load(a, [0, 0], [D, D]), split=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, a: T, big: pl.Tensor[[2 * D, D], F32], out: pl.Out[T]) -> T:
            ring = pl.reserve_buffer(name="ring", size=8 * SLOT)
            pl.aiv_initialize_pipe(ring, dir_mask=1, slot_size=SLOT, id=0)
            if kind == "twopipes":
                pl.aiv_initialize_pipe(ring, dir_mask=1, slot_size=SLOT, id=1)
            if kind == "shape":
                t: pl.Tile[[D // 2, D], F32, pl.Mem.Vec] = pl.tpop_from_aic(id=0)  # ERR:shape
            else:
                t: pl.Tile[[D, D], F32, pl.Mem.Vec] = pl.tpop_from_aic(id=0)
            out = pl.store(t, [0, 0], out)
            pl.tfree_to_aic(t)  # ERR:twopipes
            return out

        @pl.function(type=pl.FunctionType.Group)
        def group(self, a: T, big: pl.Tensor[[2 * D, D], F32], out: pl.Out[T]) -> T:
            self.cube(a, big, out)
            result = self.vec(a, big, out)
            return result

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T, big: pl.Tensor[[2 * D, D], F32], out: pl.Out[T]) -> T:
            out = self.group(a, big, out)
            return out
    return Broken


@pytest.mark.parametrize("kind, match, token", [
    ("slot", "pushes a 2048-byte tile into C2V pipe 0, whose slots hold 1024 bytes",
     "pl.tpush_to_aiv"),
    ("shape", "declares a [8, 16] tile, but C2V pipe 0 delivers [16, 16] to this core",
     "pl.tpop_from_aic"),
    ("twopipes", "pl.tfree_to_aic without id=: C2V pipes [0, 1] are open", "pl.tfree_to_aic"),
])
def test_pipe_protocol_faults_are_located(kind, match, token):
    a = np.ones((D, D), np.float32)
    with pytest.raises(SimulationError) as info:
        _group(kind)(a, np.ones((2 * D, D), np.float32), np.zeros_like(a))
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, kind, token)


@pl.program
class NotAMember:
    @pl.function(type=pl.FunctionType.InCore)
    def plain(self, a: T, out: pl.Out[T]) -> T:
        return pl.store(pl.load(a, [0, 0], [D, D]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, out: pl.Out[T]) -> T:
        result = self.plain(a, out)  # ERR:member
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.group(a, out)
        return out


def test_a_group_runs_only_aic_and_aiv_functions():
    with pytest.raises(ScopeError) as info:
        NotAMember.compile()
    assert "a Group function runs AIC and AIV functions; plain is neither" in \
        info.value.message
    assert_at(info.value, __file__, "member", "self.plain")


@pl.program
class BusyGroup:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T]) -> T:
        return pl.store(pl.load(a, [0, 0], [D, D]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, out: pl.Out[T]) -> T:
        t = pl.load(a, [0, 0], [D, D])  # ERR:busy
        result = self.vec(a, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.group(a, out)
        return out


def test_a_group_holds_only_its_members_calls():
    a = np.ones((D, D), np.float32)
    with pytest.raises(SimulationError) as info:
        BusyGroup(a, np.zeros_like(a))
    assert "a Group function runs its AIC and AIV functions; it holds no other statements" \
        in info.value.message
    assert_at(info.value, __file__, "busy", "t =")
