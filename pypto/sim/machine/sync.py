"""The synchronisation state of one running core: intra-core pipe flags
(`pl.system.sync_src` / `sync_dst`) and the cross-core events of its core group
(`pl.system.sync_set` / `sync_wait`).

The simulator runs a core's ops in program order, so every flag or event a kernel
waits for must have been raised earlier in that order; a wait that finds nothing is a
wait that never ends on hardware, and is reported as a fault at the wait (naming the
region and block) instead of hanging.
"""
from __future__ import annotations

from typing import Any


class CoreSync:
    """Flags and events of one core (one block of a region, or one member of a core
    group: its flags are its own, its events shared with the group's other members, and
    a wait there blocks until another member raises the event)."""

    __slots__ = ("events", "flags", "group")

    def __init__(self, events: dict | None = None, group: Any = None) -> None:
        self.flags: dict[tuple, int] = {}  # (set_pipe, wait_pipe, event_id) -> pending sets
        # event id -> the pending signals: (lane or None outside a split region, ffts_mode)
        self.events: dict[int, list[tuple[int | None, int | None]]] = \
            {} if events is None else events
        self.group = group  # the CoreGroup whose members share `events`

    # -- intra-core flags --------------------------------------------------------------

    def set_flag(self, key: tuple) -> None:
        # A hardware flag is one bit: setting it twice before a wait leaves it set once.
        self.flags[key] = 1

    def wait_flag(self, key: tuple, ctx: Any) -> None:
        if not self.flags.get(key):
            set_pipe, wait_pipe, event_id = key
            raise ctx.fault(
                f"pl.system.sync_dst waits on pipe {wait_pipe} for event {event_id} from "
                f"pipe {set_pipe}, but no pl.system.sync_src(set_pipe={set_pipe}, "
                f"wait_pipe={wait_pipe}, event_id={event_id}) ran before it on this core; "
                "on hardware this wait never ends", ctx.span,
                hint="set the flag with the matching pl.system.sync_src before waiting on it")
        self.flags[key] = 0

    # -- cross-core events -------------------------------------------------------------

    def set_event(self, event_id: int, ffts_mode: Any, ctx: Any) -> None:
        lanes = ctx.split_mode is not None or (self.group is not None and self.group.lanes == 2)
        mode = None if ffts_mode is None else int(ffts_mode)
        self.events.setdefault(event_id, []).append((ctx.subblock_idx if lanes else None, mode))
        if self.group is not None:
            self.group.touch()

    def _raised(self, event_id: int) -> bool:
        pending = self.events.get(event_id)
        if not pending:
            return False
        lanes = {lane for lane, mode in pending if mode == 2 and lane is not None}
        return not lanes or lanes == {0, 1}

    def wait_event(self, event_id: int, ctx: Any) -> None:
        if self.group is not None:
            self.group.wait_until(lambda: self._raised(event_id),
                                  f"cross-core event {event_id}", ctx)
        pending = self.events.pop(event_id, [])
        if not pending:
            raise ctx.fault(
                f"pl.system.sync_wait waits for cross-core event {event_id}, but no "
                f"pl.system.sync_set({event_id}, ...) was raised before it; on hardware this "
                "core waits forever", ctx.span,
                hint="raise the event with pl.system.sync_set on the producing side before "
                     "the wait (the simulator runs a core group's two sides in program order)")
        lanes = {lane for lane, mode in pending if mode == 2 and lane is not None}
        if lanes and lanes != {0, 1}:
            missing = ({0, 1} - lanes).pop()
            raise ctx.fault(
                f"pl.system.sync_wait on event {event_id}: the event was raised with "
                f"ffts_mode=2 (a reduction over both AIV lanes) but only AIV lane "
                f"{lanes.pop()} raised it; the wait needs lane {missing} too and never ends "
                "on hardware", ctx.span,
                hint="raise the event on both lanes of the pl.split_aiv region (not under "
                     "`if aiv_id == ...`), or use ffts_mode=0")


__all__ = ["CoreSync"]
