"""Host <-> device transfers of one run: binding the caller's arguments (checked, then
uploaded) and copying the outputs back.

Every property of every argument is checked before any is touched, so an argument
error leaves all of the caller's arrays as they were. Arguments are used in place (no
copy) when that cannot be observed: an In array nothing in the program writes is read
through a read-only view; Out / InOut arrays are the device buffers themselves when
they are C-contiguous, writable and overlap no other argument.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import ml_dtypes
import numpy as np

from pypto.errors import SimulationError
from pypto.ir.distributed import DistributedTensorType
from pypto.ir.dtypes import Kind
from pypto.ir.nodes import Call, Const, DynDim, Function
from pypto.ir.span import Span
from pypto.ir.types import ScalarType, ShapedType, Type
from pypto.ops.registry import get
from pypto.sim.device.fill import check_size
from pypto.sim.device.views import root_of
from pypto.sim.engine.values import scalar_caster
from pypto.sim.machine.run import Run
from pypto.sim.trace.writers import LastWriter


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of the entry, as binding reads it."""

    name: str
    type: Type
    direction: str  # "In", "Out", "InOut"
    shaped: bool
    caster: Callable[[Any], Any] | None  # a scalar's Python value


def param_specs(entry: Function) -> list[ParamSpec]:
    return [ParamSpec(p.var.name, p.var.type, p.direction.value,
                      isinstance(p.var.type, ShapedType),
                      scalar_caster(p.var.type.dtype) if isinstance(p.var.type, ScalarType)
                      else None) for p in entry.params]


def static_spec(entry: Function) -> list[tuple] | None:
    """Per parameter (name, numpy dtype, shape, direction) when every parameter is a
    tensor of static shape (the common case: `bind_arguments` checks those quickly)."""
    spec = []
    for p in entry.params:
        t = p.var.type
        if not isinstance(t, ShapedType) or not all(type(d) is int for d in t.shape):
            return None
        try:
            check_size(tuple(t.shape), t.dtype.np, "", p.span)
        except SimulationError:
            return None
        spec.append((p.var.name, np.dtype(t.dtype.np), tuple(t.shape), p.direction.value))
    return spec


class Executable(Protocol):
    """What binding needs of the executable it binds for (`pypto.sim.runtime.executable`)."""

    entry: Function
    params: list[ParamSpec]
    static_spec: list[tuple] | None

    @property
    def written_params(self) -> frozenset[str]:
        """Entry parameters the program may write."""

    @property
    def deferrable(self) -> frozenset[str]:
        """Out parameters whose fill may wait for a batched launch."""


# torch dtypes numpy cannot hold: moved through a same-width integer view of their bits
_TORCH_BIT_VIEWS = {"bfloat16": "int16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8",
                    "float8_e8m0fnu": "uint8"}


def host_array(value: Any) -> Any:
    """A CPU torch tensor as a numpy array sharing its memory (so a kernel filling a
    `pl.Out` fills the tensor), bf16 / fp8 through a view of their bits as the
    `ml_dtypes` type; anything else is returned unchanged. torch is never imported:
    a tensor can only come from a caller that imported it."""
    if type(value).__module__.split(".")[0] != "torch" or not hasattr(value, "detach"):
        return value
    torch = sys.modules["torch"]
    t = value.detach()
    if t.device.type != "cpu":
        return value  # not host memory: left to the caller's error
    name = str(t.dtype).split(".", 1)[1]
    bits = _TORCH_BIT_VIEWS.get(name)
    if bits is not None and hasattr(ml_dtypes, name):
        return t.view(getattr(torch, bits)).numpy().view(getattr(ml_dtypes, name))
    return t.numpy()


def host_args(args: tuple) -> tuple:
    """`args` with every CPU torch tensor turned into a numpy array sharing its memory
    (`host_array`); the same tuple when there is none."""
    if all(type(a) is np.ndarray or type(a).__module__.split(".")[0] != "torch"
           for a in args):
        return args
    return tuple(host_array(a) for a in args)


