"""`ChipWorker` and `DeviceTensor`: the real runtime's explicit dispatch, on the simulator.

A `ChipWorker` stands for one device. `alloc_tensor` gives a `DeviceTensor`, a buffer
that stays "on the device" between runs (here: a numpy array the worker owns), which a
run takes wherever a host tensor goes; `run(compiled, *args)` runs a compiled program
once, `register(compiled)` gives a handle a hot loop calls. As on the device, a
`DeviceTensor` is not copied back to the host by a run: read it with `copy_from`.
Only the worker that allocated a tensor can use it, and a freed or closed one is gone.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from pypto.errors import UserError


class DeviceTensor:
    """A buffer resident on one `ChipWorker` (`data_ptr`, `nbytes`, `shape`, `dtype`)."""

    def __init__(self, worker: ChipWorker, array: np.ndarray, data_ptr: int):
        self.worker = worker
        self.array = array
        self.data_ptr = data_ptr
        self.freed = False

    @property
    def shape(self) -> tuple:
        return tuple(self.array.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    @property
    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def __repr__(self) -> str:
        state = ", freed" if self.freed else ""
        return f"<DeviceTensor {list(self.shape)} {self.dtype} at {self.data_ptr:#x}{state}>"


class RegistrationHandle:
    """A compiled program registered on a worker: calling it runs the program."""

    def __init__(self, worker: ChipWorker, compiled: Any):
        self.worker = worker
        self.compiled = compiled
        self.registered = True

    def __call__(self, *args: Any) -> Any:
        if not self.registered:
            raise UserError("this registration was released (unregister / worker.close)")
        return self.worker.run(self.compiled, *args)

    def unregister(self) -> None:
        self.registered = False

    def __enter__(self) -> RegistrationHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unregister()


class ChipWorker:
    """One device's worker on the simulator (`config`: the RunConfig of its runs)."""

    def __init__(self, config: Any = None, device_id: int | None = None):
        self.config = config
        self.device_id = device_id if device_id is not None else \
            getattr(config, "device_id", 0)
        self._tensors: dict[int, DeviceTensor] = {}
        self._handles: list[RegistrationHandle] = []
        self._next_ptr = 0x1000_0000
        self.closed = False

    # -- device memory --------------------------------------------------------------

    def alloc_tensor(self, shape: Any, dtype: Any, init: Any = None) -> DeviceTensor:
        """A resident buffer of `shape` / `dtype` (a torch or numpy dtype), filled from
        `init` when given (else zeros)."""
        self._open()
        array = np.zeros(tuple(int(d) for d in shape), _numpy_dtype(dtype))
        if init is not None:
            array[...] = _host_array(init)
        t = DeviceTensor(self, array, self._next_ptr)
        self._next_ptr += max(array.nbytes, 1) + 0x100
        self._tensors[t.data_ptr] = t
        return t

    def free_tensor(self, tensor: DeviceTensor) -> None:
        self._own(tensor)
        tensor.freed = True
        del self._tensors[tensor.data_ptr]

    def copy_from(self, host_ptr: Any, dev_ptr: int, nbytes: int) -> None:
        """Copy `nbytes` of the device buffer at `dev_ptr` into the host buffer
        `host_ptr` (a torch tensor or numpy array, or an integer address of one)."""
        t = self._at(dev_ptr)
        src = t.array.reshape(-1).view(np.uint8)[:nbytes]
        _bytes_of(host_ptr, nbytes)[...] = src

    def copy_to(self, dev_ptr: int, host_ptr: Any, nbytes: int) -> None:
        """Copy `nbytes` of the host buffer into the device buffer at `dev_ptr`."""
        t = self._at(dev_ptr)
        t.array.reshape(-1).view(np.uint8)[:nbytes] = _bytes_of(host_ptr, nbytes)

    # -- dispatch ---------------------------------------------------------------------

    def run(self, compiled: Any, *args: Any) -> Any:
        """Run `compiled` once with `args` (host tensors, or this worker's DeviceTensors,
        which it reads and writes in place)."""
        self._open()
        values = tuple(self._own(a).array if isinstance(a, DeviceTensor) else a for a in args)
        return compiled(*values, config=self.config)

    def register(self, compiled: Any) -> RegistrationHandle:
        self._open()
        handle = RegistrationHandle(self, compiled)
        self._handles.append(handle)
        return handle

    def close(self) -> None:
        """Release the registrations and every DeviceTensor still allocated."""
        for h in self._handles:
            h.unregister()
        for t in list(self._tensors.values()):
            t.freed = True
        self._tensors.clear()
        self.closed = True

    def __enter__(self) -> ChipWorker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- checks -----------------------------------------------------------------------

    def _open(self) -> None:
        if self.closed:
            raise UserError("this ChipWorker is closed")

    def _own(self, t: DeviceTensor) -> DeviceTensor:
        if t.worker is not self:
            raise UserError(f"{t!r} belongs to another ChipWorker; a DeviceTensor is bound "
                            "to the worker that allocated it")
        if t.freed:
            raise UserError(f"{t!r} was freed")
        return t

    def _at(self, dev_ptr: int) -> DeviceTensor:
        t = self._tensors.get(int(dev_ptr))
        if t is None:
            raise UserError(f"no DeviceTensor of this worker at {int(dev_ptr):#x}")
        return t


def _numpy_dtype(dtype: Any) -> np.dtype:
    if not (isinstance(dtype, str) or type(dtype).__module__.split(".")[0] == "torch"):
        return np.dtype(dtype)  # a numpy dtype or scalar type
    name = str(dtype).replace("torch.", "")
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _host_array(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if type(x).__module__.split(".")[0] == "torch":
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _bytes_of(host: Any, nbytes: int) -> np.ndarray:
    if isinstance(host, np.ndarray):
        return host.reshape(-1).view(np.uint8)[:nbytes]
    if type(host).__module__.split(".")[0] == "torch":
        return host.detach().numpy().reshape(-1).view(np.uint8)[:nbytes]
    raise UserError("copy_from / copy_to take the host tensor itself (torch or numpy); "
                    "raw addresses do not exist on the simulator")
