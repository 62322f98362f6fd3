"""What a traced run leaves for later: last-writer tables kept as the writes that make
them (`pypto.sim.trace.writers.WriteLog`), a batched run's accesses kept as its compiled
log and a row per task (`pypto.sim.batch.replay.BatchTrace`). Read, they are what
recording everything at once gave; unread, nothing was made."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.sim import SimConfig, run_compiled
from pypto.sim.trace.writers import WriteLog, apply_writes


@pl.jit
def loop_rows_through_reshape(x: pl.Tensor[[8, 64], pl.FP32],
                              y: pl.Out[pl.Tensor[[8, 4, 16], pl.FP32]]):
    """Each iteration writes its row of `y` through a flat view of it (a reshape: the
    trace finds the box, the last writers the elements)."""
    yf = pl.reshape(y, [8, 64])
    for i in pl.parallel(0, 8, 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="flat_rows"):
            yf[i:i + 1, :] = pl.add(x[i:i + 1, :], 1.0)
    return y


@pl.jit
def spmd_rows_through_reshape(x: pl.Tensor[[8, 64], pl.FP32],
                              y: pl.Out[pl.Tensor[[8, 4, 16], pl.FP32]]):
    """The same as one SPMD task of 8 blocks."""
    yf = pl.reshape(y, [8, 64])
    for b in pl.spmd(8, name_hint="flat_rows"):
        yf[b:b + 1, :] = pl.add(x[b:b + 1, :], 1.0)
    return y


def _run(kernel, batch: bool):
    x = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
    r = run_compiled(kernel.compile(), [x, np.zeros((8, 4, 16), np.float32)], {},
                     SimConfig(trace=True, batch=batch))
    assert np.array_equal(r.outputs["y"], (x + 1).reshape(8, 4, 16))
    return r


def _accesses(r) -> list:
    return [[(a.tensor, a.mode, a.block, a.lo, a.hi) for a in t.accesses]
            for t in r.trace.tasks]


@pytest.mark.parametrize("batch", [False, True])
def test_last_writers_wait_until_read(batch):
    r = _run(loop_rows_through_reshape, batch)
    w = r.trace.writers["y"]
    # nothing applied yet: the writes wait in the buffer's log
    assert isinstance(w._events, WriteLog) and w._events._table is None
    tids = [t.id for t in r.trace.tasks]
    assert len(tids) == 8
    assert (w.task == np.asarray(tids)[:, None, None]).all()
    assert (w.block == 0).all()
    assert w.blame((5, 3, 15))["task"] == tids[5]
    # a tensor no task wrote shares one read-only zero
    assert not r.trace.writers["x"].events.flags.writeable
    assert (r.trace.writers["x"].task == -1).all()


@pytest.mark.parametrize("batch", [False, True])
def test_spmd_writes_through_reshape_blame_their_blocks(batch):
    r = _run(spmd_rows_through_reshape, batch)
    assert r.batch_stats["batched"] == int(batch)
    (task,) = r.trace.tasks
    w = r.trace.writers["y"]
    assert (w.block == np.arange(8)[:, None, None]).all()
    assert (w.task == task.id).all()
    # the write boxes are the rows of y the flat view's windows are
    assert [(a.block, a.lo, a.hi) for a in task.writes] == \
        [(b, (b, 0, 0), (b + 1, 4, 16)) for b in range(8)]


@pytest.mark.parametrize("kernel", [loop_rows_through_reshape, spmd_rows_through_reshape])
def test_batched_accesses_are_made_when_read(kernel):
    one_by_one = _run(kernel, False)
    batched = _run(kernel, True)
    assert batched.batch_stats["batched"] == 1
    # kept as the run's log and a row per task until read
    assert all(t._lazy is not None and not t._accesses for t in batched.trace.tasks)
    assert _accesses(batched) == _accesses(one_by_one)
    assert all(t._lazy is None for t in batched.trace.tasks)
    # the last writers do not depend on what was read first
    again = _run(kernel, True)
    assert again.trace.writers["y"].task.tolist() == one_by_one.trace.writers["y"].task.tolist()
    assert again.trace.writers["y"].block.tolist() == \
        one_by_one.trace.writers["y"].block.tolist()
    assert _accesses(again) == _accesses(one_by_one)
    assert [e.to_dict() for e in again.trace.edges] == \
        [e.to_dict() for e in one_by_one.trace.edges]


class _Events:
    """What a `WriteLog` needs of its trace: event numbers of (task, block, site)."""

    def __init__(self):
        self.ids: dict = {}

    def write_event(self, task: int, block: int, site: int) -> int:
        return self.ids.setdefault((task, block, site), len(self.ids) + 1)


def test_write_log_applies_its_writes_in_order_past_its_limit():
    rng = np.random.default_rng(3)
    trace = _Events()
    log = WriteLog((64, 32), trace)
    expect = np.zeros((64, 32), np.int32)
    n = WriteLog.LIMIT * 2 + 77
    for k in range(n):
        task = int(rng.integers(0, 50))
        if k % 3:
            lo = (int(rng.integers(0, 60)), int(rng.integers(0, 30)))
            hi = (lo[0] + int(rng.integers(1, 5)), lo[1] + int(rng.integers(1, 3)))
            log.pending.append((task, 0, 1, lo, hi))
            expect[lo[0]:hi[0], lo[1]:hi[1]] = trace.write_event(task, 0, 1)
        else:  # a strided window: every other element of a row pair
            first = int(rng.integers(0, 64 * 32 - 70))
            log.pending.append((task, 1, 2, first, (32, 2), (2, 3)))
            expect.reshape(-1)[first:first + 64 + 5][np.array([0, 2, 4, 32, 34, 36])] = \
                trace.write_event(task, 1, 2)
        if len(log.pending) > WriteLog.LIMIT:
            log.table()  # (what the frame does past the limit)
    assert len(log.pending) < WriteLog.LIMIT
    assert np.array_equal(log.table(), expect)
    assert not log.pending
    # applying nothing more changes nothing
    t = np.zeros((64, 32), np.int32)
    apply_writes(t, [], trace.write_event)
    assert not t.any()
