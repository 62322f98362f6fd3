"""The `%%pypto` line, parsed: a frozen `MagicArgs` the pure session reads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VIEWS = ("ir", "graph", "passes", "run", "heatmap", "timeline", "dumps", "rings",
         "precision")
DUMP_LEVELS = "1 tagged, 2 all, 3 metadata + tagged payloads"


def _check_names(text: str) -> tuple[str, ...]:
    """`--checks` as the core's check names (its own validation, its own words)."""
    from pypto.errors import ConfigError
    from pypto.sim.options import check_names

    if text.strip().lower() == "none":
        return ()
    try:
        return check_names(text)
    except ConfigError as err:
        raise ArgsError(f"--checks: {err.message}"
                        + (f" ({err.hint})" if err.hint else "")) from None


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
    dump_args: int = 0
    """The args dump level to capture at (`--dump-args N`, the runtime's
    `enable_dump_args`; 0: none)."""
    checks: tuple[str, ...] | None = None
    """The simulator checks of the run (`--checks oob,ub`; `none`: only the argument
    checks); None: the workbench's own, every check (`runs.CHECKS`)."""

    @staticmethod
    def from_namespace(ns: Any) -> MagicArgs:
        """Validate argparse's namespace (from `magic_arguments.parse_argstring`)."""
        show: list[str] = []
        for item in ns.show or ():
            show += [v.strip() for v in item.split(",") if v.strip()]
        if getattr(ns, "precision", False):  # `--precision`: the shadow run and its ladder
            show.append("precision")
        dump = getattr(ns, "dump_args", None) or 0
        if dump not in (0, 1, 2, 3):
            raise ArgsError(f"--dump-args takes an args dump level 1, 2 or 3 ({DUMP_LEVELS}), "
                            f"got {dump}")
        if "all" in show:  # (the dump table when there is a dump; the shadow when asked)
            show = [v for v in VIEWS if (v != "dumps" or dump) and
                    (v != "precision" or "precision" in show)]
        bad = sorted(set(show) - set(VIEWS))
        if bad:
            raise ArgsError(f"unknown view(s) {', '.join(bad)}; choose from {', '.join(VIEWS)}"
                            " or all")
        run = ns.run or []
        if len(run) > 2:
            raise ArgsError("--run takes SPECS and an optional GOLDEN name, e.g. "
                            "--run specs golden")
        needs_run = {"run", "heatmap", "timeline", "dumps", "rings", "precision"} & set(show)
        if needs_run and not run:
            raise ArgsError(f"--show {','.join(sorted(needs_run))} needs a run: add "
                            "--run SPECS [GOLDEN]")
        if dump and not run:
            raise ArgsError("--dump-args needs a run: add --run SPECS [GOLDEN]")
        if "dumps" in show and not dump:
            raise ArgsError(f"--show dumps needs an args dump: add --dump-args N ({DUMP_LEVELS})")
        checks = None
        if getattr(ns, "checks", None) is not None:
            if not run:
                raise ArgsError("--checks needs a run: add --run SPECS [GOLDEN]")
            checks = _check_names(ns.checks)
        return MagicArgs(show=tuple(dict.fromkeys(show)), specs=run[0] if run else None,
                         golden=run[1] if len(run) > 1 else None, kernel=ns.kernel,
                         platform=ns.platform, seed=ns.seed, rtol=ns.rtol, atol=ns.atol,
                         dump_args=dump, checks=checks)
