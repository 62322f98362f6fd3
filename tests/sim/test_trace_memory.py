"""What a long traced run keeps: per-iteration buffers die with their arrays, and the
dependency edges stay as many as the scheduler needs (the full relation on demand)."""
import warnings
from itertools import pairwise

import numpy as np
import sim_kernels as k

import pypto.sim as sim
from pypto.scale.estimate import makespan_us
from pypto.sim.device.memory import DeviceMemory
from pypto.sim.trace.trace import Trace

warnings.filterwarnings("ignore", category=UserWarning)


def _run(monkeypatch=None):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 16)).astype(np.float32)
    acc = rng.standard_normal((16, 16)).astype(np.float32)
    acc0 = acc.copy()
    y = np.zeros((128, 16), np.float32)
    r = sim.simulate(k.per_iteration_tiles, x, acc, y, trace=True)
    return r, x, acc0, acc, y


def _reach(edges, n):
    succ = {i: set() for i in range(n)}
    for e in edges:
        succ[e.src].add(e.dst)
    seen = {}
    for s in reversed(range(n)):  # ids follow program order: successors come later
        out = set(succ[s])
        for d in succ[s]:
            out |= seen[d]
        seen[s] = out
    return seen


def test_rewriting_one_tensor_gives_a_chain_not_every_pair():
    r, x, acc0, acc, y = _run()
    np.testing.assert_allclose(y, (x + 1.0) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(acc, acc0 + (x + 1.0).reshape(8, 16, 16).sum(0), rtol=1e-5)
    tr = r.trace
    accum = [t.id for t in tr.tasks if t.name == "accum"]
    assert len(accum) == 8
    # each accum reads and rewrites all of acc: it depends on the one before it only
    got = sorted((e.src, e.dst, e.kind) for e in tr.edges if e.tensor == "acc")
    assert got == sorted((a, b, kind) for a, b in pairwise(accum)
                         for kind in ("RAW", "WAR", "WAW"))
    # the full relation: every earlier accum against every later one, three kinds each
    full = tr.dependencies()
    pairs = {(e.src, e.dst, e.kind) for e in full if e.tensor == "acc"}
    assert len(pairs) == 3 * 8 * 7 // 2
    assert (accum[0], accum[7], "WAR") in pairs
    # ... and every pair of it is ordered through the compact edges
    reach = _reach(tr.edges, len(tr.tasks))
    assert all(e.dst in reach[e.src] for e in full)
    assert {(e.src, e.dst, e.kind, e.tensor) for e in tr.edges} <= \
        {(e.src, e.dst, e.kind, e.tensor) for e in full}


def test_critical_path_is_the_same_over_the_compact_edges():
    r, *_ = _run()
    tr = r.trace
    full = Trace(tr.platform, tr.program)
    full.tasks, full.edges = tr.tasks, tr.dependencies()
    assert len(full.edges) > len(tr.edges)
    assert makespan_us(tr) == makespan_us(full) > 0


def test_per_iteration_results_are_released_during_the_run(monkeypatch):
    gone: list = []
    forget = Trace.forget
    monkeypatch.setattr(Trace, "forget", lambda self, buf: (gone.append(buf.name),
                                                            forget(self, buf)))
    r, x, *_ = _run()
    # seven of the eight tiles `make` returned died with the iteration that used them; the
    # first of the name stays to the end (what `device` and the writer table show)
    assert gone == ["make.out"] * 7
    np.testing.assert_array_equal(r.device["make.out"], x[:16] + 1.0)
    assert r.blame("acc", (3, 4))["name"] == "accum"
    assert r.blame("acc", (3, 4))["task"] == max(t.id for t in r.trace.tasks
                                                 if t.name == "accum")


def test_device_memory_holds_a_repeated_result_weakly():
    mem = DeviceMemory(seed=0, zero_fresh=True)
    released: list = []
    mem.on_release = lambda buf: released.append(buf.uid)
    x = np.zeros((4, 4), np.float32)
    mem.register("x", x, "In", None, "param")
    first = np.ones((2, 2), np.float32)
    mem.register("t.out", first, None, None, "result")
    second = np.full((2, 2), 2.0, np.float32)
    buf = mem.register("t.out", second, None, None, "result")
    assert [b.uid for b in mem.buffer_list] == [0, 1, 2]
    assert mem.locate(second[1:, :])[0] is buf and buf.array is second
    mem.forget_views()
    del second
    assert released == [2]
    assert [b.name for b in mem.buffer_list] == ["x", "t.out"]
    assert mem.by_uid(2) is None and mem.by_uid(1).array is first
    # a view kept alive keeps its buffer: only the root's death releases it
    third = np.zeros((8,), np.float32)
    mem.register("t.out", third, None, None, "result")
    part = third[2:4]
    del third
    mem.forget_views()
    assert released == [2] and mem.locate(part)[0].uid == 3
    mem.forget_views()
    del part
    assert released == [2, 3]


def test_an_input_no_task_wrote_keeps_no_writer_table_of_its_own():
    r, x, *_ = _run()
    w = r.trace.writers["x"]
    # one shared zero, not 4 bytes per element (a large model's weights would otherwise
    # cost four times their size in address space under a capped run)
    assert w.events.shape == x.shape and w.events.strides == (0, 0)
    assert w.task.shape == x.shape and (w.task == -1).all()
    assert w.blame((5, 3))["name"] == "never written"
    assert w.blame_mask(np.ones(x.shape, bool)) == [
        {"task": -1, "name": "never written", "block": -1, "elements": x.size, "source": None}]
    # a writer recorded after the run gets a table of its own
    w.writable_events()[0, 0] = 1
    assert w.events.strides != (0, 0) and w.events[0, 0] == 1 and w.events[0, 1] == 0
    assert r.trace.writers["y"].events.flags.writeable  # written by tasks: a real table


def test_edges_are_derived_when_first_read_and_are_those_of_finishing_order(monkeypatch):
    # a run whose edges nobody reads (the golden harness's: it reads costs and last
    # writers) builds no box index at all
    r, *_ = _run()
    tr = r.trace
    assert tr._boxes == {} and tr._pending
    est = tr.est_us_serial()
    assert est > 0 and tr._boxes == {} and tr._pending
    # reading them derives them once, in the order the tasks finished, with the buffers
    # that died along the way dropped where they died (not before: their tasks' edges
    # need them)
    edges = tr.edges
    assert not tr._pending and edges is tr.edges
    assert tr.totals()["est_us_serial"] == est
    eager = Trace(tr.platform, tr.program)
    for item in _pending_of(monkeypatch):
        if type(item) is int:
            eager.forget(type("Buf", (), {"uid": item})())
            continue
        eager.tasks.append(item)
        eager._shapes = tr._shapes
        eager._pending.append(item)
        eager.edges  # noqa: B018 - derived after every task: the eager order
    assert [(e.src, e.dst, e.kind, e.tensor) for e in eager.edges] == \
        [(e.src, e.dst, e.kind, e.tensor) for e in edges]
    assert len(edges) < len(tr.dependencies())


def _pending_of(monkeypatch):
    """What a fresh run of the kernel hands its trace to derive edges from, in order."""
    seen: list = []
    finish, forget = Trace.finish_task, Trace.forget
    monkeypatch.setattr(Trace, "finish_task", lambda self, rec, mem: (
        finish(self, rec, mem), seen.append(rec)))
    monkeypatch.setattr(Trace, "forget", lambda self, buf: (
        forget(self, buf), seen.append(buf.uid)))
    _run()
    monkeypatch.undo()
    assert any(type(i) is int for i in seen)  # buffers died between tasks
    return seen