def _unsigned_bits(have: np.dtype, want: np.dtype) -> bool:
    """A signed integer array passed for an unsigned parameter of the same width: torch
    has no uint16 / uint32 tensors, so callers (the real toolchain's harness among them)
    pass int16 / int32 ones, and the kernel reads their bits as the unsigned type."""
    return want.kind == "u" and have.kind == "i" and have.itemsize == want.itemsize


def _as_host_array(value: Any, name: str, direction: str, span: Span | None) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    value = host_array(value)
    if isinstance(value, np.ndarray):
        return value
    if direction != "In":
        raise SimulationError(
            f"argument '{name}' is pl.{direction}: pass a numpy array the kernel can fill in "
            f"place, not a {type(value).__name__}", span, tensor=name)
    try:
        return np.asarray(value)
    except Exception as exc:  # noqa: BLE001
        raise SimulationError(f"argument '{name}' cannot be read as an array: {exc}", span,
                              tensor=name) from None


def _eval_dim(d: Any, dyn: dict[str, int]) -> int | None:
    if isinstance(d, int):
        return d
    if isinstance(d, Const):
        return int(d.value)
    if isinstance(d, DynDim):
        return dyn.get(d.name)
    if isinstance(d, Call):
        vals = [_eval_dim(a, dyn) for a in d.args]
        if any(v is None for v in vals):
            return None
        impl = get(d.op).impl
        return int(impl(*vals)) if impl is not None else None
    return None


def _quick_hosts(exe: Executable, args: tuple, kwargs: dict) -> dict | None:
    """The argument arrays by name when they pass every check at a glance (positional
    numpy arrays of the declared dtype and static shape, writable where written); None
    sends `bind_arguments` down the full path, which reports what is wrong."""
    spec = exe.static_spec
    if spec is None or kwargs or len(args) != len(spec):
        return None
    hosts = {}
    nd = np.ndarray
    for (name, dt, shape, direction), v in zip(spec, args):
        if type(v) is not nd or v.dtype != dt or v.shape != shape or \
                (direction != "In" and not v.flags.writeable):
            return None
        hosts[name] = v
    return hosts


