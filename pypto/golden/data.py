"""A harness run's data: the inputs made from specs (or replayed from a directory that
`save_data` wrote), what the golden function is handed, and the goldens.

Memory is the point of most of this module. A DeepSeek layer's weights are several GB,
and pypto-lib's harness holds every input three times (the tensors, a snapshot clone,
and a clone per golden call). Here the simulation runs before the golden (see
`pypto.golden.runner`), so:

* the simulator reads the host arrays in place (it never writes a `pl.Tensor`
  argument's host array: `pypto.sim.runtime.transfers`);
* only the arrays the simulation writes in place (`Out` / `InOut` parameters) are
  copied first, and only when the golden needs their initial values (`before_run`);
* the golden then takes the large read-only inputs themselves, not clones
  (`SHARE_BYTES` and up: the weights). pypto-lib's goldens may write into their inputs
  (a state tensor updated in place) and its harness makes that harmless, so inputs
  below that size are still cloned and behave exactly as there. torch counts every
  in-place write into a tensor (`Tensor._version`, shared with its views), so a golden
  that writes into a shared one is caught (`GoldenInputs.written`): its output is still
  what it computed from unmodified inputs, but the comparators and the diagnosis, which
  read the inputs afterwards, would see the modified values, and the report says so.
  numpy goldens (small, the project's own tests) get copies as before.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.golden import _interop as io
from pypto.golden.spec import ScalarSpec, TensorSpec

SHARE_BYTES = 64 << 20
"""Inputs of at least this many bytes are handed to a torch golden without a clone."""


def data_file(dir_: Path, name: str) -> Path | None:
    for ext in (".npy", ".pt"):
        p = dir_ / f"{name}{ext}"
        if p.is_file():
            return p
    return None


def load_array(path: Path | None, dtype: np.dtype) -> np.ndarray:
    if path is None:  # the callers list missing files first; this names any they miss
        raise FileNotFoundError("a golden_data file is missing")
    if path.suffix == ".pt":
        import torch  # the user pointed us at torch data

        return np.array(io.to_numpy(torch.load(path, weights_only=True)), copy=True)
    arr = np.load(path)
    if arr.dtype != dtype and arr.dtype.kind in "iuV" and arr.dtype.itemsize == dtype.itemsize \
            and dtype.kind == "V":
        arr = arr.view(dtype)  # ml_dtypes data is stored as its bits
    return arr


def save_array(dir_: Path, name: str, value: np.ndarray, with_torch: bool) -> None:
    dir_.mkdir(parents=True, exist_ok=True)
    arr = np.asarray(value)
    bits = arr.view(np.uint16 if arr.dtype.itemsize == 2 else np.uint8) \
        if arr.dtype.kind == "V" else arr
    np.save(dir_ / f"{name}.npy", bits)
    torch = io.torch_or_none() if with_torch else None
    if torch is not None:
        torch.save(io.to_torch(arr.copy()) if arr.ndim else
                   io.to_torch(arr.reshape(1).copy()).reshape(()), dir_ / f"{name}.pt")


def required_files(spec: Any) -> list[tuple[str, str]]:
    """(sub-directory, name) of the files a replay of `spec` reads."""
    if isinstance(spec, ScalarSpec):
        return [("in", spec.name)]
    if not spec.is_output:
        return [("in", spec.name)]
    need = [("out", spec.name)]
    if spec.init_value is not None:
        need.append(("in", spec.name))
    return need


def replayed_scalar(v: np.ndarray, spec: ScalarSpec) -> Any:
    if io.is_torch_dtype(spec.dtype):
        torch = io.torch_or_none()
        return io.to_torch(v.reshape(1).copy()).reshape(()).to(spec.dtype) if torch else v.item()
    return np.array(v)


def starts_at_zero(spec: TensorSpec) -> bool:
    """A pure output: its golden entry starts as zeros and nothing of it is saved."""
    return spec.is_output and spec.init_value is None


def before_run(tensor_specs: list[TensorSpec], host: dict[str, np.ndarray],
               written: set[str]) -> dict[str, np.ndarray]:
    """Copies of the initial values the simulation is about to overwrite in place: the
    arrays of the parameters it writes, except pure outputs (their golden starts at
    zero). Every other input stays shared with the golden."""
    return {s.name: host[s.name].copy() for s in tensor_specs
            if s.name in written and not starts_at_zero(s)}


def initial_value(spec: TensorSpec, host: dict[str, np.ndarray],
                  kept: dict[str, np.ndarray]) -> np.ndarray:
    """What `spec` held before the simulation ran (for saving and for the golden)."""
    return kept.get(spec.name, host[spec.name])


@dataclass
class GoldenInputs:
    """The golden's outputs and the inputs it wrote into although they are not outputs."""

    outputs: dict[str, np.ndarray]
    written: list[str] = field(default_factory=list)


def compute_golden(specs: list, scalars: dict, host: dict[str, np.ndarray],
                   kept: dict[str, np.ndarray], golden_fn: Callable,
                   torch_run: bool) -> GoldenInputs:
    """Call `golden_fn` on its own dict: scalars as numbers, pure outputs as zeros, the
    kept initial values of written parameters (the golden may have them: nothing reads
    them afterwards), copies of other outputs, and the large inputs themselves (torch)
    or copies of the inputs."""
    scratch: dict[str, Any] = {}
    shared: list[str] = []
    for s in specs:
        if isinstance(s, ScalarSpec):
            scratch[s.name] = scalars[s.name].to_python()
        elif starts_at_zero(s):
            scratch[s.name] = np.zeros(s.shape, dtype=s.np_dtype)
        elif s.name in kept:
            scratch[s.name] = kept[s.name]
        elif s.is_output:  # the golden fills it; the host array is what the run gave
            scratch[s.name] = host[s.name].copy()
        elif torch_run and host[s.name].nbytes >= SHARE_BYTES:
            scratch[s.name] = host[s.name]
            shared.append(s.name)
        else:
            scratch[s.name] = host[s.name].copy()
    if torch_run:
        scratch = {k: io.to_torch(v) if isinstance(v, np.ndarray) else v
                   for k, v in scratch.items()}
    versions = {n: scratch[n]._version for n in shared}
    golden_fn(scratch)
    outputs = {s.name: np.asarray(io.to_numpy(scratch[s.name]))
               for s in specs if isinstance(s, TensorSpec) and s.is_output}
    written = [n for n in shared if scratch[n]._version != versions[n]]
    return GoldenInputs(outputs, written)


def seed_global_generators(seed: int) -> None:
    """Seed numpy's and torch's global generators, which spec factories draw from
    (`np.random.randn`, `torch.randn`): the same inputs on every run with this seed. A
    spec with its own generator (`np.random.default_rng(0)`) keeps it."""
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
