"""Cross-core pipes of a core group (pl.FunctionType.Group running an AIC and an AIV
function): tiles cross in order, a push waits for a free slot, two AIV lanes split or
share a slot, and every way of never finishing - a pop no push answers, a full ring
nobody frees, a wait no set answers - is a located deadlock fault, not a hang."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InvalidOperationError, SimulationError
from pypto.ir.equal import assert_structural_equal
from pypto.ir.printer import print_program
from tests.frontend.frontend_helpers import assert_at

D = 16
SLOT = D * D * 4
F32 = pl.FP32
T = pl.Tensor[[D, D], F32]


@pl.program
class TwoPipesV2C:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, b: T, out: pl.Out[T]):
        p0 = pl.import_peer_buffer(name="ring0", peer_func="cube")
        p1 = pl.import_peer_buffer(name="ring1", peer_func="cube")
        pl.aiv_initialize_pipe(0, p0, dir_mask=2, slot_size=SLOT, id=0)
        pl.aiv_initialize_pipe(0, p1, dir_mask=2, slot_size=SLOT, id=1)
        x = pl.load(a, [0, 0], [D, D])
        y = pl.load(b, [0, 0], [D, D])
        pl.tpush_to_aic(pl.sub(x, y), split=0, id=1)  # pushed first, popped second
        pl.tpush_to_aic(pl.add(x, y), split=0, id=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, b: T, out: pl.Out[T]) -> T:
        r0 = pl.reserve_buffer(name="ring0", size=8 * SLOT)
        r1 = pl.reserve_buffer(name="ring1", size=8 * SLOT)
        pl.aic_initialize_pipe(0, r0, dir_mask=2, slot_size=SLOT, id=0)
        pl.aic_initialize_pipe(0, r1, dir_mask=2, slot_size=SLOT, id=1)
        s: pl.Tile[[D, D], F32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
        d: pl.Tile[[D, D], F32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=1)
        r = pl.matmul(pl.move(s, target_memory=pl.Mem.Left),
                      pl.move(d, target_memory=pl.Mem.Right))
        pl.tfree_to_aiv(s, id=0)
        pl.tfree_to_aiv(d, id=1)
        return pl.store(r, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, b: T, out: pl.Out[T]) -> T:
        result = self.cube(a, b, out)  # the cube comes first: it waits for the vector side
        self.vec(a, b, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, b: T, out: pl.Out[T]) -> T:
        out = self.group(a, b, out)
        return out


def _ab(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((D, D)).astype(np.float32),
            rng.standard_normal((D, D)).astype(np.float32))


def test_two_v2c_pipes_keep_their_ids_apart():
    a, b = _ab()
    out = np.zeros((D, D), np.float32)
    TwoPipesV2C(a, b, out)
    np.testing.assert_allclose(out, (a + b) @ (a - b), rtol=1e-5, atol=1e-5)


def test_a_group_program_round_trips_through_the_text_form():
    prog = TwoPipesV2C.compile().program
    text = print_program(prog)
    assert "pl.tpop_from_aiv(shape=[16, 16], dtype=pl.FP32, id=1)" in text
    assert_structural_equal(pl.parse(text), prog)


def _c2v(n_tiles: int, slot_num: int, free: bool = True):
    @pl.program
    class C2V:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: pl.Tensor[[n_tiles * D, D], F32], w: T,
                 out: pl.Out[pl.Tensor[[n_tiles * D, D], F32]]):
            peer = pl.import_peer_buffer(name="ring", peer_func="vec")
            pl.aic_initialize_pipe(peer, dir_mask=1, slot_size=SLOT, slot_num=slot_num)
            wr = pl.move(pl.load(w, [0, 0], [D, D], target_memory=pl.Mem.Mat),
                         target_memory=pl.Mem.Right)
            for i in pl.range(n_tiles):
                x = pl.move(pl.load(a, [i * D, 0], [D, D], target_memory=pl.Mem.Mat),
                            target_memory=pl.Mem.Left)
                pl.tpush_to_aiv(pl.matmul(x, wr), split=0)  # ERR:full

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, a: pl.Tensor[[n_tiles * D, D], F32], w: T,
                out: pl.Out[pl.Tensor[[n_tiles * D, D], F32]]
                ) -> pl.Tensor[[n_tiles * D, D], F32]:
            ring = pl.reserve_buffer(name="ring", size=slot_num * SLOT)
            pl.aiv_initialize_pipe(ring, dir_mask=1, slot_size=SLOT, slot_num=slot_num)
            for i in pl.range(n_tiles):
                t: pl.Tile[[D, D], F32, pl.Mem.Vec] = pl.tpop_from_aic()
                out = pl.store(pl.add(t, 1.0), [i * D, 0], out)
                if free:
                    pl.tfree_to_aic(t)
            return out

        @pl.function(type=pl.FunctionType.Group)
        def group(self, a: pl.Tensor[[n_tiles * D, D], F32], w: T,
                  out: pl.Out[pl.Tensor[[n_tiles * D, D], F32]]
                  ) -> pl.Tensor[[n_tiles * D, D], F32]:
            self.cube(a, w, out)
            result = self.vec(a, w, out)
            return result

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[n_tiles * D, D], F32], w: T,
                 out: pl.Out[pl.Tensor[[n_tiles * D, D], F32]]
                 ) -> pl.Tensor[[n_tiles * D, D], F32]:
            out = self.group(a, w, out)
            return out
    return C2V


def test_a_producer_runs_ahead_only_as_far_as_the_ring_is_deep():
    n = 5
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n * D, D)).astype(np.float32)
    w = rng.standard_normal((D, D)).astype(np.float32)
    out = np.zeros((n * D, D), np.float32)
    _c2v(n, slot_num=2)(a, w, out)
    np.testing.assert_allclose(out, a @ w + 1, rtol=1e-5, atol=1e-5)


def test_a_ring_nobody_frees_deadlocks_the_producer():
    n = 3
    a = np.ones((n * D, D), np.float32)
    w = np.ones((D, D), np.float32)
    with pytest.raises(SimulationError) as info:
        _c2v(n, slot_num=2, free=False)(a, w, np.zeros((n * D, D), np.float32))
    err = info.value
    assert "deadlock in the core group" in err.message
    assert "cube (AIC) waits for a free slot of C2V pipe 0 (all 2 occupied)" in err.message
    assert "vec (AIV lane 0) waits for a tile in C2V pipe 0" in err.message
    assert_at(err, __file__, "full", "pl.tpush_to_aiv")


@pl.program
class NoProducer:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, out: pl.Out[T]):
        peer = pl.import_peer_buffer(name="ring", peer_func="vec")
        pl.aic_initialize_pipe(peer, dir_mask=1, slot_size=SLOT)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T]) -> T:
        ring = pl.reserve_buffer(name="ring", size=8 * SLOT)
        pl.aiv_initialize_pipe(ring, dir_mask=1, slot_size=SLOT)
        t: pl.Tile[[D, D], F32, pl.Mem.Vec] = pl.tpop_from_aic()  # ERR:empty
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, out: pl.Out[T]) -> T:
        self.cube(a, out)
        result = self.vec(a, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.group(a, out)
        return out


def test_a_pop_no_push_answers_is_a_located_deadlock():
    a = np.ones((D, D), np.float32)
    with pytest.raises(SimulationError) as info:
        NoProducer(a, np.zeros_like(a))
    err = info.value
    assert "vec (AIV lane 0) waits for a tile in C2V pipe 0" in err.message
    assert "cube (AIC) has finished" in err.message and "hangs" in err.message
    assert_at(err, __file__, "empty", "pl.tpop_from_aic")


def _dual(lane_value: bool):
    @pl.program
    class Dual:
        @pl.function(type=pl.FunctionType.AIV, attrs={"dual_aiv_dispatch": True})
        def vec(self, a: T, out: pl.Out[T]):
            peer = pl.import_peer_buffer(name="ring", peer_func="cube")
            pl.aiv_initialize_pipe(0, peer, dir_mask=2, slot_size=SLOT)
            x = pl.load(a, [0, 0], [D, D])
            if lane_value:
                lane = pl.tile.get_subblock_idx()
                x = pl.add(x, pl.cast(lane, F32))
            pl.tpush_to_aic(x, split=0)  # ERR:dual

        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T, out: pl.Out[T]) -> T:
            ring = pl.reserve_buffer(name="ring", size=8 * SLOT)
            pl.aic_initialize_pipe(0, ring, dir_mask=2, slot_size=SLOT)
            t: pl.Tile[[D, D], F32, pl.Mem.Mat] = pl.tpop_from_aiv()
            r = pl.matmul(pl.move(t, target_memory=pl.Mem.Left),
                          pl.move(t, target_memory=pl.Mem.Right))
            pl.tfree_to_aiv(t)
            return pl.store(r, [0, 0], out)

        @pl.function(type=pl.FunctionType.Group)
        def group(self, a: T, out: pl.Out[T]) -> T:
            result = self.cube(a, out)
            self.vec(a, out)
            return result

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T, out: pl.Out[T]) -> T:
            out = self.group(a, out)
            return out
    return Dual


def test_two_lanes_pushing_one_unsplit_slot_must_agree():
    a, _ = _ab(2)
    out = np.zeros((D, D), np.float32)
    _dual(False)(a, out)
    np.testing.assert_allclose(out, a @ a, rtol=1e-5, atol=1e-5)
    with pytest.raises(SimulationError) as info:
        _dual(True)(a, np.zeros((D, D), np.float32))
    assert "the two AIV lanes push different tiles into one slot" in info.value.message
    assert_at(info.value, __file__, "dual", "pl.tpush_to_aic")


@pl.program
class SplitC2V:
    @pl.function(type=pl.FunctionType.AIC, attrs={"split": pl.SplitMode.UP_DOWN})
    def cube(self, a: T, w: T, out: pl.Out[T]):
        peer = pl.import_peer_buffer(name="ring", peer_func="vec")
        pl.aic_initialize_pipe(peer, dir_mask=1, slot_size=SLOT)
        r = pl.matmul(pl.move(pl.load(a, [0, 0], [D, D], target_memory=pl.Mem.Mat),
                              target_memory=pl.Mem.Left),
                      pl.move(pl.load(w, [0, 0], [D, D], target_memory=pl.Mem.Mat),
                              target_memory=pl.Mem.Right))
        pl.tpush_to_aiv(r, split=1)

    @pl.function(type=pl.FunctionType.AIV, attrs={"split": pl.SplitMode.UP_DOWN})
    def vec(self, a: T, w: T, out: pl.Out[T]) -> T:
        ring = pl.reserve_buffer(name="ring", size=8 * SLOT)
        pl.aiv_initialize_pipe(ring, dir_mask=1, slot_size=SLOT)
        lane = pl.tile.get_subblock_idx()
        half: pl.Tile[[D // 2, D], F32, pl.Mem.Vec] = pl.tpop_from_aic(split=1)
        out = pl.store(pl.mul(half, 2.0), [lane * (D // 2), 0], out)
        pl.tfree_to_aic(half)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, w: T, out: pl.Out[T]) -> T:
        self.cube(a, w, out)
        result = self.vec(a, w, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, w: T, out: pl.Out[T]) -> T:
        out = self.group(a, w, out)
        return out


def test_each_aiv_lane_pops_its_half_of_a_split_tile():
    a, w = _ab(3)
    out = np.zeros((D, D), np.float32)
    SplitC2V(a, w, out)
    np.testing.assert_allclose(out, 2 * (a @ w), rtol=1e-5, atol=1e-5)


@pl.program
class NarrowPop:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, out: pl.Out[T], rows: pl.Scalar[pl.INDEX]):
        peer = pl.import_peer_buffer(name="ring", peer_func="vec")
        pl.aic_initialize_pipe(peer, dir_mask=1, slot_size=SLOT)
        pl.tpush_to_aiv(pl.load(a, [0, 0], [D, D]), split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T], rows: pl.Scalar[pl.INDEX]) -> T:
        # no slot_num: any ring size; pl.system.AUTO: the compiler picks the base
        ring = pl.system.reserve_buffer(name="ring", size=4 * SLOT, base=pl.system.AUTO)
        pl.aiv_initialize_pipe(ring, dir_mask=1, slot_size=SLOT)
        # the annotation's run-time valid shape narrows the popped tile
        t: pl.Tile[[D, D], F32, pl.Mem.Vec, pl.TileView(valid_shape=[rows, D])] = \
            pl.tpop_from_aic()
        out = pl.store(pl.add(t, 1.0), [0, 0], out)
        pl.tfree_to_aic(t)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, out: pl.Out[T], rows: pl.Scalar[pl.INDEX]) -> T:
        self.cube(a, out, rows)
        result = self.vec(a, out, rows)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T], rows: pl.Scalar[pl.INDEX]) -> T:
        out = self.group(a, out, rows)
        return out


def test_a_popped_tile_takes_the_valid_shape_its_annotation_declares():
    assert pl.system.AUTO == pl.AUTO == -1
    a, _ = _ab(5)
    out = np.full((D, D), -7.0, np.float32)
    NarrowPop(a, out, 5)
    np.testing.assert_allclose(out[:5], a[:5] + 1, rtol=1e-6)
    # never written: a direct call's pl.Out keeps the caller's contents (out_start)
    assert (out[5:] == -7.0).all()


@pl.program
class Events:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, xfer: pl.InOut[T], out: pl.Out[T]) -> T:
        pl.system.sync_wait(2, pipe=pl.PipeType.MTE2)  # waits for the vector side
        x = pl.move(pl.load(xfer, [0, 0], [D, D], target_memory=pl.Mem.Mat),
                    target_memory=pl.Mem.Left)
        r = pl.matmul(x, pl.move(pl.load(a, [0, 0], [D, D], target_memory=pl.Mem.Mat),
                                 target_memory=pl.Mem.Right))
        return pl.store(r, [0, 0], out)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, xfer: pl.InOut[T], out: pl.Out[T]):
        pl.store(pl.mul(pl.load(a, [0, 0], [D, D]), 3.0), [0, 0], xfer)
        pl.system.sync_set(2, pipe=pl.PipeType.MTE3)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: T, xfer: pl.InOut[T], out: pl.Out[T]) -> T:
        result = self.cube(a, xfer, out)
        self.vec(a, xfer, out)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, xfer: pl.InOut[T], out: pl.Out[T]) -> T:
        out = self.group(a, xfer, out)
        return out


def test_an_event_orders_the_two_sides_of_a_group():
    a, _ = _ab(4)
    out = np.zeros((D, D), np.float32)
    Events(a, np.zeros((D, D), np.float32), out)
    np.testing.assert_allclose(out, (3 * a) @ a, rtol=1e-5, atol=1e-5)


def _misuse(kind: str):
    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.AIC)
        def cube(self, a: T, out: pl.Out[T]):
            peer = pl.import_peer_buffer(name="ring" if kind != "peer" else "rung",  # ERR:peer
                                         peer_func="vec")
            pl.aic_initialize_pipe(peer, dir_mask=1, slot_size=SLOT,  # ERR:aicinit
                                   slot_num={"config": 4, "ring": 8}.get(kind))
            if kind != "uninit":
                pl.tpush_to_aiv(pl.load(a, [0, 0], [D, D]), split=0)

        @pl.function(type=pl.FunctionType.AIV)
        def vec(self, a: T, out: pl.Out[T]) -> T:
            ring = pl.reserve_buffer(name="ring", size=SLOT if kind == "ring" else 8 * SLOT)
            if kind != "uninit":
                pl.aiv_initialize_pipe(ring, dir_mask=1, slot_size=SLOT)  # ERR:aivinit
            t: pl.Tile[[D, D], F32, pl.Mem.Vec] = pl.tpop_from_aic()  # ERR:uninit
            pl.tfree_to_aic(t)
            if kind == "twice":
                pl.tfree_to_aic(t)  # ERR:twice
            return pl.store(t, [0, 0], out)

        @pl.function(type=pl.FunctionType.Group)
        def group(self, a: T, out: pl.Out[T]) -> T:
            self.cube(a, out)
            result = self.vec(a, out)
            return result

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: T, out: pl.Out[T]) -> T:
            out = self.group(a, out)
            return out
    return Misuse


@pytest.mark.parametrize("kind, match, tag, token", [
    ("peer", "vec reserves no buffer named 'rung'", "peer", "pl.import_peer_buffer"),
    ("config", "AIV initializes C2V pipe 0 with slot_size=1024, 8 slots, but the other side "
     "did with slot_size=1024, 4 slots", "aivinit", "pl.aiv_initialize_pipe"),
    ("ring", "needs 8192 bytes (8 slots of 1024), but buffer 'ring' of vec reserves 1024",
     "aicinit", "pl.aic_initialize_pipe"),
    ("uninit", "uses C2V pipe 0, which this AIV core has not initialized", "uninit",
     "pl.tpop_from_aic"),
    ("twice", "holds no popped tile of it", "twice", "pl.tfree_to_aic"),
])
def test_pipe_misuse_faults_at_the_op(kind, match, tag, token):
    a = np.ones((D, D), np.float32)
    with pytest.raises(SimulationError) as info:
        _misuse(kind)(a, np.zeros_like(a))
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, tag, token)


@pl.program
class NoShape:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T]) -> T:
        t = pl.tpop_from_aic(split=0)  # ERR:shape
        return pl.store(t, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.vec(a, out)
        return out


@pl.program
class BadSplit:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, out: pl.Out[T]) -> T:
        pl.tpush_to_aiv(pl.load(a, [0, 0], [D, D]), split=5)  # ERR:split
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.cube(a, out)
        return out


@pl.program
class BadMask:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: T, out: pl.Out[T]) -> T:
        pl.aic_initialize_pipe(dir_mask=4, slot_size=SLOT)  # ERR:mask
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.cube(a, out)
        return out


@pytest.mark.parametrize("program, match, tag, token", [
    (NoShape, "needs the shape and dtype of the tile it receives", "shape", "pl.tpop_from_aic"),
    (BadSplit, "split must be 0 (none), 1 (UP_DOWN: rows) or 2", "split", "5"),
    (BadMask, "dir_mask must be 1 (C2V), 2 (V2C) or 3 (both), got 4", "mask", "4"),
])
def test_bad_pipe_arguments_are_located(program, match, tag, token):
    with pytest.raises(InvalidOperationError) as info:
        program.compile()
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, tag, token)


@pl.program
class Lonely:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: T, out: pl.Out[T]) -> T:
        ring = pl.reserve_buffer(name="ring", size=8 * SLOT)  # ERR:lonely
        return pl.store(pl.load(a, [0, 0], [D, D]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: T, out: pl.Out[T]) -> T:
        out = self.vec(a, out)
        return out


def test_a_pipe_op_outside_a_core_group_faults():
    a = np.ones((D, D), np.float32)
    with pytest.raises(SimulationError) as info:
        Lonely(a, np.zeros_like(a))
    assert "this kernel does not run in one" in info.value.message
    assert_at(info.value, __file__, "lonely", "pl.reserve_buffer")