def bind_arguments(exe: Executable, run: Run, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The entry's arguments checked and uploaded into `run`: name -> device value."""
    entry = exe.entry
    hosts = _quick_hosts(exe, args, kwargs)
    if hosts is not None:
        return _upload(exe, run, hosts, hosts)
    params = entry.params
    kwargs = dict(kwargs or {})
    if len(args) > len(params):
        raise SimulationError(f"{entry.name}() takes {len(params)} arguments but "
                              f"{len(args)} were given", entry.span)
    values = {}
    for i, p in enumerate(params):
        name = p.var.name
        if i < len(args):
            values[name] = args[i]
        elif name in kwargs:
            values[name] = kwargs.pop(name)
        else:
            raise SimulationError(f"{entry.name}() is missing the argument '{name}'", p.span,
                                  tensor=name)
    if kwargs:
        raise SimulationError(f"{entry.name}() got unexpected keyword argument(s) "
                              f"{', '.join(sorted(kwargs))}", entry.span)
    dyn = run.dyn
    dyn_src: dict[str, str] = {}
    hosts = {}
    # first pass: dtypes, ranks and dynamic dims
    for p in params:
        name, t, direction = p.var.name, p.var.type, p.direction.value
        v = values[name]
        if isinstance(t, ShapedType):
            host = _as_host_array(v, name, direction, p.span)
            want = t.dtype.np
            if host.dtype != want and _unsigned_bits(host.dtype, want):
                host = host.view(want)  # the same bits, read as the declared unsigned type
            hosts[name] = host
            if host.dtype != want:
                raise SimulationError(
                    f"argument '{name}' has dtype {host.dtype} but the kernel declares "
                    f"{t.dtype!r} ({want})", p.span, tensor=name,
                    hint=f"convert it first, e.g. {name}.astype(" +
                         ("ml_dtypes.bfloat16" if t.dtype.name == "BF16" else f"np.{want}") + ")")
            if host.ndim != len(t.shape):
                raise SimulationError(
                    f"argument '{name}' has shape {list(host.shape)} (rank {host.ndim}) but the "
                    f"kernel declares {t} (rank {len(t.shape)})", p.span, tensor=name)
            for ax, d in enumerate(t.shape):
                if isinstance(d, DynDim):
                    got = int(host.shape[ax])
                    if d.name in dyn and dyn[d.name] != got:
                        raise SimulationError(
                            f"dynamic dim {d.name} is bound inconsistently: {dyn_src[d.name]} "
                            f"gives {dyn[d.name]} but '{name}' axis {ax} is {got}", p.span,
                            tensor=name, indices=[ax],
                            hint=f"every tensor sharing {d.name} must have the same extent there")
                    dyn[d.name] = got
                    dyn_src.setdefault(d.name, f"'{name}' axis {ax}")
    # second pass: check every remaining property of every argument before touching any
    for p in params:
        name, t, direction = p.var.name, p.var.type, p.direction.value
        v = values[name]
        if isinstance(t, ShapedType):
            host = hosts[name]
            for ax, d in enumerate(t.shape):
                want_dim = _eval_dim(d, dyn)
                if want_dim is not None and int(host.shape[ax]) != want_dim:
                    raise SimulationError(
                        f"argument '{name}' has shape {list(host.shape)} but the kernel declares "
                        f"{t}: axis {ax} is {host.shape[ax]}, expected {want_dim}"
                        + (f" ({d})" if not isinstance(d, int) else ""),
                        p.span, tensor=name, indices=[ax])
            check_size(host.shape, host.dtype, f"argument '{name}'", p.span)
            if direction != "In" and not host.flags.writeable:
                raise SimulationError(f"argument '{name}' is pl.{direction} but the array is "
                                      "read-only", p.span, tensor=name,
                                      hint="pass a writable numpy array")
        elif isinstance(t, ScalarType):
            values[name] = scalar_argument(v, name, t, p.span)
    return _upload(exe, run, values, hosts)


def scalar_argument(v: Any, name: str, t: ScalarType, span: Span | None) -> Any:
    """The value passed for scalar parameter `name` of type `t`, checked: an integer
    (or an integral float) for an integer dtype, in its range; a real number for a
    float dtype; True / False (or 0 / 1) for BOOL. numpy scalars and 0-d arrays count
    as their value; None, strings, arrays and the like are refused by name."""
    x = v.item() if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0 else v
    dt = t.dtype
    if isinstance(x, np.ndarray) or hasattr(x, "shape"):
        raise SimulationError(f"argument '{name}' is a scalar parameter ({t}) but got an array",
                              span, tensor=name)
    if dt.kind is Kind.HANDLE:
        return x
    if dt.kind is Kind.BOOL:
        if isinstance(x, bool) or (isinstance(x, int) and x in (0, 1)):
            return x
        raise _scalar_error(name, t, "True or False", x, span)
    if dt.is_int():
        if isinstance(x, float) and math.isfinite(x) and x.is_integer():
            x = int(x)
        elif isinstance(x, float):
            raise SimulationError(f"argument '{name}' is {t} but got the float {x}", span,
                                  tensor=name, hint=f"pass an integer, e.g. int({name})")
        if not isinstance(x, int) or isinstance(x, bool):
            raise _scalar_error(name, t, "an integer", x, span)
        if dt.is_signed_int():
            lo, hi = -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
        else:
            lo, hi = 0, (1 << dt.bits) - 1
        if not lo <= x <= hi:
            raise SimulationError(f"argument '{name}' is {t} but {x} is out of its range "
                                  f"[{lo}, {hi}]", span, tensor=name)
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return x
    raise _scalar_error(name, t, "a real number", x, span)


def _scalar_error(name: str, t: ScalarType, expects: str, x: Any,
                  span: Span | None) -> SimulationError:
    got = "None" if x is None else f"{x!r} ({type(x).__name__})"
    hint = "pass the number itself, not its text" if isinstance(x, (str, bytes)) else None
    return SimulationError(f"argument '{name}' is {t}: it expects {expects}, got {got}", span,
                           tensor=name, hint=hint)


def _upload(exe: Executable, run: Run, values: dict, hosts: dict) -> dict[str, Any]:
    """Third pass: the device values (see the module docstring for when a host array is
    used in place)."""
    bound: dict[str, Any] = {}
    written = exe.written_params
    memory = run.memory
    overlapping = _overlapping(hosts)
    for spec in exe.params:
        name = spec.name
        v = values[name]
        if isinstance(spec.type, DistributedTensorType):
            bound[name] = _window_argument(run, name, hosts[name], spec.direction)
            continue
        if spec.shaped:
            host = hosts[name]
            direction = spec.direction
            if direction == "Out" and run.settings.out_from_caller:
                # the caller's contents are what the kernel starts from: uploaded (or
                # used in place) and copied back, as an InOut is (`SimConfig.out_start`)
                direction = "InOut"
            in_place = (host.flags.c_contiguous and name not in overlapping
                        and not (memory.buffers and memory.owns_root(host)))
            keep = None
            if direction == "In" and in_place and name not in written:
                dev = host.view()
                dev.flags.writeable = False
            elif direction != "In" and in_place and host.flags.writeable:
                dev = host
                if direction == "Out":
                    # deferred when a batched launch loop mentions it first (it may then
                    # fill only what that launch leaves unwritten)
                    memory.fill_fresh(dev, name in exe.deferrable)
            elif direction == "Out":
                keep = host
                dev = memory.new_fresh(host.shape, host.dtype)
            else:
                keep = host
                dev = np.array(host, dtype=host.dtype, copy=True, order="C")
            memory.register(name, dev, direction, keep, "param")
            bound[name] = dev
        elif isinstance(spec.type, ScalarType):
            x = v.item() if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0 else v
            bound[name] = spec.caster(x) if spec.caster is not None else x
        else:
            bound[name] = v
    return bound


def _window_argument(run: Run, name: str, arr: np.ndarray, direction: str) -> np.ndarray:
    """A window (pld.DistributedTensor) parameter is the rank's window itself, whatever its
    direction: never copied, never filled (windows start zeroed when the host allocates
    them). The rank's device memory knows it once, so its accesses are traced."""
    if run.comm is None:
        raise SimulationError(
            f"parameter '{name}' is a window (pld.DistributedTensor), which only a "
            "multi-card run has", tensor=name,
            hint="dispatch the kernel from a @pl.jit.host function: allocate the window "
                 "there (pld.alloc_window_buffer) and pass pld.window(...) with device=r")
    memory = run.memory
    known = memory.buffers.get(id(root_of(arr)))
    if known is None or known.array.shape != arr.shape or known.array.dtype != arr.dtype:
        memory.register(name, arr, direction, None, "window")
    return arr


def _overlapping(hosts: dict[str, np.ndarray]) -> set[str]:
    """Names of the argument arrays that may share memory with another argument."""
    items = list(hosts.items())
    out = set()
    for i in range(1, len(items)):
        for j in range(i):
            if np.may_share_memory(items[i][1], items[j][1]):
                out.add(items[i][0])
                out.add(items[j][0])
    return out


def copy_back(run: Run) -> None:
    """The Out / InOut values the device held in a copy go back into the caller's arrays;
    a traced run gets the last writers of every global buffer."""
    trace = run.trace
    for buf in run.memory.buffer_list:
        if buf.direction in ("Out", "InOut") and buf.host is not None:
            host = buf.host
            if host.shape != buf.array.shape:
                continue
            try:
                host[...] = buf.array
            except ValueError as exc:
                raise SimulationError(f"cannot copy '{buf.name}' back to the caller's array: "
                                      f"{exc}", tensor=buf.name,
                                      hint="pass a writable, C-ordered numpy array") from None
        if trace is not None:
            # (its writes, made into the table when the trace's reader first asks)
            trace.writers.setdefault(buf.name, LastWriter(buf.name, buf.writes, buf.array.shape,
                                                          trace))


__all__ = [
    "ParamSpec",
    "bind_arguments",
    "copy_back",
    "host_args",
    "host_array",
    "param_specs",
    "static_spec",
]
