"""enable_dump_args -> args_dump.json + args.bin in the layout of simpler's
ArgsDumpCollector::export_dump_files (args_dump_collector.cpp, simpler 6ebaf77); the
field lists below are copied from that writer, not from its viewer."""
import json
import re

import numpy as np
import pytest
from dfx_kernels import (
    listed,
    listed_golden,
    scale_golden,
    scale_inplace,
    scale_specs,
    softmax,
    softmax_golden,
    softmax_specs,
    staged,
    staged_golden,
    staged_specs,
)

from pypto.dfx.args_dump import DTYPE_NAMES, dtype_name
from pypto.errors import ConfigError
from pypto.golden import run_jit
from pypto.sim import SimConfig

# the manifest's keys, in the writer's order
TOP_KEYS = ["run_dir", "bin_format", "dump_args_level", "total_args", "before_dispatch",
            "after_completion", "input_args", "output_args", "inout_args", "truncated_args",
            "dropped_records", "dropped_overwrite", "bin_file", "args"]
# one arg's keys (`value` only for scalars; `arg_index_ambiguous` never here)
ARG_KEYS = ["task_id", "func_id", "arg_index", "role", "stage", "kind", "dtype",
            "is_contiguous", "shape", "strides", "start_offset", "numel", "bin_offset",
            "bin_size", "truncated", "overwritten"]
# get_dtype_name (data_type.h)
RUNTIME_DTYPES = {"FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT8", "BFLOAT16", "INT64",
                  "UINT64", "UINT16", "UINT32", "BOOL", "FP8E4M3FN", "FP8E8M0", "FP4E2M1"}


def dump(tmp_path, kernel, specs, golden, level):
    r = run_jit(kernel, specs(), golden, runtime_cfg=dict(enable_dump_args=level),
                compile_cfg=dict(output_dir=str(tmp_path / "w")), verbose=False)
    assert r.passed, r.error
    where = tmp_path / "w" / "dfx_outputs" / "args_dump"
    return r, json.loads((where / "args_dump.json").read_text()), where


def test_level2_manifest_matches_the_writer(tmp_path):
    r, m, where = dump(tmp_path, softmax, softmax_specs, softmax_golden, 2)
    assert list(m) == TOP_KEYS
    assert m["run_dir"] == "args_dump" and m["dump_args_level"] == 2
    assert m["bin_format"] == {"type": "logical_contiguous", "byte_order": "little_endian"}
    assert m["bin_file"] == "args.bin"
    # 4 softmax_rows tasks: x before dispatch, the row offset (a scalar) before, y after
    assert (m["total_args"], m["before_dispatch"], m["after_completion"]) == (12, 8, 4)
    assert (m["input_args"], m["output_args"], m["inout_args"]) == (8, 4, 0)
    assert m["truncated_args"] == m["dropped_records"] == m["dropped_overwrite"] == 0
    for a in m["args"]:
        keys = [k for k in a if k != "value"]
        assert keys == ARG_KEYS
        assert re.fullmatch(r"0x[0-9a-f]{16}", a["task_id"])
        assert a["dtype"] in RUNTIME_DTYPES and a["dtype"] == a["dtype"].upper()
        assert ("value" in a) == (a["kind"] == "scalar")
    # sorted by task id, stage, arg index, role (the writer's std::sort)
    order = [(int(a["task_id"], 16), a["stage"] != "before_dispatch", a["arg_index"])
             for a in m["args"]]
    assert order == sorted(order)
    scalars = [a["value"] for a in m["args"] if a["kind"] == "scalar"]
    assert scalars == [0, 32, 64, 96]
    last = m["args"][-1]
    assert (last["role"], last["stage"], last["arg_index"]) == ("output", "after_completion", 1)
    assert last["shape"] == [128, 64] and last["strides"] == [64, 1]
    assert last["numel"] == 128 * 64 and last["bin_size"] == 128 * 64 * 4
    blob = (where / "args.bin").read_bytes()
    y = np.frombuffer(blob[last["bin_offset"]:last["bin_offset"] + last["bin_size"]],
                      dtype="<f4").reshape(128, 64)
    np.testing.assert_array_equal(y, r.outputs["y"].actual)  # the run's output
    first = m["args"][0]
    x = np.frombuffer(blob[first["bin_offset"]:first["bin_offset"] + first["bin_size"]],
                      dtype="<f4").reshape(128, 64)
    np.testing.assert_array_equal(x, r.sim.arg_dumps[0].data)


