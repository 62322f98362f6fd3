"""The ranks of a multi-card run as the workbench shows them: each rank's steps in the
order the deterministic scheduler ran them (dispatches, notifies, waits, remote writes,
the end or the wait it is stuck on), and the signal edges - which notify released which
wait. Built from the events the core records (`ClusterResult.events`, or
`DeadlockError.events` when the ranks got stuck)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto_lab.runs import LabRun, tasks_of

# what a step is called in the view, per event kind
KIND_LABELS = {"dispatch": "dispatch", "notify": "notify", "wait": "wait (blocked)",
               "wait_done": "wait done", "defer_wait": "defer_wait",
               "remote_write": "remote write", "finish": "finished",
               "deadlock": "stuck (deadlock)"}


@dataclass(frozen=True)
class RankStep:
    seq: int  # the step's place in the run (one clock for all ranks)
    rank: int
    kind: str
    text: str  # one line: what happened, with the signal cell and values
    source: str  # file:line, or "" when the step has no source


@dataclass(frozen=True)
class SignalEdge:
    """A notify of rank `src` that a wait of rank `dst` counted on: the last notify of
    that cell before the wait went on (`released`), or before it got stuck (not)."""

    src: int
    src_seq: int
    dst: int
    dst_seq: int
    cell: str
    released: bool = True


@dataclass(frozen=True)
class RankRun:
    world_size: int
    steps: tuple[RankStep, ...]
    edges: tuple[SignalEdge, ...]
    stuck: bool  # the run ended in a deadlock

    def of_rank(self, rank: int) -> list[RankStep]:
        return [s for s in self.steps if s.rank == rank]


def rank_run(obj: Any) -> RankRun:
    """The `RankRun` of a `ClusterResult` (a multi-card simulation) or of the
    `DeadlockError` a stuck one raised."""
    events = getattr(obj, "events", None)
    size = getattr(obj, "world_size", None)
    if events is None or size is None:
        raise TypeError(f"rank views need a multi-card run (the result of a @pl.jit.host "
                        f"kernel, or the DeadlockError it raised), not {type(obj).__name__}")
    steps = tuple(RankStep(e.seq, e.rank, e.kind, _text(e), _source(e.span)) for e in events)
    return RankRun(int(size), steps, tuple(_edges(events)),
                   any(e.kind == "deadlock" for e in events))


def on_rank(obj: Any, rank: int) -> LabRun:
    """Rank `rank`'s own run of a multi-card result (a `ClusterResult`, or the
    `RunResult` of `run_jit` holding one), as a `LabRun` the other views take:
    `pypto_lab.timeline(pypto_lab.on_rank(result, 1))` is rank 1's estimated timeline."""
    cluster = getattr(obj, "sim", None) if not hasattr(obj, "ranks") else obj
    ranks = getattr(cluster, "ranks", None)
    if ranks is None:
        raise TypeError(f"on_rank needs a multi-card run (the result of a @pl.jit.host "
                        f"kernel, or run_jit's result of one), not {type(obj).__name__}")
    if not 0 <= rank < len(ranks):
        raise IndexError(f"the run has ranks 0..{len(ranks) - 1}, not {rank}")
    mine = ranks[rank]
    if mine.trace is None:
        raise ValueError("the run kept no trace: run it with SimConfig(trace=True) (run_jit "
                         "traces by default)")
    name = f"{getattr(mine.trace, 'program', '') or 'kernel'}"
    platform = getattr(getattr(cluster, "platform", None), "name", "a2a3sim")
    return LabRun(name, platform, True, [], tasks_of(mine.trace, mine.dependencies()),
                  f"rank {rank} of {len(ranks)}: {len(mine.trace.tasks)} task(s)", 0.0,
                  raw=mine, trace=mine.trace)


def _cell(info: dict) -> str:
    idx = info.get("indices")
    where = ", ".join(str(i) for i in idx) if idx is not None else ""
    return f"{info.get('window', '?')}[{where}]"


def _text(e: Any) -> str:
    i = e.info
    if e.kind == "dispatch":
        return f"rank {e.rank} runs {i.get('func')} on device {i.get('device')}"
    if e.kind == "notify":
        return (f"rank {e.rank} notifies rank {i.get('peer')}: {_cell(i)} "
                f"{i.get('op')} {i.get('value')} → {i.get('after')}")
    if e.kind in ("wait", "wait_done", "defer_wait", "deadlock"):
        verb = {"wait": "blocks on", "wait_done": "goes on past", "defer_wait": "defers",
                "deadlock": "is stuck on"}[e.kind]
        return (f"rank {e.rank} {verb} its {_cell(i)} >= {i.get('value')} "
                f"(holds {i.get('after')})")
    if e.kind == "remote_write":
        return f"rank {e.rank} writes {i.get('window')} of rank {i.get('peer')} ({i.get('what')})"
    if e.kind == "finish":
        return f"rank {e.rank} finished"
    return f"rank {e.rank} {e.kind}"


def _source(span: Any) -> str:
    if span is None or not getattr(span, "known", False):
        return ""
    return f"{span.file}:{span.line}"


def _edges(events: list) -> list[SignalEdge]:
    """Each finished wait, from the last notify of its cell that came before it."""
    last: dict[tuple, Any] = {}  # (target rank, window, indices) -> the notify
    edges: list[SignalEdge] = []
    for e in events:
        if e.kind == "notify":
            last[(e.info.get("peer"), e.info.get("window"), e.info.get("indices"))] = e
        elif e.kind in ("wait_done", "deadlock"):
            n = last.get((e.rank, e.info.get("window"), e.info.get("indices")))
            if n is not None:
                edges.append(SignalEdge(n.rank, n.seq, e.rank, e.seq, _cell(e.info),
                                        released=e.kind == "wait_done"))
    return edges


def summary(run: RankRun) -> str:
    """A few lines of text: per rank, its step count and how it ended."""
    released = sum(e.released for e in run.edges)
    lines = [f"{run.world_size} ranks, {len(run.steps)} steps, {released} notify → wait"
             + (" · DEADLOCK" if run.stuck else "")]
    for r in range(run.world_size):
        mine = run.of_rank(r)
        end = mine[-1].text if mine else f"rank {r} ran nothing"
        lines.append(f"  rank {r}: {len(mine)} steps; last: {end}")
    return "\n".join(lines)
