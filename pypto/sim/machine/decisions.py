"""How each region's launches ran - batched, split or block by block - and why.

Whether the blocks of a launch run as one batch is settled at several moments: the
region's static analysis (`pypto.sim.batch.plan`), this call's arguments (`prepare`:
windows that may overlap, a tensor passed twice), the launch's own shape (one block,
blocks meeting at a syncall, batching off) and, once a batch has started, a run-time
fallback (a `Fallback` raised by a batched core: out of bounds, a partial tile, ...),
which undoes the batch and runs it block by block. Each of them answers with one
`Decision`; `pypto.sim.runtime.launch`, the one place choosing how a launch runs,
notes every launch's answer in the run's `DecisionLog`, which `SimResult.decisions()`
returns per region.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

# how the blocks of a launch ran
BATCHED = "batched"  # all of them as one vectorised pass
SPLIT = "split"  # a loop nest cut in two: its first iterations batched, then the rest
PER_BLOCK = "per_block"  # one block at a time (or interleaved, at a syncall)
KINDS = (BATCHED, SPLIT, PER_BLOCK)

# who decided (the moments of the module docstring, in the order they come)
PLAN = "plan"  # the region's static analysis refused it
ARGUMENTS = "arguments"  # this call's arguments refused it
LAUNCH = "launch"  # the launch's shape or the run's settings
RUN = "run"  # the batch ran to its end, or a run-time fallback abandoned it
STAGES = (PLAN, ARGUMENTS, LAUNCH, RUN)


@dataclass(frozen=True, slots=True)
class Decision:
    """How launches of one region ran, and why."""

    kind: str
    """`batched`, `split` or `per_block`."""
    stage: str
    """Who decided: `plan`, `arguments`, `launch` or `run`."""
    reason: str
    """Why, in the simulator's words (a batched run says what formed the batch)."""
    times: int = field(default=0, compare=False)
    """How many times it was decided this way: per launch, or per run of a loop nest of
    launches, which is decided as a whole (filled in by `DecisionLog.decisions`)."""
    # (a decision is a dict key on every launch: its hash is computed once)
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # (a misspelt kind would be counted apart from the real one, silently)
        assert self.kind in KINDS and self.stage in STAGES, (self.kind, self.stage)
        object.__setattr__(self, "_hash", hash((self.kind, self.stage, self.reason)))

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        times = f" ×{self.times}" if self.times != 1 else ""
        return f"{self.kind}{times} ({self.stage}: {self.reason})"


# the answers that do not depend on the region: made once
ONE_BLOCK = Decision(PER_BLOCK, LAUNCH, "one block per launch, and no loop nest around "
                                        "it ran batched")
NESTED = Decision(PER_BLOCK, LAUNCH, "launched from inside a region (a nested launch runs "
                                     "its blocks one by one)")
SYNCALL = Decision(PER_BLOCK, LAUNCH, "its blocks meet at pl.system.syncall: they run "
                                      "interleaved, one thread each")
SPMD_BATCH = Decision(BATCHED, RUN, "the blocks of an SPMD launch, as one batch")
NEST_BATCH = Decision(BATCHED, RUN, "the iterations of a launch loop nest, as one batch")
BODY_BATCH = Decision(BATCHED, RUN, "the iterations of a loop body of several launches, "
                                    "as one batch")


def refused(stage: str, reason: str) -> Decision:
    """Block by block, decided by `stage` for `reason`."""
    return Decision(PER_BLOCK, stage, reason)


class DecisionLog(dict):
    """The decisions of one run's launches, counted per region (owned by the `Run`):
    (region, decision) -> times. A dict itself, as every call makes one (a run of one
    launch nest notes one decision: the log must cost next to nothing)."""

    __slots__ = ()

    def note(self, region: str, decision: Decision) -> None:
        key = (region, decision)
        self[key] = self.get(key, 0) + 1

    def note_single(self, region: str) -> None:
        # single-block launches are counted apart (under decision None): a region
        # launched one block at a time inside a loop nest that could not batch has the
        # nest's decision, which says more than "one block" (`decisions` reports them
        # only for the other regions)
        key = (region, None)
        self[key] = self.get(key, 0) + 1

    def decisions(self) -> dict[str, tuple[Decision, ...]]:
        """Per region launched: each distinct decision with the times it was made, in
        the order they were first made."""
        out: dict[str, list[Decision]] = {}
        for (region, d), n in self.items():
            if d is not None:
                out.setdefault(region, []).append(dataclasses.replace(d, times=n))
        for (region, d), n in self.items():
            if d is None and region not in out:
                out[region] = [dataclasses.replace(ONE_BLOCK, times=n)]
        return {r: tuple(ds) for r, ds in out.items()}

    def merge(self, other: DecisionLog) -> None:
        """Add `other`'s counts to these (a multi-card run: the ranks' logs)."""
        for key, n in other.items():
            self[key] = self.get(key, 0) + n


__all__ = [
    "ARGUMENTS",
    "BATCHED",
    "BODY_BATCH",
    "KINDS",
    "LAUNCH",
    "NESTED",
    "NEST_BATCH",
    "ONE_BLOCK",
    "PER_BLOCK",
    "PLAN",
    "RUN",
    "SPLIT",
    "SPMD_BATCH",
    "STAGES",
    "SYNCALL",
    "Decision",
    "DecisionLog",
    "refused",
]