def test_inout_is_dumped_before_and_after(tmp_path):
    r, m, where = dump(tmp_path, scale_inplace, scale_specs, scale_golden, 2)
    inout = [a for a in m["args"] if a["role"] == "inout"]
    assert [a["stage"] for a in inout] == ["before_dispatch", "after_completion"] * 2
    assert m["inout_args"] == 4
    blob = (where / "args.bin").read_bytes()
    before, after = inout[0], inout[1]
    x0 = np.frombuffer(blob[before["bin_offset"]:][:before["bin_size"]], "<f4")
    x1 = np.frombuffer(blob[after["bin_offset"]:][:after["bin_size"]], "<f4")
    np.testing.assert_array_equal(x0[:32 * 32], np.arange(32 * 32, dtype=np.float32))
    np.testing.assert_array_equal(x1[:32 * 32], np.arange(32 * 32, dtype=np.float32) * 1.5)
    a = next(a for a in m["args"] if a["kind"] == "scalar" and a["dtype"] == "FLOAT32")
    assert a["value"] == 1.5 and a["bin_size"] == 0 and a["shape"] == []


def test_level3_is_metadata_only_without_tags(tmp_path):
    _, m, where = dump(tmp_path, softmax, softmax_specs, softmax_golden, 3)
    assert m["bin_file"] is None and not (where / "args.bin").exists()
    assert m["total_args"] == 12 and all(a["bin_size"] == 0 for a in m["args"])


def test_level1_dumps_only_tagged_arguments(tmp_path):
    _, m, _ = dump(tmp_path, softmax, softmax_specs, softmax_golden, 1)
    assert m["total_args"] == 0 and m["args"] == []


def _payload(where, arg):
    blob = (where / "args.bin").read_bytes()
    return np.frombuffer(blob[arg["bin_offset"]:][:arg["bin_size"]], "<f4")


def test_level1_lists_the_tagged_tensor_of_every_task_that_receives_it(tmp_path):
    # pl.dump_tag(tmp): the two `double` tasks write it (Out: after completion), the two
    # `inc` tasks read it (In: before dispatch); x and y are never listed
    r, m, where = dump(tmp_path, staged, staged_specs, staged_golden, 1)
    assert m["total_args"] == 4 and m["bin_file"] == "args.bin"
    assert [(a["stage"], a["role"], a["arg_index"]) for a in m["args"]] == [
        ("after_completion", "output", 0)] * 2 + [("before_dispatch", "input", 1)] * 2
    assert {s.tensor for s in r.sim.arg_dumps} == {"tmp"}
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    # the last `double` task leaves both halves of tmp written: what `inc` reads
    np.testing.assert_array_equal(_payload(where, m["args"][1]), (2 * x).ravel())
    np.testing.assert_array_equal(_payload(where, m["args"][3]), (2 * x).ravel())


def test_level3_has_every_arguments_metadata_and_only_the_tagged_payloads(tmp_path):
    r, m, where = dump(tmp_path, staged, staged_specs, staged_golden, 3)
    # per task: tmp, x or y, the row offset scalar
    assert m["total_args"] == 12 and m["bin_file"] == "args.bin"
    with_payload = [s for s in r.sim.arg_dumps if s.data is not None]
    assert [s.tensor for s in with_payload] == ["tmp"] * 4
    assert all(s.tagged for s in with_payload)
    sizes = sorted(a["bin_size"] for a in m["args"])
    assert sizes == [0] * 8 + [64 * 32 * 4] * 4
    assert (where / "args.bin").stat().st_size == 4 * 64 * 32 * 4


def test_dumps_on_one_pl_at_tags_only_that_task(tmp_path):
    r, m, where = dump(tmp_path, listed, staged_specs, listed_golden, 1)
    assert [(s.task, s.tensor, s.stage) for s in r.sim.arg_dumps] == [
        (0, "x", "before_dispatch")]
    assert m["total_args"] == 1 and m["args"][0]["role"] == "input"
    x = np.arange(64 * 32, dtype=np.float32)
    np.testing.assert_array_equal(_payload(where, m["args"][0]), x)


def test_dtype_names_are_the_runtimes():
    assert set(DTYPE_NAMES.values()) == RUNTIME_DTYPES
    assert dtype_name(np.dtype("float32")) == "FLOAT32"
    assert dtype_name(np.dtype("float64")) == "UNKNOWN"


def test_bad_levels_are_refused():
    with pytest.raises(ConfigError, match=r"SimConfig.dump_args must be an args dump level "
                                          r"0, 1, 2 or 3, got 5"):
        SimConfig(dump_args=5)
    r = run_jit(softmax, softmax_specs(), softmax_golden, runtime_cfg=dict(enable_dump_args=7),
                verbose=False)
    assert not r.passed
    assert r.error == ("runtime_cfg enable_dump_args must be 0-3 (0 off, 1 tagged, 2 all, 3 "
                       "metadata + tagged payload), got 7")


def test_capture_is_off_by_default():
    from pypto.sim import simulate
    x = np.ones((128, 64), np.float32)
    res = simulate(softmax, x, np.empty_like(x))
    assert res.arg_dumps == [] and res.dump_args_level == 0
