"""deps.json as simpler's dep_gen replay writes it (`write_deps_json` in
src/a2a3/runtime/tensormap_and_ringbuffer/host/dep_gen_replay.cpp, simpler 6ebaf77),
with the runtime rule's edges, and what the device cannot say in keys its readers
ignore."""
import json
import sys
from pathlib import Path

import numpy as np

import pypto.language as pl
import pypto.sim as sim
from pypto.dfx.deps_json import deps_document, write_deps_json
from pypto.dfx.runtime_types import dtype_name, tensor_id

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sanitizers"))
import san_kernels as k

# the writer's keys, in the order it writes them
TASK_KEYS = ["task_id", "scope", "early_dispatch", "kernel_ids", "block_num", "args"]
ARG_KEYS = ["idx", "type", "tensor_id", "dtype", "shape", "start_offset", "strides"]
OUTPUT_ARG_KEYS = ["idx", "type"]
TENSOR_KEYS = ["tensor_id", "buffer_addr", "version", "dtype", "buffer_numel"]
EDGE_KEYS = {
    "explicit": ["pred", "succ", "arg", "source", "flags"],
    "creator": ["pred", "succ", "arg", "source", "flags", "tensor_id", "consumer_dtype",
                "consumer_shape", "consumer_start_offset", "consumer_strides"],
    "tensormap": ["pred", "succ", "arg", "source", "flags", "overlap", "tensor_id",
                  "consumer_dtype", "consumer_shape", "consumer_start_offset",
                  "consumer_strides", "producer_shape", "producer_start_offset",
                  "producer_strides"],
}
ARG_TYPES = {"INPUT", "OUTPUT", "INOUT", "OUTPUT_EXISTING"}
OURS = "pypto_lab"  # the one key of ours, ignored by deps_viewer

M = 32


