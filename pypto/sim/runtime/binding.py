"""Binding the arguments of a common call quickly (sim speed).

Most calls pass, positionally, numpy arrays of the declared dtypes - C-contiguous,
overlapping nothing, writable where the kernel writes them - and plain numbers for
the scalar parameters. For an entry whose parameters are tensors (static dims or
`pl.dynamic` ones) and scalars, `QuickBinding` checks such a call with one loop and
uploads it with what was decided once per executable: which parameters are read
through a read-only view, copied, filled or used as they are, and - per combination
of argument shapes - what the dynamic dims are and that the sizes pass. It binds
exactly what `transfers.bind_arguments` binds for that call (arrays that are their own
roots and own their memory are distinct allocations: only the others are checked pairwise
for overlap; a `pl.In` array the kernel never writes is bound as a read-only view, as
there); anything else (keyword
arguments, another type or layout, shapes the kernel does not declare, a bad scalar)
gives None before anything was touched, and the full path binds or reports it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.distributed import DistributedTensorType
from pypto.ir.nodes import DynDim, Function
from pypto.ir.types import ScalarType, ShapedType
from pypto.sim.device.fill import check_size
from pypto.sim.device.views import root_of
from pypto.sim.engine.values import scalar_caster
from pypto.sim.machine.run import Run
from pypto.sim.runtime.transfers import scalar_argument

# what binding does with a tensor argument (decided once per parameter)
READ_VIEW, COPY, FILL, FILL_LATER, AS_IS = range(5)


class _Tensor:
    __slots__ = ("action", "dims", "direction", "dtype", "name")

    def __init__(self, name: str, dtype: np.dtype, dims: tuple, direction: str, action: int):
        self.name = name
        self.dtype = dtype
        self.dims = dims  # per axis an int, or the name of a pl.dynamic dim
        self.direction = direction
        self.action = action


_BAD = object()  # a scalar argument the quick binding does not take


class _Scalar:
    __slots__ = ("caster", "floats", "name", "span", "type")

    def __init__(self, name: str, t: ScalarType, span: Any):
        self.name = name
        self.type = t
        self.span = span
        self.caster = scalar_caster(t.dtype)
        # a float parameter given a Python float: what `scalar_argument` accepts as is
        self.floats = t.dtype.is_float()

    def value(self, v: Any) -> Any:
        """The bound value of argument `v` (as `transfers._upload` binds it), or _BAD."""
        caster = self.caster
        if self.floats and type(v) is float and caster is not None:
            return caster(v)
        try:
            x = scalar_argument(v, self.name, self.type, self.span)
        except SimulationError:
            return _BAD
        if isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) == 0:
            x = x.item()
        return caster(x) if caster is not None else x


class QuickBinding:
    """The quick binding of one executable's entry (see the module docstring)."""

    __slots__ = ("_shapes", "n_arrays", "params")

    def __init__(self, params: list, n_arrays: int):
        self.params = params  # _Tensor / _Scalar, in parameter order
        self.n_arrays = n_arrays
        # the argument shapes of earlier calls -> their dynamic dims (shapes that pass)
        self._shapes: dict[tuple, dict[str, int]] = {}

    def bind(self, run: Run, args: tuple) -> dict[str, Any] | None:
        """The device values by name, uploaded into `run`; None (nothing touched) when
        the call is not of the common kind."""
        params = self.params
        if len(args) != len(params):
            return None
        nd = np.ndarray
        shapes = []
        values = []
        roots = []  # (each tensor argument's root, found once for both uses below)
        # every tensor argument its own root and the owner of its memory: then distinct
        # ones are distinct allocations, which cannot overlap (no pairwise check)
        owners = True
        for p, v in zip(params, args):
            if type(p) is _Tensor:
                if type(v) is not nd:
                    return None
                dt = v.dtype
                if dt is not p.dtype and dt != p.dtype:
                    return None
                flags = v.flags
                if not flags.c_contiguous or (p.direction != "In" and not flags.writeable):
                    return None
                shapes.append(v.shape)
                if v.base is None:
                    roots.append(v)
                    if not flags.owndata:
                        owners = False
                else:
                    roots.append(root_of(v))
                    owners = False
            else:
                x = p.value(v)
                if x is _BAD:
                    return None  # (the full path reports it, in its order)
                v = x
            values.append(v)
        key = tuple(shapes)
        dyn = self._shapes.get(key)
        if dyn is None:
            dyn = self._check_shapes(key)
            if dyn is None:
                return None
        n = self.n_arrays
        if n > 1:
            if len(set(map(id, roots))) < n:
                return None  # (views of one array: the full path checks how they overlap)
            if not owners:
                arrays = [v for p, v in zip(params, values) if type(p) is _Tensor]
                for i in range(1, n):
                    for j in range(i):
                        if np.may_share_memory(arrays[i], arrays[j]):
                            return None
        # everything checked: upload, in parameter order (as `transfers._upload`)
        if dyn:
            run.dyn.update(dyn)
        uploads = []
        bound: dict[str, Any] = {}
        k = 0
        for p, v in zip(params, values):
            if type(p) is _Tensor:
                act = p.action
                keep = None
                root = roots[k]
                k += 1
                fill = 0
                if act == READ_VIEW:  # (a pl.In array the kernel never writes: guarded)
                    dev = v.view()
                    dev.flags.writeable = False
                elif act == COPY:
                    keep = v
                    dev = root = np.array(v, dtype=v.dtype, copy=True, order="C")
                else:
                    dev = v
                    if act != AS_IS:  # (filled as `memory.fill_fresh` fills)
                        fill = 2 if act == FILL_LATER else 1
                uploads.append((p.name, dev, p.direction, keep, root, fill))
                bound[p.name] = dev
            else:
                bound[p.name] = v
        run.memory.register_params(uploads)
        return bound

    def _check_shapes(self, key: tuple) -> dict[str, int] | None:
        """The dynamic dims these argument shapes bind, when every shape is the declared
        one (and no tensor is too large); else None."""
        dyn: dict[str, int] = {}
        shapes = iter(key)
        for p in self.params:
            if type(p) is not _Tensor:
                continue
            shape = next(shapes)
            if len(shape) != len(p.dims):
                return None
            for d, got in zip(p.dims, shape):
                if type(d) is int:
                    if d != got:
                        return None
                elif dyn.setdefault(d, got) != got:
                    return None
            try:
                check_size(shape, p.dtype, "")
            except SimulationError:
                return None
        if len(self._shapes) > 64:
            self._shapes.clear()
        self._shapes[key] = dyn
        return dyn


