"""A core group running a `pl.FunctionType.Group` function: its cube member (AIC) and its
vector member (one AIV lane, or two), each in its own thread, one thread at a time,
talking through cross-core pipes (`pl.tpush_*` / `pl.tpop_*` / `pl.tfree_*`) and events
(`pl.system.sync_set` / `sync_wait`).

A member runs until it must wait - a pop of an empty pipe, a push into a full one, an
event not yet raised - then hands the turn to the next member. When every member still
running waits and none can move, the group is deadlocked: on hardware it hangs; here it
is a fault at the waiting op that says what each member waits for. The schedule is
deterministic (members take turns in their order).

A pipe (`Pipe`) is keyed by direction ("C2V": cube to vector, "V2C") and id; both sides
initialize it with the same `slot_size` and depth. A slot holds one tile of the
producing side - from both AIV lanes when two lanes produce: their halves joined on
the split axis, or (split=0) one value both lanes must agree on - and stays occupied
until every consuming lane has freed it; a push waits while `depth` slots are occupied.
A consuming lane pops slots in order and frees them in order.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.ops.numeric import plain, valid_shape, with_valid

AXIS = {1: 0, 2: 1}  # split code -> the axis the two AIV lanes divide
DIRS = {1: ("C2V",), 2: ("V2C",), 3: ("C2V", "V2C")}  # dir_mask -> pipe directions


class _Abort(BaseException):
    """Unwinds a waiting member thread after another member failed."""


@dataclass
class Member:
    """One core of the group: the AIC function, or one lane of the AIV function."""

    function: str
    side: str  # "aic" or "aiv"
    lane: int
    run: Callable[[], Any]  # runs the member's function in its own frame
    waiting: str | None = None  # what it waits for, while it waits
    seen: int = -1  # the group's progress count when it last found its wait unmet

    @property
    def name(self) -> str:
        return f"{self.function} (AIC)" if self.side == "aic" else \
            f"{self.function} (AIV lane {self.lane})"


@dataclass
class Slot:
    parts: dict = field(default_factory=dict)  # producer lane -> its tile
    data: Any = None  # the whole tile, once every producer lane pushed
    popped: set = field(default_factory=set)  # consumer lanes that popped it
    freed: set = field(default_factory=set)  # consumer lanes that freed it


@dataclass
class Pipe:
    direction: str  # "C2V" or "V2C"
    id: int
    slot_size: int
    depth: int
    producers: int  # lanes pushing into one slot
    consumers: int  # lanes popping each slot
    slots: list = field(default_factory=list)

    def describe(self) -> str:
        return f"{self.direction} pipe {self.id}"


class CoreGroup:
    """The members of one Group launch and what they share (see the module docstring)."""

    def __init__(self, label: str, lanes: int, buffers: dict[tuple[str, str], tuple]):
        self.label = label  # the launch, "'hint' (file:line)"
        self.lanes = lanes  # AIV lanes of the vector member
        # (function, buffer name) -> size of every pl.reserve_buffer in the members' IR,
        # and its base address (the given one, else one picked here, as the compiler does)
        self.buffers = {k: size for k, (size, _) in buffers.items()}
        self.bases = {k: base if base >= 0 else 0x1000 * (i + 1)
                      for i, (k, (_, base)) in enumerate(sorted(buffers.items()))}
        self.members: list[Member] = []
        self.pipes: dict[tuple[str, int], Pipe] = {}
        self.events: dict[int, list] = {}
        self.cv = threading.Condition()
        self.turn = 0
        self.done: set[int] = set()
        self.progress = 0
        self.error: BaseException | None = None
        self.aborted = False
        self._local = threading.local()

    # -- running ------------------------------------------------------------------------

    def run(self) -> list:
        results: list = [None] * len(self.members)
        threads = [threading.Thread(target=self._main, args=(i, results), daemon=True,
                                    name=f"pypto-sim-{m.side}-{m.lane}")
                   for i, m in enumerate(self.members)]
        for t in threads:
            t.start()
        with self.cv:
            while len(self.done) < len(self.members) and not self.aborted:
                self.cv.wait()
        for t in threads:
            t.join()
        if self.error is not None:
            raise self.error
        return results

    def _main(self, i: int, results: list) -> None:
        self._local.me = i
        try:
            with self.cv:
                self._wait_turn(i)
            results[i] = self.members[i].run()
            with self.cv:
                self.done.add(i)
                self.progress += 1
                self._pass_turn(i)
        except _Abort:
            return
        except BaseException as exc:  # noqa: BLE001 - forwarded to the driver
            with self.cv:
                if self.error is None:
                    self.error = exc
                self.aborted = True
                self.done.add(i)
                self.cv.notify_all()

    def _wait_turn(self, i: int) -> None:
        while self.turn != i and not self.aborted:
            self.cv.wait()
        if self.aborted:
            raise _Abort()

    def _pass_turn(self, i: int) -> None:
        n = len(self.members)
        for k in range(1, n + 1):
            c = (i + k) % n
            if c not in self.done:
                self.turn = c
                break
        self.cv.notify_all()

    @property
    def me(self) -> Member:
        return self.members[self._local.me]

    def touch(self) -> None:
        """Something another member may wait for happened (an event was raised)."""
        with self.cv:
            self.progress += 1

    def wait_until(self, ready: Callable[[], bool], what: str, ctx: Any) -> None:
        """Block the running member until `ready()` (see the module docstring)."""
        i = self._local.me
        m = self.members[i]
        with self.cv:
            while not ready():
                m.waiting, m.seen = what, self.progress
                others = [j for j in range(len(self.members)) if j not in self.done]
                if all(self.members[j].waiting is not None and
                       self.members[j].seen == self.progress for j in others):
                    m.waiting = None
                    raise ctx.fault(self._deadlock(m, what), ctx.span,
                                    hint="every pop needs a push on the other side, every "
                                         "push a free slot (tfree what you popped), every "
                                         "sync_wait a sync_set")
                self._pass_turn(i)
                self._wait_turn(i)
            m.waiting = None
            self.progress += 1

    def _deadlock(self, me: Member, what: str) -> str:
        parts = []
        for j, m in enumerate(self.members):
            if m is me:
                continue
            state = "has finished" if j in self.done else f"waits for {m.waiting}"
            parts.append(f"{m.name} {state}")
        return (f"deadlock in the core group of {self.label}: {me.name} waits for {what}, "
                f"and {'; '.join(parts)}; on hardware this launch hangs")

    # -- buffers and pipe set-up ----------------------------------------------------------

    def reserve(self, name: str, base: int) -> int:
        return self.bases.get((self.me.function, name), base)

    def import_peer(self, name: str, peer: str, ctx: Any) -> int:
        if (peer, name) not in self.bases:
            have = [f"{n} ({f})" for f, n in sorted(self.buffers)] or ["none"]
            raise ctx.fault(f"pl.import_peer_buffer: {peer} reserves no buffer named {name!r} "
                            f"in this core group (reserved: {', '.join(have)})", ctx.span,
                            hint="reserve it in the peer with pl.reserve_buffer(name=...)")
        return self.bases[(peer, name)]

    def initialize(self, side: str, bufs: tuple[int, int], dir_mask: int, slot_size: int,
                   slot_num: int | None, local_slot_num: int | None, pid: int, ctx: Any
                   ) -> None:
        dirs = DIRS.get(dir_mask)
        if dirs is None:
            raise ctx.fault(f"dir_mask must be 1 (C2V), 2 (V2C) or 3 (both), got {dir_mask}",
                            ctx.span)
        depth = slot_num or (8 if len(dirs) == 1 else 4)
        for d in dirs:
            pipe = self.pipes.get((d, pid))
            if pipe is None:
                produce_lanes = self.lanes if d == "V2C" else 1
                pipe = self.pipes[(d, pid)] = Pipe(d, pid, slot_size, depth, produce_lanes,
                                                   self.lanes if d == "C2V" else 1)
            elif (pipe.slot_size, pipe.depth) != (slot_size, depth):
                raise ctx.fault(f"{side.upper()} initializes {pipe.describe()} with slot_size="
                                f"{slot_size}, {depth} slots, but the other side did with "
                                f"slot_size={pipe.slot_size}, {pipe.depth} slots", ctx.span,
                                hint="initialize both ends of a pipe alike")
            setattr(pipe, f"init_{side}", True)
            buf = bufs[0] if d == "C2V" else bufs[1]
            self._check_ring(pipe, buf, local_slot_num or slot_num, ctx)

    def _check_ring(self, pipe: Pipe, base: int, slots: int | None, ctx: Any) -> None:
        """The reserved buffer holds the local ring: `local_slot_num` (else `slot_num`)
        slots. With neither given the toolchain (PTOAS) picks the local count, which the
        real docs do not state and the real tests size at 4 or 8 slots: then it must hold
        at least one."""
        key = next((k for k, b in self.bases.items() if b == base), None)
        if key is None:
            return
        need = pipe.slot_size * (slots or 1)
        if self.buffers[key] < need:
            raise ctx.fault(f"the ring of {pipe.describe()} needs {need} bytes "
                            f"({slots or 1} slots of {pipe.slot_size}), but "
                            f"buffer {key[1]!r} of {key[0]} reserves {self.buffers[key]}",
                            ctx.span, hint="reserve slot_size * slots bytes for the ring")

    def _pipe(self, d: str, pid: int, side: str, op: str, ctx: Any) -> Pipe:
        pipe = self.pipes.get((d, pid))
        if pipe is None or not getattr(pipe, f"init_{side}", False):
            init = "pl.aic_initialize_pipe" if side == "aic" else "pl.aiv_initialize_pipe"
            raise ctx.fault(f"{op} uses {d} pipe {pid}, which this {side.upper()} core has not "
                            f"initialized", ctx.span,
                            hint=f"call {init}(..., dir_mask=..., slot_size=..., id={pid}) "
                                 "first")
        return pipe

    # -- the pipe protocol ------------------------------------------------------------------

    def push(self, d: str, pid: int, tile: Any, split: int, op: str, ctx: Any) -> None:
        side = "aic" if d == "C2V" else "aiv"
        pipe = self._pipe(d, pid, side, op, ctx)
        lane = self.me.lane if pipe.producers == 2 else 0
        whole = tile.nbytes * (2 if pipe.producers == 2 and split else 1)
        if whole > pipe.slot_size:
            raise ctx.fault(f"{op} pushes a {whole}-byte tile into {pipe.describe()}, whose "
                            f"slots hold {pipe.slot_size} bytes", ctx.span,
                            hint="raise slot_size in both initialize_pipe calls")

        def slot_for() -> Slot | None:
            for s in pipe.slots:
                if lane not in s.parts:
                    return s
            return Slot() if len(pipe.slots) < pipe.depth else None

        self.wait_until(lambda: slot_for() is not None,
                        f"a free slot of {pipe.describe()} (all {pipe.depth} occupied)", ctx)
        slot = slot_for()
        assert slot is not None
        if not any(s is slot for s in pipe.slots):
            pipe.slots.append(slot)
        slot.parts[lane] = with_valid(np.array(tile, copy=True), valid_shape(tile))
        if len(slot.parts) == pipe.producers:
            slot.data = self._joined(slot, split, pipe, op, ctx)

    def _joined(self, slot: Slot, split: int, pipe: Pipe, op: str, ctx: Any) -> Any:
        parts = slot.parts
        if pipe.producers == 1:
            return parts[0]
        if split == 0:
            if not np.array_equal(parts[0], parts[1], equal_nan=True):
                raise ctx.fault(f"{op} with split=0: the two AIV lanes push different tiles into "
                                f"one slot of {pipe.describe()}; the cube receives an "
                                "unspecified one of them", ctx.span,
                                hint="push a value both lanes agree on, or split the tile "
                                     "(split=1 / 2) so each lane sends its half")
            return parts[0]
        axis = AXIS[split]
        joined = np.concatenate([plain(parts[0]), plain(parts[1])], axis=axis)
        # the lanes' valid bands abut when lane 0 filled its half (the shard's own layout)
        v0, v1 = valid_shape(parts[0]), valid_shape(parts[1])
        valid = [min(a, b) for a, b in zip(v0, v1)]
        valid[axis] = v0[axis] + v1[axis] if v0[axis] == parts[0].shape[axis] else v0[axis]
        return with_valid(joined, valid)

    def pop(self, d: str, pid: int, split: int, shape: tuple, op: str, ctx: Any) -> Any:
        side = "aiv" if d == "C2V" else "aic"
        pipe = self._pipe(d, pid, side, op, ctx)
        lane = self.me.lane if pipe.consumers == 2 else 0

        def ready() -> Slot | None:
            return next((s for s in pipe.slots if lane not in s.popped), None)

        self.wait_until(lambda: (s := ready()) is not None and s.data is not None,
                        f"a tile in {pipe.describe()}", ctx)
        slot = ready()
        assert slot is not None
        slot.popped.add(lane)
        data = slot.data
        if pipe.consumers == 2 and split and tuple(shape) != tuple(data.shape):
            axis = AXIS[split]
            n = data.shape[axis]
            half = (n + 1) // 2
            box = [slice(None)] * data.ndim
            box[axis] = slice(lane * half, min(lane * half + half, n))
            valid = list(valid_shape(data))
            valid[axis] = max(0, min(half, valid[axis] - lane * half))
            data = with_valid(plain(data)[tuple(box)], valid)
        if tuple(data.shape) != tuple(shape):
            raise ctx.fault(f"{op} declares a {list(shape)} tile, but {pipe.describe()} "
                            f"delivers {list(data.shape)} to this core", ctx.span,
                            hint="declare the popped tile with the shape the producer pushes "
                                 "(its half on each lane of a split)")
        return with_valid(plain(data).copy(), valid_shape(data))

    def free(self, d: str, pid: int, op: str, ctx: Any) -> None:
        side = "aiv" if d == "C2V" else "aic"
        pipe = self._pipe(d, pid, side, op, ctx)
        lane = self.me.lane if pipe.consumers == 2 else 0
        slot = next((s for s in pipe.slots if lane in s.popped and lane not in s.freed), None)
        if slot is None:
            raise ctx.fault(f"{op} frees a slot of {pipe.describe()}, but this core holds no "
                            "popped tile of it", ctx.span,
                            hint="free each popped tile once, after its last use")
        slot.freed.add(lane)
        if len(slot.freed) == pipe.consumers:
            pipe.slots.remove(slot)
        with self.cv:
            self.progress += 1

    def pipe_of(self, d: str, ids: list[int], op: str, ctx: Any) -> int:
        """The id of the only pipe in direction `d` (tfree without id=)."""
        if len(ids) == 1:
            return ids[0]
        have = sorted(pid for (dd, pid) in self.pipes if dd == d)
        if len(have) == 1:
            return have[0]
        raise ctx.fault(f"{op} without id=: {d} pipes {have} are open", ctx.span,
                        hint="pass the id of the pipe the tile was popped from")


__all__ = ["CoreGroup", "Member", "Pipe", "Slot"]
