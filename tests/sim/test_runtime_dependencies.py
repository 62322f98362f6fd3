"""The runtime's dependency rule (simpler's compute_task_fanin / register_task_outputs),
submit by submit, and the task ids of a run (ring = runtime scope depth)."""
import numpy as np

import pypto.language as pl
import pypto.sim as sim
from pypto.sim.runtime.dependencies import runtime_edges
from pypto.sim.runtime.submits import Submit, SubmitArg, runtime_submits, task_id


def _arg(idx, typ, lo=(0,), hi=(8,), uid=7, manual_dep=False):
    return SubmitArg(idx, f"p{idx}", typ, "t", uid, lo, hi, manual_dep)


def _task(pos, *args, explicit=(), manual=False, owns=()):
    return Submit(pos, task_id(1, pos), "task", 100 + pos, f"k{pos}", f"k{pos}", None,
                  manual, False, 1, tuple(args), tuple(explicit), tuple(owns))


def _edges(submits):
    return [(e.pred, e.succ, e.source, e.overlap, e.flags) for e in runtime_edges(submits)]


def test_inout_that_covers_an_entry_removes_it():
    s = [_task(0, _arg(0, "INOUT")), _task(1, _arg(0, "INOUT")), _task(2, _arg(0, "INPUT"))]
    assert _edges(s) == [(0, 1, "tensormap", "covered", ("wait",)),
                         (1, 2, "tensormap", "covered", ("wait",))]


def test_a_partial_overlap_keeps_the_entry():
    s = [_task(0, _arg(0, "INOUT", (0,), (8,))), _task(1, _arg(0, "INOUT", (4,), (6,))),
         _task(2, _arg(0, "INPUT", (0,), (8,)))]
    assert _edges(s) == [(0, 1, "tensormap", "other", ("wait",)),
                         (0, 2, "tensormap", "covered", ("wait",)),
                         (1, 2, "tensormap", "covered", ("wait",))]


def test_output_existing_is_registered_without_a_lookup():
    s = [_task(0, _arg(0, "OUTPUT_EXISTING")), _task(1, _arg(0, "OUTPUT_EXISTING")),
         _task(2, _arg(0, "INPUT"))]
    assert [(p, q) for p, q, *_ in _edges(s)] == [(0, 2), (1, 2)]


def test_a_reader_is_never_registered_so_a_later_write_does_not_wait_for_it():
    s = [_task(0, _arg(0, "INPUT")), _task(1, _arg(0, "INOUT"))]
    assert _edges(s) == []


def test_disjoint_windows_make_no_edge():
    s = [_task(0, _arg(0, "INOUT", (0,), (4,))), _task(1, _arg(0, "INPUT", (4,), (8,)))]
    assert _edges(s) == []


def test_manual_scope_keeps_only_explicit_deps():
    s = [_task(0, _arg(0, "INOUT")), _task(1, _arg(0, "INPUT"), manual=True),
         _task(2, _arg(0, "INPUT"), explicit=(100,), manual=True)]
    assert _edges(s) == [(0, 2, "explicit", None, ("wait", "retain"))]


def test_manual_dep_skips_the_tensor_map_but_not_the_creator():
    alloc = Submit(0, task_id(1, 0), "alloc", None, "alloc", "", None, False, False, 1, (),
                   (), (7,))
    s = [alloc, _task(1, _arg(0, "OUTPUT_EXISTING", manual_dep=True)),
         _task(2, _arg(0, "INPUT", manual_dep=True))]
    assert _edges(s) == [(0, 1, "creator", None, ("wait", "retain")),
                         (0, 2, "creator", None, ("wait", "retain"))]


def test_a_launch_result_is_owned_by_its_launch_and_an_output_slot_has_no_creator_edge():
    s = [_task(0, _arg(0, "INPUT", uid=3), owns=(7,)), _task(1, _arg(0, "OUTPUT")),
         _task(2, _arg(0, "INPUT"))]
    assert _edges(s) == [(0, 2, "creator", None, ("wait", "retain"))]


def test_one_producer_is_one_creator_or_explicit_edge_but_every_tensormap_match():
    alloc = Submit(0, task_id(1, 0), "alloc", None, "alloc", "", None, False, False, 1, (),
                   (), (7,))
    s = [alloc, _task(1, _arg(0, "INOUT")),
         _task(2, _arg(0, "INPUT", (0,), (4,)), _arg(1, "INPUT", (4,), (8,)), explicit=(101,))]
    got = [(p, q, src) for p, q, src, *_ in _edges(s)]
    # the explicit edge first; the alloc's creator edge once; two tensormap matches
    assert got == [(0, 1, "creator"), (1, 2, "explicit"), (0, 2, "creator"),
                   (1, 2, "tensormap"), (1, 2, "tensormap")]


# --- task ids of a run: ring = min(runtime scope depth, 3), local = order in the ring ---

N = 16


@pl.jit
def nested(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    t = pl.create_tensor([N, N], dtype=pl.FP32)  # the function body's AUTO scope: ring 1
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        t[:, :] = pl.exp(x[:, :])
    for i in pl.range(2):  # a for body: ring 2
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mid"):
            y[:, :] = pl.add(t[:, :], x[:, :])
        for j in pl.range(1):  # ring 3
            for k in pl.range(1):  # depth 4: still ring 3
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="deep"):
                    y[:, :] = pl.add(y[:, :], x[:, :])
    return y


@pl.jit(auto_scope=False)
def hand_scoped(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="root"):  # the executor's scope: ring 0
        y[:, :] = pl.exp(x[:, :])
    with pl.scope():  # noqa: SIM117 - ring 1: the scope is the point
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
            y[:, :] = pl.add(y[:, :], x[:, :])
    return y


def _ids(kernel):
    x = np.ones((N, N), np.float32)
    r = sim.simulate(kernel, x, np.zeros_like(x), checks=())
    c = kernel.compile()
    return [(s.kind, s.name, s.ring, s.local) for s in
            runtime_submits(r.trace, c.program, c.analyses)]


def test_task_ids_follow_the_runtime_scopes_the_compiler_places():
    assert _ids(nested) == [("alloc", "alloc", 1, 0), ("task", "top", 1, 1),
                            ("task", "mid", 2, 0), ("task", "deep", 3, 0),
                            ("task", "mid", 2, 1), ("task", "deep", 3, 1)]


def test_an_auto_scope_false_function_gets_only_its_own_scopes():
    assert _ids(hand_scoped) == [("task", "root", 0, 0), ("task", "inner", 1, 0)]


def test_task_id_is_ring_and_local():
    assert task_id(2, 5) == (2 << 32) | 5 == 8589934597