@pl.jit
def chain(x: pl.Tensor[[M, 64], pl.FP32], y: pl.InOut[pl.Tensor[[M, 64], pl.FP32]]):
    t = pl.create_tensor([M, 64], dtype=pl.FP32)
    for i in pl.parallel(0, M, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill", allow_early_resolve=True):
            t[i:i + 8, :] = pl.exp(x[i:i + 8, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc") as ta:
        y[:, :] = pl.add(y[:, :], t[:, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="again", deps=[ta]):
        y[:, :] = pl.add(y[:, :], x[:, :])
    return y


def _doc(kernel, *shapes):
    args = [np.ones(s, np.float32) for s in shapes]
    r = sim.simulate(kernel, *args, checks=())
    c = kernel.compile()
    return deps_document(r.trace, c.program, c.analyses)


def _is_u64_text(v):
    return isinstance(v, str) and v.isdigit() and int(v) < 1 << 64


def test_every_record_has_the_writers_keys_in_its_order():
    d = _doc(chain, (M, 64), (M, 64))
    assert list(d) == ["tasks", "tensors", "edges", OURS]
    for t in d["tasks"]:
        assert list(t) == TASK_KEYS
        assert _is_u64_text(t["task_id"]) and t["scope"] in ("auto", "manual")
        assert len(t["kernel_ids"]) == 3 and t["block_num"] >= 1
        for a in t["args"]:
            assert a["type"] in ARG_TYPES
            assert list(a) == (OUTPUT_ARG_KEYS if a["type"] == "OUTPUT" else ARG_KEYS)
            if a["type"] != "OUTPUT":
                assert _is_u64_text(a["tensor_id"]) and _is_u64_text(a["start_offset"])
                assert a["dtype"] == a["dtype"].upper()
    for t in d["tensors"]:
        assert list(t) == TENSOR_KEYS
        assert all(_is_u64_text(t[f]) for f in ("tensor_id", "buffer_addr", "buffer_numel"))
        assert t["tensor_id"] == str(tensor_id(int(t["buffer_addr"]), t["version"]))
    for e in d["edges"]:
        assert list(e) == EDGE_KEYS[e["source"]] + [OURS]
        assert _is_u64_text(e["pred"]) and _is_u64_text(e["succ"])
        assert e["flags"] in (["wait"], ["wait", "retain"])
        assert e[OURS]["reason"]


def test_the_edges_are_the_runtime_rules():
    d = _doc(chain, (M, 64), (M, 64))
    tasks = {int(t["task_id"]): t for t in d["tasks"]}
    # 4 fill tasks in the parallel loop's body scope (ring 2), acc and again in the
    # function body's (ring 1, after the alloc task (1, 0))
    assert sorted(tasks) == [(1 << 32) | 1, (1 << 32) | 2] + [(2 << 32) | i for i in range(4)]
    assert all(tasks[(2 << 32) | i]["early_dispatch"] for i in range(4))
    acc, again = (1 << 32) | 1, (1 << 32) | 2
    alloc = 1 << 32
    edges = {(int(e["pred"]), int(e["succ"]), e["source"]) for e in d["edges"]}
    fills = {(2 << 32) | i for i in range(4)}
    # each fill writes t (OUTPUT_EXISTING: no lookup) after its creator, the alloc
    assert {(alloc, f, "creator") for f in fills} <= edges
    # acc reads t: the alloc retains it, the four fills are in the tensor map
    assert {(alloc, acc, "creator")} | {(f, acc, "tensormap") for f in fills} <= edges
    # again: its deps=, and y's tensor-map entry (acc's INOUT write, covered)
    assert (acc, again, "explicit") in edges and (acc, again, "tensormap") in edges
    by = {(int(e["pred"]), int(e["succ"]), e["source"]): e for e in d["edges"]}
    e = by[(acc, again, "tensormap")]
    assert e["overlap"] == "covered" and e["consumer_shape"] == [M, 64]
    # a region takes the whole tensor (it slices inside), so acc's whole-tensor read
    # covers each fill's registered window
    f = by[((2 << 32) | 1, acc, "tensormap")]
    assert f["overlap"] == "covered" and f["producer_shape"] == [M, 64]
    assert f["consumer_dtype"] == "FLOAT32" and f["consumer_strides"] == [64, 1]
    assert len(d["edges"]) == len({(x["pred"], x["succ"], x["source"], x["arg"])
                                   for x in d["edges"]})


def test_a_missing_write_after_read_edge_is_named_with_both_lines_and_the_fix():
    d = _doc(k.war_inout, (64, 64), (64, 64))
    (m,) = d[OURS]["missing_edges"]
    assert m["tensor"] == "t" and m["kind"] == "read-write" and m["box"] == [[0, 64], [0, 64]]
    assert m["pred_source"].endswith("san_kernels.py:147:9")
    assert m["succ_source"].endswith("san_kernels.py:148:9")
    assert "deps=" in m["fix"] and "never after earlier readers" in m["reason"]
    # the runtime rule gives the writer no edge from the reader
    assert not [e for e in d["edges"] if e["source"] != "creator"]
    assert _doc(k.war_deps, (64, 64), (64, 64))[OURS]["missing_edges"] == []


def test_the_harness_race_check_reports_the_war_kernel():
    x = np.ones((64, 64), np.float32)
    r = sim.simulate(k.war_inout, x, np.zeros_like(x), checks=("race",), strict=False)
    (race,) = r.races
    assert (race.first.name, race.second.name) == ("read_into", "overwrite_inout")


def test_write_deps_json_writes_the_file_and_the_name_map(tmp_path):
    x = np.ones((M, 64), np.float32)
    r = sim.simulate(chain, x, x.copy(), checks=())
    c = chain.compile()
    deps, names = write_deps_json(r.trace, c.program, c.analyses, tmp_path / "dfx", "run_1")
    assert deps.name == "deps.json" and names.name == "name_map_run_1.json"
    d = json.loads(deps.read_text())
    n = json.loads(names.read_text())
    assert n["level"] == 2 and n["orchestrator_name"] is None
    used = {i for t in d["tasks"] for i in t["kernel_ids"] if i >= 0}
    assert {int(i) for i in n["callable_id_to_name"]} == used
    assert set(n["callable_id_to_name"].values()) == {"chain_fill", "chain_acc", "chain_again"}


def test_dtype_names_are_the_runtimes():
    import ml_dtypes
    assert [dtype_name(t) for t in (np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                    np.uint8, np.int64, np.bool_)] == \
        ["FLOAT32", "FLOAT16", "BFLOAT16", "INT8", "UINT8", "INT64", "BOOL"]
    assert dtype_name(np.complex64) == "UNKNOWN"


def test_tensor_id_is_fnv1a_of_address_and_version():
    # FNV-1a 64 over 12 zero bytes, worked by hand from the offset basis and prime
    h = 0xCBF29CE484222325
    for _ in range(12):
        h = (h * 0x100000001B3) % (1 << 64)
    assert tensor_id(0, 0) == h
    assert tensor_id(1, 0) != tensor_id(0, 1)
