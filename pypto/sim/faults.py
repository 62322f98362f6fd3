"""Simulator faults: errors that name the tensor, region, block and indices, in the
names the user wrote."""
from __future__ import annotations

import re
from typing import Any

from pypto.errors import PyptoError, SimulationError
from pypto.ir.span import Span

_RENAME_SUFFIX = re.compile(r"(__[A-Za-z_]*\d+)+$")


def source_name(name: str) -> str:
    """`x_flat__hc_head1__3` -> `x_flat`: drop the suffixes the inliner (`__<fn><k>`) and
    the SSA pass (`__<k>`) append."""
    return _RENAME_SUFFIX.sub("", name) or name


def region_name(label: str | None) -> str:
    """`'wide' (kernel.py:12)` -> `wide`: the name hint of a launch label (None:
    orchestration)."""
    if not label:
        return "orchestration"
    if label.startswith("'") and "'" in label[1:]:
        return label[1:label.index("'", 1)]
    return label


def fault(message: str, span: Span | None, *, region: str | None, block: int | None,
          tensor: str | None = None, indices: Any = None, hint: str | None = None,
          note: str | None = None) -> SimulationError:
    """The error of a fault in `region` (None: orchestration), `block`: the message ends
    with where it happened; tensor names are shown as the user wrote them."""
    if tensor is not None:
        shown = source_name(tensor)
        message = message.replace(f"'{tensor}'", f"'{shown}'")
        tensor = shown
    where = []
    if region is not None:
        where.append(f"region {region}")
        if block is not None:
            where.append(f"block {block}")
    else:
        where.append("orchestration")
    if tensor is not None:
        where.insert(0, f"tensor '{tensor}'")
    return SimulationError(f"{message} [{', '.join(where)}]", span, hint, note, tensor=tensor,
                           region=region or "orchestration", block=block, indices=indices)


def mark_partial_outputs(err: PyptoError, names: tuple[str, ...]) -> None:
    """A run that faults leaves pl.In arrays untouched and copies nothing back, but Out /
    InOut arrays simulated in place already hold whatever the run wrote before the
    fault: name them (`names`) on the error."""
    err.partial_outputs = names
    if names:
        held = " are written in place by the simulator and now hold" if len(names) > 1 \
            else " is written in place by the simulator and now holds"
        text = (", ".join(f"'{n}'" for n in names) + held +
                " a partial result of this failed run; pl.In arrays are unchanged")
        err.note = f"{err.note}\n{text}" if err.note else text


def settle_failed_run(memory: Any, err: BaseException) -> None:
    """A run stopped by `err`: its deferred fills land first (what the run wrote stays
    what the device would hold), and a user-facing error names the Out / InOut arrays
    the run simulated in place (those with no host copy to restore)."""
    memory.flush_pending()
    if isinstance(err, PyptoError):
        mark_partial_outputs(err, tuple(
            b.name for b in memory.buffer_list if b.kind == "param" and b.host is None
            and b.direction in ("Out", "InOut")))


__all__ = ["fault", "mark_partial_outputs", "region_name", "settle_failed_run",
           "source_name"]
