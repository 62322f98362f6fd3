"""How the runtime names what a simulated run has: dtypes, buffer addresses, tensor ids.

* dtype names are simpler's `get_dtype_name` (`task_interface/data_type.h`), upper case;
* a buffer's *address* is made up (there is no device): buffers laid end to end from
  `BASE_ADDR` in the order the run created them, each rounded up to 1024 bytes (the
  runtime's output alignment, `pto_constants.h`);
* a tensor id is the runtime's `make_tensor_id`: FNV-1a 64 over the little-endian bytes
  of (buffer address as u64, version as u32) (`dep_gen_replay.cpp`). Views never
  change a buffer's version here, so it is 0.
"""
from __future__ import annotations

import numpy as np

BASE_ADDR = 0x12C0_0000_0000  # where the made-up device addresses start
ALIGN = 1024

_NAMES = {"float32": "FLOAT32", "float16": "FLOAT16", "int32": "INT32", "int16": "INT16",
          "int8": "INT8", "uint8": "UINT8", "bfloat16": "BFLOAT16", "int64": "INT64",
          "uint64": "UINT64", "uint16": "UINT16", "uint32": "UINT32", "bool": "BOOL",
          "float8_e4m3fn": "FP8E4M3FN", "float8_e8m0fnu": "FP8E8M0",
          "float4_e2m1fn": "FP4E2M1"}


def dtype_name(dtype: np.dtype | str) -> str:
    """simpler's name of a dtype ("UNKNOWN" for one the runtime has not)."""
    return _NAMES.get(np.dtype(dtype).name, "UNKNOWN")


def tensor_id(buffer_addr: int, version: int = 0) -> int:
    """The runtime's `make_tensor_id(buffer_addr, version)`."""
    h = 0xCBF29CE484222325
    data = int(buffer_addr).to_bytes(8, "little") + (int(version) & 0xFFFFFFFF).to_bytes(
        4, "little")
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def row_major_strides(shape: tuple) -> list[int]:
    """Element strides of a row-major buffer of `shape`."""
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * int(shape[i + 1])
    return out


class BufferAddresses:
    """The made-up device address of each buffer (by uid), laid out in uid order."""

    def __init__(self, buffers: dict[int, tuple]):
        self.addr: dict[int, int] = {}
        at = BASE_ADDR
        for uid in sorted(buffers):
            _, shape, dtype, _ = buffers[uid]
            self.addr[uid] = at
            nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            at += max(ALIGN, -(-nbytes // ALIGN) * ALIGN)

    def tensor_id(self, uid: int) -> int:
        return tensor_id(self.addr[uid], 0)


__all__ = ["BASE_ADDR", "BufferAddresses", "dtype_name", "row_major_strides", "tensor_id"]
