"""Tasks, the task graph, the trace, SPMD blocks and interleaved barriers."""
import json
import warnings

import numpy as np
import sim_kernels as k

import pypto.sim as sim

warnings.filterwarnings("ignore", category=UserWarning)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_three_region_trace_matches_hand_derivation():
    x = rand(64, 32)
    y = np.zeros_like(x)
    r = sim.simulate(k.three_regions, x, y)
    np.testing.assert_allclose(y[:32], 2 * x[:32] + 1, rtol=1e-6)
    np.testing.assert_allclose(y[32:], 3 * x[32:] + 1, rtol=1e-6)
    t = r.trace
    assert [(task.id, task.name, task.blocks, task.kind) for task in t.tasks] == [
        (0, "top", 1, "at"), (1, "bottom", 1, "at"), (2, "combine", 1, "at")]
    top, bottom, combine = t.tasks
    assert [(a.tensor, a.ranges) for a in top.reads] == [("x", [(0, 32), (0, 32)])]
    assert [(a.tensor, a.ranges) for a in top.writes] == [("tmp", [(0, 32), (0, 32)])]
    assert [(a.tensor, a.ranges) for a in bottom.reads] == [("x", [(32, 64), (0, 32)])]
    assert [(a.tensor, a.ranges) for a in bottom.writes] == [("tmp", [(32, 64), (0, 32)])]
    assert [(a.tensor, a.ranges) for a in combine.reads] == [("tmp", [(0, 64), (0, 32)])]
    assert [(a.tensor, a.ranges) for a in combine.writes] == [("y", [(0, 64), (0, 32)])]
    # top and bottom touch disjoint halves: no edge between them; both feed combine
    assert sorted((e.src, e.dst, e.kind, e.tensor) for e in t.edges) == [
        (0, 2, "RAW", "tmp"), (1, 2, "RAW", "tmp")]
    assert top.bytes["gm_read"] == 32 * 32 * 4 and top.bytes["gm_write"] == 32 * 32 * 4
    assert combine.bytes["gm_read"] == 64 * 32 * 4
    assert top.units == {"mte", "vector"} and top.op_counts["vector"] == 1
    assert top.op_counts["mte"] == 2
    assert top.cycles["vector"] > 0 and top.cycles["mte2"] > 0 and top.cycles["cube"] == 0
    assert top.span.line > 0 and "sim_kernels.py" in top.source
    # last writers: which task / block / line wrote each element
    w = t.writers["tmp"]
    assert (w.task[:32] == 0).all() and (w.task[32:] == 1).all()
    assert (t.writers["y"].task == 2).all() and (t.writers["y"].block == 0).all()
    blame = r.blame("y", (5, 3))
    assert blame["task"] == 2 and blame["name"] == "combine" and blame["block"] == 0
    assert "sim_kernels.py" in blame["source"] and blame["op"] == "assemble"
    # the trace serialises for the workbench
    d = json.loads(json.dumps(t.to_dict()))
    assert [n["name"] for n in d["tasks"]] == ["top", "bottom", "combine"]
    assert d["tasks"][0]["est_us"] > 0 and "cube" in d["cost_model"]


def test_blame_groups_mismatches_by_writer():
    x = rand(64, 32)
    y = np.zeros_like(x)
    r = sim.simulate(k.half_written, np.zeros((64, 64), np.float32), np.zeros((64, 64),
                                                                               np.float32))
    groups = r.trace.writers["y"].blame_mask(np.isnan(r.outputs["y"]))
    assert groups == [{"task": -1, "name": "never written", "block": -1, "elements": 32 * 64,
                       "source": None}]
    del x, y


def test_explicit_deps_are_edges():
    x = rand(16, 16)
    r = sim.simulate(k.explicit_deps, x, np.zeros_like(x), np.zeros_like(x))
    assert [(e.src, e.dst, e.kind) for e in r.trace.edges] == [(0, 1, "explicit")]


def test_spmd_blocks_see_their_real_index():
    x = rand(8, 16)
    y = np.zeros_like(x)
    r = sim.simulate(k.block_ids, x, y)
    np.testing.assert_array_equal(y, np.repeat(np.arange(8, dtype=np.float32)[:, None], 16, 1))
    assert len(r.tasks) == 1
    task = r.tasks[0]
    assert task.blocks == 8 and task.kind == "spmd" and len(task.block_cycles) == 8
    assert sorted(a.block for a in task.writes) == list(range(8))
    assert (r.trace.writers["y"].block == np.arange(8)[:, None]).all()


def test_spmd_with_block_and_block_num():
    x = rand(4, 16)
    y = np.zeros_like(x)
    k.block_count(x, y)
    np.testing.assert_array_equal(y[:, 0], [40, 41, 42, 43])


def test_syncall_blocks_run_interleaved():
    x = rand(8, 64)
    part = np.zeros_like(x)
    y = np.zeros_like(x)
    r = sim.simulate(k.barrier_sum, x, part, y)
    # every block reads every other block's part after the barrier: run one after another,
    # block 0 would have read NaN residue for rows 1..7
    ref = np.repeat((2 * x).sum(axis=0, keepdims=True), 8, axis=0)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    assert r.tasks[0].blocks == 8
    # reads of `part` happen after all its writes, in every block
    assert (r.trace.writers["part"].block == np.arange(8)[:, None]).all()


def test_control_flow():
    x = rand(16, 16)
    y = np.zeros_like(x)
    k.while_carry(x, y)
    np.testing.assert_allclose(y, x + 5, rtol=1e-6)
    k.loop_carry(x, y)
    np.testing.assert_allclose(y, 4 * x, rtol=1e-6)
    for flag, off in ((1, 1.0), (0, -1.0)):
        r = sim.simulate(k.branch_on_data, x, np.array([[flag]], np.int32), y)
        np.testing.assert_allclose(y, x + off)
        assert [t.name for t in r.tasks] == ["pos" if flag else "neg"]
    x = rand(64, 16)
    y = np.zeros_like(x)
    r = sim.simulate(k.early_break, x, y)
    np.testing.assert_allclose(y[:32], x[:32] + 1)
    assert np.isnan(y[32:]).all() and len(r.tasks) == 2


def test_result_and_machine_reuse():
    x = rand(64, 64)
    y = np.zeros_like(x)
    r1 = k.half_written(x, y)
    r2 = k.half_written(2 * x, y)
    np.testing.assert_allclose(y[:32], 4 * x[:32])
    assert r1.trace is None and r2.task_count == 1 and "y" in r2.outputs
