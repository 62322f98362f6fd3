"""`%%pypto`: parse the line, call `session.run_cell`, return the result object."""
from __future__ import annotations

from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from pypto_lab.args import VIEWS, ArgsError, MagicArgs
from pypto_lab.session import run_cell
from pypto_lab.sweeps import SweepView, sweep_cell


@magics_class
class PyptoMagics(Magics):
    """Define, compile, simulate and look at `pypto.language` kernels in one cell."""

    @magic_arguments.magic_arguments()
    @magic_arguments.argument("-s", "--show", action="append", metavar="VIEWS",
                              help=f"views besides the summary, comma separated: "
                                   f"{', '.join(VIEWS)}, or all")
    @magic_arguments.argument("--run", nargs="+", metavar="NAME",
                              help="simulate with SPECS (a list of TensorSpec) and compare "
                                   "with GOLDEN (a golden_fn); names from the cell or notebook")
    @magic_arguments.argument("--kernel", help="which kernel to run (default: the last one)")
    @magic_arguments.argument("--platform", help="a2a3sim (default) or a5sim")
    @magic_arguments.argument("--seed", type=int, default=0,
                              help="seeds numpy's and torch's global generators before the "
                                   "inputs are made (spec factories such as np.random.randn "
                                   "draw from them; a spec's own generator is kept)")
    @magic_arguments.argument("--rtol", type=float, default=1e-5, help="golden rtol")
    @magic_arguments.argument("--atol", type=float, default=1e-5, help="golden atol")
    @magic_arguments.argument("--dump-args", type=int, metavar="N",
                              help="capture the args dump at level N (1 tagged, 2 all, 3 "
                                   "metadata + tagged payloads); --show dumps draws it")
    @magic_arguments.argument("--checks", metavar="NAMES",
                              help="simulator checks of the run, comma separated: oob, ub, "
                                   "race, window, uninit, div, or none (default: oob, ub, "
                                   "race, uninit)")
    @magic_arguments.argument("--precision", action="store_true",
                              help="also run the kernel in float64 (the precision shadow) "
                                   "and show where its values first drift (needs --run)")
    @magic_arguments.argument("--sweep", action="append", metavar="NAME=V1,V2,...",
                              help="tile-size sweep of the cell's constants (needs --run)")
    @line_cell_magic
    def pypto(self, line: str, cell: str | None = None) -> Any:
        """Run the cell as Python, compile its @pl.jit kernels and show a summary."""
        if cell is None or _asks_help(line):
            print(usage())
            return None
        try:
            ns = magic_arguments.parse_argstring(self.pypto, line)
            args = MagicArgs.from_namespace(ns)
        except ArgsError as err:
            raise UsageError(str(err)) from None
        progress = _Progress()
        try:
            result = run_cell(cell, args, self.shell.user_ns, line=line, progress=progress,
                              number=_cell_number(self.shell))
        except BaseException:
            progress.clear()
            raise
        result.progress_slot = progress.handle
        if ns.sweep:
            result.views.append(_sweep(result, args, ns.sweep, self.shell.user_ns))
        return result


def _sweep(result: Any, args: MagicArgs, items: list[str], user_ns: dict) -> SweepView:
    """`--sweep`: the kernel --run would run, over the grid of the cell's constants."""
    if not args.specs:
        raise UsageError("--sweep needs --run SPECS [GOLDEN]: what each point runs and checks")
    if not result.kernels:
        raise UsageError("--sweep: the cell compiled no kernel to sweep")
    name = args.kernel or result.kernels[-1].name
    if all(k.name != name for k in result.kernels):  # (the cell's diagnostic says why)
        raise UsageError(f"--sweep: no compiled kernel named {name!r} in the cell")
    golden = user_ns[args.golden] if args.golden else None
    try:
        return sweep_cell(user_ns[name], items, user_ns[args.specs], golden,
                          platform=args.platform, rtol=args.rtol, atol=args.atol)
    except ValueError as err:
        raise UsageError(f"--sweep: {err}") from None


def usage() -> str:
    """The magic's help: what `%%pypto --help` prints."""
    doc = PyptoMagics.pypto.__doc__ or ""
    return ("%%pypto [options]: a cell of ordinary Python defining @pl.jit kernels.\n"
            "Every kernel the cell defines is compiled and summarised; with --run it is also\n"
            "simulated and compared with its golden.\n\n"
            "  %%pypto --run specs golden --show heatmap,timeline\n\n"
            + doc.split("\n", 1)[-1].replace("::", ":").replace("%pypto [", "%%pypto ["))


def _asks_help(line: str) -> bool:
    return any(tok in ("-h", "--help") for tok in line.split())


def help_transformer(lines: list[str]) -> list[str]:
    """`%%pypto --help` alone in a cell: IPython refuses a cell magic with an empty body
    before the magic sees it, so turn it into the line magic, which prints the usage."""
    if lines and lines[0].lstrip().startswith("%%pypto") and _asks_help(lines[0]) \
            and not "".join(lines[1:]).strip():
        return ["%pypto --help\n"]
    return lines


class _Progress:
    """A progress bar that appears only if the cell takes longer than a moment; the
    result's first output replaces it (`CellResult._ipython_display_`)."""

    def __init__(self) -> None:
        import time

        self.t0 = time.perf_counter()
        self.handle: Any = None

    def __call__(self, stage: str, frac: float) -> None:
        import time

        from IPython.display import HTML, display

        if frac >= 1.0 or (self.handle is None and time.perf_counter() - self.t0 < 0.5):
            return
        bar = HTML(f"<progress value='{frac:.2f}' max='1' style='width:240px'></progress> "
                   f"<small>{stage}</small>")
        if self.handle is None:
            self.handle = display(bar, display_id=True)
        else:
            self.handle.update(bar)

    def clear(self) -> None:
        from IPython.display import HTML

        if self.handle is not None:
            self.handle.update(HTML(""))


def _cell_number(shell: Any) -> int | None:
    """The In[n] of the running cell. IPython 8 counts a cell on after it runs and
    IPython 9 before, so `shell.execution_count` is off by one in one of them; the
    running cell's ExecutionResult (held by the display hook) has the number in both.
    None when the cell is not numbered (a silent run): the session numbers it itself."""
    running = getattr(shell.displayhook, "exec_result", None)
    return getattr(running, "execution_count", None)
