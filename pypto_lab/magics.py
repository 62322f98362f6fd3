"""`%%pypto`: parse the line, call `session.run_cell`, return the result object."""
from __future__ import annotations

from typing import Any

from IPython.core import magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class

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
    @magic_arguments.argument("--seed", type=int, default=0, help="input generation seed")
    @magic_arguments.argument("--rtol", type=float, default=1e-5, help="golden rtol")
    @magic_arguments.argument("--atol", type=float, default=1e-5, help="golden atol")
    @magic_arguments.argument("--sweep", action="append", metavar="NAME=V1,V2,...",
                              help="tile-size sweep of the cell's constants (needs --run)")
    @cell_magic
    def pypto(self, line: str, cell: str) -> Any:
        """Run the cell as Python, compile its @pl.jit kernels and show a summary."""
        try:
            ns = magic_arguments.parse_argstring(self.pypto, line)
            args = MagicArgs.from_namespace(ns)
        except ArgsError as err:
            raise UsageError(str(err)) from None
        result = run_cell(cell, args, self.shell.user_ns, line=line, progress=_progress())
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
    golden = user_ns[args.golden] if args.golden else None
    try:
        return sweep_cell(user_ns[name], items, user_ns[args.specs], golden,
                          platform=args.platform, rtol=args.rtol, atol=args.atol)
    except ValueError as err:
        raise UsageError(f"--sweep: {err}") from None


def _progress() -> Any:
    """A progress bar that appears only if the cell takes longer than a moment."""
    import time

    from IPython.display import display

    state: dict = {"t0": time.perf_counter(), "handle": None}

    def update(stage: str, frac: float) -> None:
        if state["handle"] is None and time.perf_counter() - state["t0"] < 0.5:
            return
        from IPython.display import HTML

        bar = HTML(f"<progress value='{frac:.2f}' max='1' style='width:240px'></progress> "
                   f"<small>{stage}</small>")
        if state["handle"] is None:
            state["handle"] = display(bar, display_id=True)
        elif frac >= 1.0:
            state["handle"].update(HTML(""))
        else:
            state["handle"].update(bar)

    return update
