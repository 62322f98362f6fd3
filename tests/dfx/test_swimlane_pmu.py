"""enable_chip_swimlane / enable_pmu -> an estimated chip_swimlane_records.json in the layout
of simpler's ChipSwimlaneCollector::export_swimlane_json (chip_swimlane_collector.cpp) and
pmu.csv with the header of the a2a3 PmuCollector (pmu_collector.cpp), simpler 6ebaf77."""
import json
import math

from dfx_kernels import matmul, softmax, softmax_golden, softmax_specs

from pypto.dfx.pmu import header
from pypto.dfx.schedule import CorePool, sides
from pypto.golden import TensorSpec, run_jit

# the collector's a2a3 event-2 (PIPE_UTILIZATION) header, built from pmu_profiling.h
A2A3_PMU_HEADER = ("thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,"
                   "vec_busy_cycles,cube_busy_cycles,scalar_busy_cycles,mte1_busy_cycles,"
                   "mte2_busy_cycles,mte3_busy_cycles,icache_miss,icache_req,event_type")


def run(tmp_path, **cfg):
    r = run_jit(softmax, softmax_specs(), softmax_golden, runtime_cfg=cfg,
                compile_cfg=dict(output_dir=str(tmp_path / "w")), verbose=False)
    assert r.passed, r.error
    return r, tmp_path / "w" / "dfx_outputs"


def test_swimlane_records_match_the_writer(tmp_path):
    r, dfx = run(tmp_path, enable_chip_swimlane=True)
    doc = json.loads((dfx / "chip_swimlane_records.json").read_text())
    assert list(doc) == ["chip_swimlane_level", "metadata", "aicore_tasks", "aicpu_tasks"]
    assert doc["chip_swimlane_level"] == 2  # True asks 4; the estimate holds level 2
    meta = doc["metadata"]
    assert meta["clock_freq_hz"] == 50_000_000  # a2a3's PLATFORM_PROF_SYS_CNT_FREQ
    assert meta["num_cores"] == 72 == len(meta["core_types"])
    assert meta["core_types"][:24] == ["aic"] * 24 and meta["core_types"][24:] == ["aiv"] * 48
    assert meta["estimated"] is True and meta["source"] == "pypto-lab-sim"
    rows = doc["aicore_tasks"]
    assert len(rows) == 4 and all(len(row) == 6 for row in rows)
    assert all(len(row) == 4 for row in doc["aicpu_tasks"])
    deps = json.loads((dfx / "deps.json").read_text())
    assert {row[1] for row in rows} == {int(t["task_id"]) for t in deps["tasks"]}
    for core, _token, reg, start, end, r2s in rows:
        assert meta["core_types"][core] == "aiv" and start >= 1000 and end > start
        assert reg == 1 and r2s == 0
        assert [core, reg, start, end] in doc["aicpu_tasks"]
    # independent tasks: four cores at once, each block the cost model's cycles in ticks
    assert len({row[0] for row in rows}) == 4 and len({row[3] for row in rows}) == 1
    cycles = r.sim.trace.tasks[0].block_cycles[0]
    assert rows[0][4] - rows[0][3] == math.ceil(cycles * 50e6 / 1.8e9) == 6
    names = json.loads(next(dfx.glob("name_map_*.json")).read_text())
    assert names["level"] == 2
    assert list(names["callable_id_to_name"].values()) == ["softmax_softmax_rows"]


def test_swimlane_level1_has_no_aicpu_stream(tmp_path):
    _, dfx = run(tmp_path, enable_chip_swimlane=1)
    doc = json.loads((dfx / "chip_swimlane_records.json").read_text())
    assert doc["chip_swimlane_level"] == 1 and doc["aicpu_tasks"] == []


def test_pmu_header_is_the_a2a3_writers(tmp_path):
    r, dfx = run(tmp_path, enable_pmu=2)
    lines = (dfx / "pmu.csv").read_text().splitlines()
    assert lines[0] == A2A3_PMU_HEADER == header(2)
    rows = [line.split(",") for line in lines[1:]]
    assert len(rows) == sum(t.blocks for t in r.sim.trace.tasks) == 4  # one per block
    t0 = r.sim.trace.tasks[0]
    for row in rows:
        assert len(row) == 15 and row[4] == "1" and row[-1] == "2"  # AIV rows, event 2
        assert row[2].startswith("0x") and len(row[2]) == 18
        assert int(row[5]) == round(t0.block_cycles[0])
        assert int(row[6]) == round(t0.cycles["vector"])  # vec_busy_cycles
        assert int(row[7]) == 0  # no cube work
        assert int(row[10]) == round(t0.cycles["mte2"]) and row[12:14] == ["0", "0"]


def test_pmu_other_event_types_keep_their_header(tmp_path):
    _, dfx = run(tmp_path, enable_pmu=4)
    first, second = (dfx / "pmu.csv").read_text().splitlines()[:2]
    assert first.split(",")[6:-1] == ["ub_read_req", "ub_write_req", "l1_read_req",
                                      "l1_write_req", "l2_read_req", "l2_write_req",
                                      "main_read_req", "main_write_req"]
    assert second.split(",")[6:] == ["0"] * 8 + ["4"]


def test_a_cube_task_runs_on_an_aic_core(tmp_path):
    import numpy as np
    specs = [TensorSpec("a", [64, 64], np.float16, init_value=lambda: np.ones((64, 64))),
             TensorSpec("b", [64, 64], np.float16, init_value=lambda: np.ones((64, 64))),
             TensorSpec("c", [64, 64], np.float32, is_output=True)]
    r = run_jit(matmul, specs, runtime_cfg=dict(enable_pmu=2, enable_chip_swimlane=2),
                compile_cfg=dict(output_dir=str(tmp_path / "w")), verbose=False)
    dfx = tmp_path / "w" / "dfx_outputs"
    row = (dfx / "pmu.csv").read_text().splitlines()[1].split(",")
    t = r.sim.trace.tasks[0]
    assert row[4] == "0" and int(row[1]) < 24  # core_type AIC, an AIC core id
    assert int(row[7]) == round(t.cycles["cube"]) and int(row[9]) == round(t.cycles["mte1"])
    lane = json.loads((dfx / "chip_swimlane_records.json").read_text())["aicore_tasks"]
    assert lane[0][0] == int(row[1])


def test_core_pool_takes_the_earliest_free_core():
    pool = CorePool(2, 2)
    cores, start = pool.take(("AIC", "AIV"), 5)
    assert (cores, start) == ({"AIC": 0, "AIV": 0}, 5)
    pool.release(cores, 9)
    assert pool.take(("AIV",), 0) == ({"AIV": 1}, 0)
    assert pool.take(("AIC",), 0) == ({"AIC": 1}, 0)
    assert sides({"mte", "vector"}) == ("AIV",) and sides({"cube"}) == ("AIC",)
    assert sides({"cube", "vector"}) == ("AIC", "AIV")
