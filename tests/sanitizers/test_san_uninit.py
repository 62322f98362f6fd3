"""checks=("uninit",): reads of memory nothing wrote name the reading task and range."""
import warnings
from pathlib import Path

import numpy as np
import pytest
import san_kernels as k

import pypto.sim as sim
from pypto.sim.checks import UninitializedReadError

warnings.filterwarnings("ignore", category=UserWarning)


def _args(kernel, seed=0):
    rng = np.random.default_rng(seed)
    params = kernel.compile().program.entry_function.params
    return [rng.random([int(d) for d in p.var.type.shape]).astype(np.float32) for p in params]


def reads(kernel):
    return sim.simulate(kernel, *_args(kernel), checks=("oob", "ub", "uninit"),
                        strict=False).uninit_reads


def raised(kernel) -> UninitializedReadError:
    with pytest.raises(UninitializedReadError) as ei:
        sim.simulate(kernel, *_args(kernel), checks=("oob", "ub", "uninit"))
    return ei.value


@pytest.mark.parametrize("name", ["out_inout", "out_fully_written", "scratch_initialised",
                                  "tile_written_first", "spmd_disjoint", "barrier_sum",
                                  "range_accumulate", "war_inout"])
def test_no_false_positive(name):
    assert reads(getattr(k, name)) == []


def test_out_residue_read():
    (r,) = reads(k.out_residue)
    assert (r.tensor, r.memory, r.region, r.task, r.block) == ("y", "pl.Out", "acc", 0, 0)
    assert r.ranges == [(0, 32), (0, 64)] and r.elements == 32 * 64 and r.gm
    src = Path(r.source.split(":")[0]).read_text().splitlines()[r.line - 1]
    assert "pl.add(y[0:32, :]" in src
    e = raised(k.out_residue)
    assert isinstance(e, sim.SimulationError) and e.code == "S010"
    assert "uninitialized read" in e.message and "'y'[0:32, 0:64]" in e.message
    assert e.tensor == "y" and e.block == 0 and "'acc'" in e.region
    assert e.indices == "[0:32, 0:64]" and e.span.line == r.line
    assert "pl.InOut" in e.hint


def test_an_untraced_run_names_the_reading_task_too():
    # without the trace there is no task record: the task frame names region and task
    args = _args(k.out_half_written)
    (r,) = sim.simulate(k.out_half_written, *args, checks=("uninit",), strict=False,
                        trace=False).uninit_reads
    (t,) = reads(k.out_half_written)
    assert (r.region, r.task, r.block, r.ranges) == (t.region, t.task, t.block, t.ranges)
    assert r.region == "all" and r.task == 1


def test_partly_written_out_names_the_missing_rows():
    (r,) = reads(k.out_half_written)
    assert r.region == "all" and r.task == 1 and r.ranges == [(48, 64), (0, 64)]
    assert r.elements == 16 * 64


def test_create_tensor_without_init_value():
    (r,) = reads(k.scratch_unwritten)
    assert (r.tensor, r.memory) == ("t", "pl.create_tensor")
    assert "init_value" in raised(k.scratch_unwritten).hint


def test_create_tile_read_before_write():
    (r,) = reads(k.tile_read_before_write)
    assert (r.tensor, r.memory, r.op, r.gm) == ("acc", "pl.create_tile", "pl.add", False)
    assert r.ranges == [(0, 64), (0, 64)] and r.region == "tiles"
    e = raised(k.tile_read_before_write)
    assert "tile from pl.create_tile" in e.message


def test_store_of_a_half_written_tile():
    (r,) = reads(k.tile_half_written)
    assert r.op == "store" and r.ranges == [(32, 64), (0, 64)]


def test_orchestration_element_read():
    (r,) = reads(k.orch_read_out)
    assert r.task == -1 and r.region == "orchestration" and r.ranges == [(3, 4), (5, 6)]


def test_blocks_reading_rows_other_blocks_have_not_written():
    # without the barrier, block 0 reads rows 1..7 before their blocks ran
    (r,) = reads(k.barrier_missing)
    assert r.tensor == "part" and r.block == 0 and r.ranges == [(1, 8), (0, 64)]
    assert r.count == 7  # blocks 0..6 each saw some unwritten row (reported once per site)


def test_zero_filled_memory_is_still_unwritten():
    r = sim.simulate(k.out_residue, *_args(k.out_residue), checks=("uninit",), strict=False,
                     uninit="zero")
    assert len(r.uninit_reads) == 1


def test_check_off_costs_nothing_and_reports_nothing():
    r = sim.simulate(k.out_residue, *_args(k.out_residue))
    assert r.uninit_reads == []
