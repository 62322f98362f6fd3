"""The `%%pypto` line, parsed: a frozen `MagicArgs` the pure session reads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VIEWS = ("ir", "graph", "passes", "run", "heatmap", "timeline")


class ArgsError(ValueError):
    """A bad magic line (the magic turns it into IPython's UsageError)."""


@dataclass(frozen=True)
class MagicArgs:
    """What one `%%pypto` cell asks for."""

    show: tuple[str, ...] = ()
    """Views to display besides the summary (subset of `VIEWS`)."""
    specs: str | None = None
    """Name of the list of `TensorSpec`s to run with (`--run SPECS`)."""
    golden: str | None = None
    """Name of the golden function (`--run SPECS GOLDEN`)."""
    kernel: str | None = None
    """Which kernel to run when the cell defines several (default: the last)."""
    platform: str | None = None
    seed: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5

    @staticmethod
    def from_namespace(ns: Any) -> MagicArgs:
        """Validate argparse's namespace (from `magic_arguments.parse_argstring`)."""
        show: list[str] = []
        for item in ns.show or ():
            show += [v.strip() for v in item.split(",") if v.strip()]
        if "all" in show:
            show = list(VIEWS)
        bad = sorted(set(show) - set(VIEWS))
        if bad:
            raise ArgsError(f"unknown view(s) {', '.join(bad)}; choose from {', '.join(VIEWS)}"
                            " or all")
        run = ns.run or []
        if len(run) > 2:
            raise ArgsError("--run takes SPECS and an optional GOLDEN name, e.g. "
                            "--run specs golden")
        needs_run = {"run", "heatmap", "timeline"} & set(show)
        if needs_run and not run:
            raise ArgsError(f"--show {','.join(sorted(needs_run))} needs a run: add "
                            "--run SPECS [GOLDEN]")
        return MagicArgs(show=tuple(dict.fromkeys(show)), specs=run[0] if run else None,
                         golden=run[1] if len(run) > 1 else None, kernel=ns.kernel,
                         platform=ns.platform, seed=ns.seed, rtol=ns.rtol, atol=ns.atol)
