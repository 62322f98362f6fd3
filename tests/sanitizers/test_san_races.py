"""checks=("race",): every buggy kernel is reported, its fixed twin is not."""
import warnings

import numpy as np
import pytest
import san_kernels as k

import pypto.sim as sim
from pypto.sim.checks import RaceError, RaceReport

warnings.filterwarnings("ignore", category=UserWarning)


def _args(kernel, seed=0):
    rng = np.random.default_rng(seed)
    params = kernel.compile().program.entry_function.params
    return [rng.random([int(d) for d in p.var.type.shape]).astype(np.float32) for p in params]


def races(kernel) -> RaceReport:
    r = sim.simulate(kernel, *_args(kernel), checks=("oob", "ub", "race"), strict=False)
    assert isinstance(r.races, RaceReport)
    return r.races


CLEAN = ["spmd_disjoint", "spmd_atomic", "barrier_sum", "parallel_disjoint", "range_accumulate",
         "parallel_accumulate", "war_deps", "manual_deps", "manual_via_dummy", "early_resolve",
         "out_fully_written", "tile_written_first"]


@pytest.mark.parametrize("name", CLEAN)
def test_no_false_positive(name):
    assert not races(getattr(k, name)), races(getattr(k, name)).text()


def test_spmd_blocks_writing_overlapping_rows():
    (r,) = races(k.spmd_overlap)
    assert r.same_task and r.kind == "write-write" and r.tensor == "y"
    assert r.first.task == r.second.task == 0 and r.first.name == "blk"
    assert (r.first.block, r.second.block) == (0, 1)
    assert r.ranges == [(8, 32), (0, 64)]  # rows shared by neighbouring blocks
    assert {(0, 1), (1, 2), (2, 3)} <= set(r.block_pairs) and r.pairs == 3
    assert "blocks of one SPMD task run concurrently" in r.reason
    assert r.first.line == r.second.line > 0


def test_spmd_block_reading_what_another_writes():
    (r,) = races(k.spmd_read_other)
    assert r.same_task and r.kind == "read-write" and r.ranges == [(0, 64), (0, 64)]


def test_atomic_adds_commute_but_not_with_a_plain_store():
    assert not races(k.spmd_atomic)
    (r,) = races(k.spmd_atomic_mixed)
    assert r.kind == "atomic-plain" and r.same_task
    assert {r.first.mode, r.second.mode} == {"write", "atomic add"}


def test_syncall_orders_blocks_across_the_barrier():
    assert not races(k.barrier_sum)
    (r,) = races(k.barrier_missing)
    assert r.same_task and r.kind == "read-write" and r.tensor == "part"


def test_parallel_loop_iterations_writing_overlapping_rows():
    rep = races(k.parallel_overlap)
    assert [r.tasks for r in rep] == [(0, 1), (1, 2), (2, 3)]
    r = rep.races[0]
    assert not r.same_task and r.kind == "write-write" and r.ranges == [(8, 16), (0, 64)]
    assert r.first.name == r.second.name == "row"
    assert "pl.parallel loop over 'i'" in r.reason
    assert r.first.direction == r.second.direction == "OutputExisting"


def test_parallel_inout_iterations_are_serialised_by_the_runtime():
    # each iteration passes y as InOut: the runtime's lookup orders them (no race,
    # and no parallelism either)
    assert not races(k.parallel_accumulate)


def test_a_write_after_a_read_is_unordered_whatever_the_direction():
    # the runtime registers writers only: neither pl.Out nor pl.InOut makes the
    # overwrite wait for the earlier reader; only deps= does
    for kernel, direction in ((k.war_out, "OutputExisting"), (k.war_inout, "InOut")):
        (r,) = races(kernel)
        assert r.kind == "read-write" and r.tensor == "t"
        assert (r.first.name, r.first.mode) == ("read_into", "read")
        assert (r.second.mode, r.second.direction) == ("write", direction)
        assert "never after earlier readers" in r.reason
        assert "deps=[tid]" in r.hint
        assert r.first.line == 147 - 8 * (kernel is k.war_out) and r.second.line == r.first.line + 1
    assert not races(k.war_deps)


def test_writing_through_an_in_parameter_hides_the_write():
    (r,) = races(k.in_written)
    assert (r.first.name, r.first.mode, r.first.direction) == ("write_through_in", "write",
                                                               "Input")
    assert "declared pl.In" in r.reason


def test_no_dep_args_drop_the_edge():
    (r,) = races(k.no_dep)
    assert r.second.direction == "NoDep" and "untracked" in r.reason


def test_manual_scope_consumer_missing_the_producer_in_deps():
    (r,) = races(k.manual_missing)
    assert (r.first.name, r.second.name) == ("prod", "cons")
    assert "pl.manual_scope" in r.reason and "deps=" in r.hint
    assert not races(k.manual_deps)
    assert not races(k.manual_via_dummy)  # a task_dummy join carries the order


def test_allow_early_resolve_changes_no_order():
    # early resolve only stages consumers early; the data edge still holds ...
    assert not races(k.early_resolve)
    # ... and cannot stand in for a missing deps= in a manual scope
    (r,) = races(k.early_resolve_manual)
    assert "pl.manual_scope" in r.reason


def test_strict_run_raises_with_every_race_after_completing():
    with pytest.raises(RaceError) as ei:
        sim.simulate(k.parallel_overlap, *_args(k.parallel_overlap), checks=("race",))
    err = ei.value
    assert isinstance(err, sim.SimulationError) and err.code == "S011"
    assert len(err.report) == 3 and "and 2 more races" in err.message
    assert err.tensor == "y" and err.region == "row" and err.indices == "[8:16, 0:64]"
    assert err.result is not None and err.result.races is err.report
    text = str(err)
    assert "error[S011]" in text and "data race" in text and "fix:" in text


def test_report_serialises():
    d = races(k.war_out).to_dict()
    (r,) = d["races"]
    assert r["first"]["task"] == 0 and r["second"]["task"] == 1
    assert r["ranges"] == [[0, 64], [0, 64]] and r["kind"] == "read-write"
    assert d["tasks"] == 2


def test_race_check_turns_tracing_on_and_defaults_are_unchanged():
    args = _args(k.spmd_disjoint)
    r = sim.simulate(k.spmd_disjoint, *args, checks=("race",), trace=False)
    assert r.trace is not None and not r.races
    r = sim.simulate(k.spmd_disjoint, *args)
    assert r.config.checks == ("oob", "ub", "window", "div") and r.races is None and \
        r.uninit_reads == []
    assert sim.SimConfig().checks == ("oob", "ub", "window", "div")


def test_unknown_check_name():
    with pytest.raises(ValueError, match=r"unknown simulator check.*'races'"):
        sim.simulate(k.spmd_disjoint, *_args(k.spmd_disjoint), checks=("races",))


def test_jit_call_with_race_check():
    x, y = _args(k.parallel_overlap)
    with pytest.raises(RaceError):
        sim.run_compiled(k.parallel_overlap.compile(), (x, y), config={"checks": ("race",)})
