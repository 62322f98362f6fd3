"""A gather's reads are one `RowAccess` per task and buffer (the rows it read), not an
`Access` per row; the dependencies through it are exactly those of its rows."""
import numpy as np
import pytest

import pypto.language as pl
import pypto.sim as sim
from pypto.sim.trace.access import Access, RowAccess
from pypto.sim.trace.index import BoxIndex

V, D, T = 64, 32, 8


@pl.jit
def gather_then_overwrite(ids: pl.Tensor[[16], pl.INT32],
                          table: pl.InOut[pl.Tensor[[V, D], pl.FP32]],
                          y: pl.Out[pl.Tensor[[16, D], pl.FP32]]):
    for t0 in pl.range(0, 16, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather"):
            for k in pl.range(T):
                row = pl.cast(pl.read(ids, [t0 + k]), pl.INDEX)
                y[t0 + k:t0 + k + 1, :] = table[row:row + 1, :]
    for r0 in pl.range(0, V, 16):  # overwrites the table, 16 rows per task, after the gathers
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="overwrite"):
            table[r0:r0 + 16, :] = pl.add(table[r0:r0 + 16, :], 1.0)
    return table, y


def _run(ids):
    table = np.arange(V * D, dtype=np.float32).reshape(V, D)
    before = table.copy()
    y = np.zeros((16, D), np.float32)
    r = sim.simulate(gather_then_overwrite, ids, table, y, trace=True)
    np.testing.assert_array_equal(y, before[ids])
    np.testing.assert_array_equal(table, before + 1.0)
    return r.trace


def test_gather_reads_are_one_record_of_rows():
    ids = np.array([3, 40, 7, 40, 12, 5, 63, 0, 20, 21, 22, 2, 50, 51, 33, 34], np.int32)
    tr = _run(ids)
    gathers = [t for t in tr.tasks if t.name == "gather"]
    assert len(gathers) == 2
    first = [a for a in gathers[0].accesses if a.tensor == "table"]
    assert len(first) == 1 and isinstance(first[0], RowAccess)
    assert first[0].starts.tolist() == sorted(set(ids[:8].tolist()))
    assert first[0].axis == 0 and first[0].ext == 1
    assert first[0].to_dict()["rows"]["starts"] == sorted(set(ids[:8].tolist()))
    # rows 20, 21, 22 read one after another merge into a box; the rest are rows
    second = [a for a in gathers[1].accesses if a.tensor == "table"]
    assert [type(a) for a in second] == [Access, RowAccess]
    assert (second[0].lo, second[0].hi) == ((20, 0), (23, D))
    assert second[1].starts.tolist() == [2, 33, 34, 50, 51]
    covered = {r for a in second for lo, hi in a.boxes() for r in range(lo[0], hi[0])}
    assert covered == set(ids[8:].tolist())


def test_war_edges_follow_the_rows_not_their_box():
    # task 0 reads rows 3..63 scattered, task 1 reads rows 2, 20-22, 33, 34, 50, 51:
    # the overwrite of rows 0-15 conflicts with both, of 16-31 with both, of 48-63 with
    # both, of 32-47 with the second only... choose rows so one pair has no conflict
    ids = np.array([3, 5, 7, 0, 12, 1, 9, 2, 60, 61, 62, 63, 50, 51, 52, 49], np.int32)
    tr = _run(ids)
    g0, g1 = (t.id for t in tr.tasks if t.name == "gather")
    over = [t.id for t in tr.tasks if t.name == "overwrite"]  # rows 0-15, 16-31, 32-47, 48-63
    war = {(e.src, e.dst) for e in tr.dependencies() if e.kind == "WAR" and e.tensor == "table"}
    assert war == {(g0, over[0]), (g1, over[3])}
    # the box of g0's rows is 0-12 and of g1's 49-63: a box-per-task trace would say the
    # same here, so also check rows whose box spans a task they do not touch
    ids2 = np.array([0, 63, 0, 63, 0, 63, 0, 63, 20, 20, 20, 20, 20, 20, 20, 20], np.int32)
    tr2 = _run(ids2)
    g0, g1 = (t.id for t in tr2.tasks if t.name == "gather")
    over = [t.id for t in tr2.tasks if t.name == "overwrite"]
    war2 = {(e.src, e.dst) for e in tr2.dependencies() if e.kind == "WAR" and e.tensor == "table"}
    assert war2 == {(g0, over[0]), (g0, over[3]), (g1, over[1])}


def _brute(boxes, q_boxes, writes_only):
    out = set()
    for tid, write, items in boxes:
        if writes_only and not write:
            continue
        for lo, hi in items:
            if any(all(a < y and c > x for a, c, x, y in zip(lo, hi, ql, qh))
                   for ql, qh in q_boxes):
                out.add((tid, write))
    return out


def _row_access(rng, tid):
    axis = int(rng.integers(0, 2))
    ext = int(rng.integers(1, 4))
    lo = [int(rng.integers(0, 40)), int(rng.integers(0, 40))]
    hi = [lo[0] + int(rng.integers(1, 6)), lo[1] + int(rng.integers(1, 6))]
    lo[axis], hi[axis] = 0, ext
    first = Access("b", "R", 0, tuple(lo), tuple(hi), 1)
    ra = RowAccess(first, axis)
    for s in rng.integers(0, 44, int(rng.integers(1, 9))).tolist():
        nlo, nhi = list(ra.lo), list(ra.hi)
        nlo[axis], nhi[axis] = s, s + ext
        assert ra.grow(tuple(first.lo[:axis]) + (s,) + first.lo[axis + 1:],
                       tuple(first.hi[:axis]) + (s + ext,) + first.hi[axis + 1:])
    return ra


@pytest.mark.parametrize("seed", range(40))
def test_index_with_row_sets_agrees_with_their_rows_one_by_one(seed):
    rng = np.random.default_rng(seed)
    idx = BoxIndex(2, (50, 50))
    filed = []
    for tid in range(12):
        write = bool(rng.integers(0, 2))
        if not write and rng.random() < 0.5:
            a = _row_access(rng, tid)
            idx.add_rows(tid, False, a.lo, a.hi, a.axis, a.ext, a.starts)
            filed.append((tid, False, list(a.boxes())))
        else:
            lo = (int(rng.integers(0, 45)), int(rng.integers(0, 45)))
            hi = (lo[0] + int(rng.integers(1, 12)), lo[1] + int(rng.integers(1, 12)))
            if write and rng.random() < 0.3:
                idx.shadow(tid, lo, hi)  # drops what it contains (of other tasks)
                filed = [(t, w, [b for b in bs if t == tid or not all(
                    x <= a and c <= y for a, c, x, y in zip(b[0], b[1], lo, hi))])
                    for t, w, bs in filed]
            idx.add(tid, write, lo, hi)
            filed.append((tid, write, [(lo, hi)]))
    for _ in range(25):
        wo = bool(rng.integers(0, 2))
        if rng.random() < 0.5:
            q = _row_access(rng, 99)
            tids, writes = idx.overlapping_rows(q.lo, q.hi, q.axis, q.ext, q.starts, wo)
            want = _brute(filed, list(q.boxes()), wo)
        else:
            lo = (int(rng.integers(0, 45)), int(rng.integers(0, 45)))
            hi = (lo[0] + int(rng.integers(1, 12)), lo[1] + int(rng.integers(1, 12)))
            tids, writes = idx.overlapping(lo, hi, wo)
            want = _brute(filed, [(lo, hi)], wo)
        assert set(zip(tids.tolist(), writes.tolist())) == want