def quick_binding(entry: Function, written: frozenset[str], deferrable: frozenset[str],
                  out_from_caller: bool = False) -> QuickBinding | None:
    """The quick binding of `entry`, or None when a parameter is of another kind (a
    window, a tuple, a dim computed from others). `out_from_caller`: a pure pl.Out
    starts from the caller's array (`SimConfig.out_start`), bound as an InOut is."""
    params: list = []
    n_arrays = 0
    for p in entry.params:
        t = p.var.type
        name = p.var.name
        direction = p.direction.value
        if direction == "Out" and out_from_caller:
            direction = "InOut"
        if isinstance(t, ScalarType):
            params.append(_Scalar(name, t, p.span))
            continue
        if not isinstance(t, ShapedType) or isinstance(t, DistributedTensorType):
            return None
        dims: list[int | str] = []
        for d in t.shape:
            if type(d) is int:
                dims.append(d)
            elif isinstance(d, DynDim):
                dims.append(d.name)
            else:
                return None
        if direction == "In":
            action = COPY if name in written else READ_VIEW
        elif direction == "Out":
            action = FILL_LATER if name in deferrable else FILL
        else:
            action = AS_IS
        params.append(_Tensor(name, np.dtype(t.dtype.np), tuple(dims), direction, action))
        n_arrays += 1
    return QuickBinding(params, n_arrays)


__all__ = ["QuickBinding", "quick_binding"]
