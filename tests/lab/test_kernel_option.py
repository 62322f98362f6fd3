"""`%%pypto --kernel NAME` naming no kernel of the cell (issue 31, item 8): a located
E003 diagnostic at the name on the magic line, with the kernels the cell compiled and
the nearest name - not a bare KeyError."""
from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from lab_cells import BAD, MIXED

from pypto_lab.args import MagicArgs
from pypto_lab.session import KernelNameError, run_cell


def _error(line: str, cell: str = MIXED):
    r = run_cell(cell, MagicArgs(kernel=line.split()[-1]), {}, line=line)
    (diag,) = [d for d in r.diagnostics if d.stage == "--kernel"]
    return r, diag.error


def test_an_unknown_kernel_is_a_located_error_naming_the_kernels():
    r, err = _error("--kernel mpl")
    assert isinstance(err, KernelNameError) and err.code == "E003"
    names = ", ".join(k.name for k in r.kernels)
    assert err.message == f"--kernel mpl: the cell defines no kernel named 'mpl'; " \
                          f"it compiled {names}"
    assert "did you mean 'mlp'?" in err.hint
    assert err.span.line == 1  # the %%pypto line, at the name
    assert (err.span.col, err.span.end_col) == (len("%%pypto --kernel ") + 1,
                                                 len("%%pypto --kernel mpl") + 1)
    assert err.span.file.startswith("<pypto-cell-")


def test_a_kernel_that_did_not_compile_is_named_so(ip):
    cell = BAD + MIXED.split("import pypto.language as pl", 1)[1]
    r = ip.run_cell_magic("pypto", "--kernel broken", cell)
    (diag,) = [d for d in r.diagnostics if d.stage == "--kernel"]
    assert "kernel 'broken' did not compile (its error is above)" in diag.error.message
    assert "E003" in diag.text() and "%%pypto --kernel broken" in diag.text()


def test_the_magic_reports_it_and_sweep_refuses_it(ip):
    r = ip.run_cell_magic("pypto", "--kernel nothere", MIXED)
    assert any(d.stage == "--kernel" for d in r.diagnostics)
    with pytest.raises(UsageError, match="--sweep: no compiled kernel named 'nothere'"):
        ip.run_cell_magic("pypto", "--kernel nothere --run specs golden --sweep M=1,2",
                          MIXED)
