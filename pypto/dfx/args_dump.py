"""`enable_dump_args` -> `dfx_outputs/args_dump/args_dump.json` + `args.bin`, as simpler's
`ArgsDumpCollector::export_dump_files` writes them (`args_dump_collector.cpp`, simpler
6ebaf77), from the simulator's task-boundary snapshots (`pypto.sim.machine.capture`).

The manifest: `run_dir`, `bin_format` {logical_contiguous, little_endian},
`dump_args_level`, the counts (`total_args`, `before_dispatch`, `after_completion`,
`input_args`, `output_args`, `inout_args`, `truncated_args`, `dropped_records`,
`dropped_overwrite`), `bin_file` ("args.bin"; null at level 3 when nothing carries a
payload) and `args`, sorted by (task_id, stage, arg_index, role), each
    task_id "0x%016x", func_id [active kernel ids], arg_index, role, stage, kind,
    dtype (upper case, `data_type.h`), value (scalars), is_contiguous, shape, strides,
    start_offset, numel, bin_offset, bin_size, truncated, overwritten.
Payloads go into `args.bin` in the order the snapshots were taken (the collector's
arrival order), each its view's elements in row-major order, little-endian; a
bfloat16 element is its raw 2-byte word. Nothing is ever truncated, dropped or
overwritten here (the device's arena and ring limits do not exist).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from pypto.sim.machine.capture import AFTER, ArgSnapshot

# numpy dtype name -> the runtime's DataType name (`get_dtype_name`, data_type.h)
DTYPE_NAMES = {
    "float32": "FLOAT32", "float16": "FLOAT16", "int32": "INT32", "int16": "INT16",
    "int8": "INT8", "uint8": "UINT8", "bfloat16": "BFLOAT16", "int64": "INT64",
    "uint64": "UINT64", "uint16": "UINT16", "uint32": "UINT32", "bool": "BOOL",
    "float8_e4m3fn": "FP8E4M3FN", "float8_e8m0fnu": "FP8E8M0", "float4_e2m1fn": "FP4E2M1",
}
_STAGE_ORDER = {"before_dispatch": 0, "after_completion": 1}
_ROLE_ORDER = {"input": 0, "output": 1, "inout": 2}


def dtype_name(dtype: np.dtype) -> str:
    """The runtime's name of a dtype ("UNKNOWN" for one it has none for)."""
    return DTYPE_NAMES.get(np.dtype(dtype).name, "UNKNOWN")


def write_args_dump(snapshots: list[ArgSnapshot], level: int, ids: Any,
                    dfx_dir: Path) -> Path:
    """Write `args_dump/args_dump.json` and `args.bin` under `dfx_dir` from a run's
    snapshots (`SimResult.arg_dumps`) and its task ids (`RuntimeTaskIds`); returns the
    `args_dump` directory."""
    run_dir = dfx_dir / "args_dump"
    run_dir.mkdir(parents=True, exist_ok=True)
    offsets: dict[int, tuple[int, int]] = {}
    written = 0
    payload = [s for s in snapshots if s.kind == "tensor" and s.data is not None]
    if level != 3 or payload:
        with open(run_dir / "args.bin", "wb") as fh:
            for s in payload:
                raw = _little_endian(s.data).tobytes()
                offsets[id(s)] = (written, len(raw))
                fh.write(raw)
                written += len(raw)
    order = sorted(snapshots, key=lambda s: (ids.raw(s.task), _STAGE_ORDER[s.stage],
                                             s.arg_index, _ROLE_ORDER[s.role]))
    lines = [_arg_line(s, ids, offsets.get(id(s), (0, 0))) for s in order]
    head = _header(run_dir.name, level, order, written, level != 3 or bool(payload))
    (run_dir / "args_dump.json").write_text(head + ",\n".join(lines) + "\n  ]\n}\n")
    return run_dir


def _little_endian(a: Any) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return a


def _count(order: Iterable[ArgSnapshot], key: str, value: str) -> int:
    return sum(1 for s in order if getattr(s, key) == value)


def _header(run_dir: str, level: int, order: list[ArgSnapshot], written: int,
            has_bin: bool) -> str:
    rows = [
        f'  "run_dir": "{run_dir}"',
        '  "bin_format": {\n    "type": "logical_contiguous",\n'
        '    "byte_order": "little_endian"\n  }',
        f'  "dump_args_level": {level}',
        f'  "total_args": {len(order)}',
        f'  "before_dispatch": {len(order) - _count(order, "stage", AFTER)}',
        f'  "after_completion": {_count(order, "stage", AFTER)}',
        f'  "input_args": {_count(order, "role", "input")}',
        f'  "output_args": {_count(order, "role", "output")}',
        f'  "inout_args": {_count(order, "role", "inout")}',
        '  "truncated_args": 0', '  "dropped_records": 0', '  "dropped_overwrite": 0',
        '  "bin_file": ' + ('"args.bin"' if has_bin else "null"),
    ]
    return "{\n" + ",\n".join(rows) + ',\n  "args": [\n'


def _arg_line(s: ArgSnapshot, ids: Any, where: tuple[int, int]) -> str:
    funcs = ", ".join(str(k) for k in ids.kernel_ids(s.task) if k >= 0)
    dims = ", ".join(map(str, s.shape))
    strides = ", ".join(map(str, s.strides))
    numel = math.prod(s.shape) if s.shape else 1
    value = f", \"value\": {_scalar_json(s.value, s.dtype)}" if s.kind == "scalar" else ""
    return (f'    {{"task_id": "{ids.hex(s.task)}", "func_id": [{funcs}], '
            f'"arg_index": {s.arg_index}, "role": "{s.role}", "stage": "{s.stage}", '
            f'"kind": "{s.kind}", "dtype": "{dtype_name(s.dtype)}"{value}, '
            f'"is_contiguous": {_bool(_contiguous(s))}, "shape": [{dims}], '
            f'"strides": [{strides}], "start_offset": {s.start_offset}, "numel": {numel}, '
            f'"bin_offset": {where[0]}, "bin_size": {where[1]}, "truncated": false, '
            f'"overwritten": false}}')


def _contiguous(s: ArgSnapshot) -> bool:
    """PyTorch-contiguous: strides[d] == prod(shape[d+1:]) (`dump_arg_is_contiguous`)."""
    expected = 1
    for dim, stride in zip(reversed(s.shape), reversed(s.strides)):
        if stride != expected:
            return False
        expected *= dim
    return True


def _bool(b: bool) -> str:
    return "true" if b else "false"


def _scalar_json(value: Any, dtype: np.dtype) -> str:
    """A scalar as `write_scalar_json_value` prints it."""
    name = dtype_name(dtype)
    if name == "FLOAT32" or (name not in DTYPE_NAMES.values() and isinstance(value, float)):
        f = float(np.float32(value))
        if math.isnan(f):
            return "null"
        if math.isinf(f):
            return '"-$Inf"' if f < 0 else '"$Inf"'
        text = f"{f:g}"  # (C++ stream default: 6 significant digits)
        return text if ("." in text or "e" in text) else text + ".0"
    if name == "BOOL":
        return _bool(bool(value))
    if name in ("INT32", "UINT32", "INT64"):
        return str(int(value))
    return str(int(np.asarray(value).astype(dtype).view(f"u{np.dtype(dtype).itemsize}")))


__all__ = ["DTYPE_NAMES", "dtype_name", "write_args_dump"]
