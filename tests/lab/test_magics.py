"""`%%pypto` driven through a real InteractiveShell."""
from __future__ import annotations

import re

import numpy as np
import pytest
from IPython.core.error import UsageError
from lab_cells import BAD, MIXED, PARTIAL, needs_sim

from pypto_lab.result import CellResult


class TestDefineAndCompile:
    def test_cell_defines_kernel_in_user_namespace(self, ip):
        r = ip.run_cell_magic("pypto", "", MIXED)
        assert isinstance(r, CellResult)
        assert "mlp" in ip.user_ns
        assert [k.name for k in r.kernels] == ["mlp"]

    def test_summary_names_regions_units_and_ub(self, ip):
        text = repr(ip.run_cell_magic("pypto", "", MIXED))
        assert "mm_act" in text and "mixed" in text and "KiB" in text
        assert "C→V split=UP_DOWN slots=2" in text

    def test_repr_is_deterministic(self, ip):
        a = repr(ip.run_cell_magic("pypto", "--show ir,passes", MIXED))
        b = repr(ip.run_cell_magic("pypto", "--show ir,passes", MIXED))
        assert a == b

    def test_mimebundle_has_offline_html(self, ip):
        bundle = ip.run_cell_magic("pypto", "--show graph", MIXED)._repr_mimebundle_()
        html = bundle["text/html"]
        assert 'src="https://cdn' not in html and "Plotly.newPlot" in html
        assert bundle["text/plain"].startswith("%%pypto")

    def test_views_via_show_flag(self, ip):
        r = ip.run_cell_magic("pypto", "-s ir -s passes --show graph", MIXED)
        titles = [v.title for v in r.views]
        assert titles == ["summary mlp", "IR", "pipeline mlp", "region graph mlp",
                          "data path mm_act"]

    def test_run_and_heatmap_come_right_after_the_region_graph(self, ip):
        from lab_cells import PARTIAL

        r = ip.run_cell_magic("pypto", "--run specs golden --show graph,heatmap", PARTIAL)
        titles = [v.title for v in r.views]
        # the first screen of the cell: region graph, run, heatmap; what ran after them
        assert titles == ["summary partial", "region graph partial", "run partial",
                          "heatmap partial.y", "task grid partial · y"]


    def test_the_summary_of_a_run_says_how_each_region_ran(self, ip):
        from lab_cells import PARTIAL

        r = ip.run_cell_magic("pypto", "--run specs golden", PARTIAL)
        summary = r.views[0]
        assert summary.title == "summary partial"
        lines = summary.text().splitlines()
        header = lines[1]
        assert header.split()[-1] == "ran"
        # (the workbench runs the uninit check, which runs block by block)
        row = lines[3]
        assert row.startswith("rows") and row.endswith(
            "per_block (launch: batching is off: the uninit check runs block by block)")
        assert ">ran<" in summary.html()
        (decision,) = r.kernels[0].run.decisions["partial_rows"]
        assert (decision.kind, decision.times) == ("per_block", 1)


class TestErrors:
    def test_error_cell_shows_diagnostic_and_shell_survives(self, ip):
        r = ip.run_cell_magic("pypto", "", BAD)
        assert not r.ok and r.kernels == []
        text = repr(r)
        assert "undefined_name" in text and "^" in text
        assert "Traceback" not in text and "frontend" not in text
        html = r._repr_mimebundle_()["text/html"]
        assert "pypto-diagnostic" in html and "<mark>" in html
        ok = ip.run_cell("1 + 1")
        assert ok.success and ok.result == 2
        assert ip.run_cell_magic("pypto", "", MIXED).ok

    def test_error_lines_match_the_cell(self, ip):
        r = ip.run_cell_magic("pypto", "", BAD)
        span = r.diagnostics[0].error.span
        assert span.line == 1 + BAD.splitlines().index(
            "        y[0:64, :] = pl.exp(undefined_name)") + 1

    def test_unknown_view_is_usage_error(self, ip):
        with pytest.raises(UsageError, match="unknown view"):
            ip.run_cell_magic("pypto", "--show nope", MIXED)

    def test_heatmap_without_run_is_usage_error(self, ip):
        with pytest.raises(UsageError, match="needs a run"):
            ip.run_cell_magic("pypto", "--show heatmap", MIXED)

    def test_help_is_the_docstring(self, ip):
        doc = ip.find_cell_magic("pypto").__doc__
        assert "--run" in doc and "--show" in doc and "--platform" in doc


@needs_sim
class TestRun:
    def test_run_heatmap_timeline(self, ip):
        r = ip.run_cell_magic("pypto", "--run specs golden --show heatmap,timeline", PARTIAL)
        assert r.run is not None and not r.run.passed
        titles = [v.title for v in r.views]
        assert "heatmap partial.y" in titles and "timeline partial" in titles


class TestCellErrors:
    """Issue 12 item 7: errors in cells, one compact located style."""

    def test_python_syntax_error_is_a_located_diagnostic(self, ip):
        r = ip.run_cell("%%pypto\nimport pypto.language as pl\nx = (1,\ny = 2\n",
                        store_history=True)
        assert r.error_in_exec is None, "no traceback through magics.py / session.py"
        (d,) = r.result.diagnostics
        span = d.error.span
        assert (span.line, span.col) == (3, 5)  # the editor's line: %%pypto is line 1
        text = repr(r.result)
        assert "error[E002]: SyntaxError: '(' was never closed" in text
        # named like its In[n] (".k" when that number was taken by a cell run earlier
        # without history)
        assert re.fullmatch(rf"<pypto-cell-{r.execution_count}(\.\d+)?>", span.file)
        assert "3 | x = (1," in text and "Traceback" not in text

    def test_help_prints_the_usage(self, ip, capsys):
        r = ip.run_cell("%%pypto --help\n")
        assert r.error_before_exec is None and r.error_in_exec is None
        out = capsys.readouterr().out
        assert "%%pypto [-s VIEWS] [--run NAME [NAME ...]]" in out and "--platform" in out

    def test_the_line_magic_prints_the_usage(self, ip, capsys):
        ip.run_line_magic("pypto", "")
        assert "%%pypto [options]" in capsys.readouterr().out

    @needs_sim
    def test_specs_are_checked_against_the_signature_before_the_golden(self, ip):
        cell = PARTIAL.replace('TensorSpec("x", [64, 64]', 'TensorSpec("x", [64, 32]') + \
            "\ndef golden(v):\n    raise AssertionError('the golden must not run')\n"
        r = ip.run_cell_magic("pypto", "--run specs golden", cell)
        (d,) = r.diagnostics
        assert d.error.code == "E102" and r.run is None
        assert str(d.error.message).startswith(
            "specs[0] (TensorSpec 'x') has shape [64, 32], but 'x' is "
            "pl.Tensor[[64, 64], pl.FP32]: axis 1 is 32, the kernel says 64")
        line = PARTIAL.splitlines().index(next(ln for ln in PARTIAL.splitlines()
                                               if ln.startswith("def partial")))
        assert d.error.span.line == line + 2  # body line + the %%pypto line: the editor's

    @needs_sim
    def test_spec_names_order_and_dtype(self, ip):
        swapped = PARTIAL.replace('TensorSpec("y", [64, 64], np.float32',
                                  'TensorSpec("y", [64, 64], np.float16')
        (d,) = ip.run_cell_magic("pypto", "--run specs golden", swapped).diagnostics
        assert "specs[1] (TensorSpec 'y') has dtype float16" in d.error.message
        swapped = PARTIAL.replace('TensorSpec("x"', 'TensorSpec("tmp"').replace(
            'TensorSpec("y"', 'TensorSpec("x"').replace('TensorSpec("tmp"', 'TensorSpec("y"')
        (d,) = ip.run_cell_magic("pypto", "--run specs golden", swapped).diagnostics
        assert "(the same names in a different order)" in d.error.message
        # specs bind by position: another name is fine, its shape is still checked
        renamed = PARTIAL.replace('TensorSpec("x", [64, 64]', 'TensorSpec("inp", [64, 8]')
        (d,) = ip.run_cell_magic("pypto", "--run specs golden", renamed).diagnostics
        assert "specs[0] (TensorSpec 'inp', bound to 'x') has shape [64, 8]" in d.error.message

    def test_a_warning_is_shown_once(self, ip, capsys):
        cell = MIXED.replace("y: pl.Out[pl.Tensor[[128, 128], pl.FP16]]",
                             "y: pl.Tensor[[128, 128], pl.FP16]")
        r = ip.run_cell_magic("pypto", "", cell)
        text = repr(r)
        assert text.count("declared as an input") == 1
        assert "declared as an input" not in capsys.readouterr().err

    @needs_sim
    def test_views_take_run_jit_results(self, tmp_path, monkeypatch):
        import importlib

        import pypto_lab
        from pypto.golden import run_jit

        (tmp_path / "partial_kernel.py").write_text(PARTIAL)
        monkeypatch.syspath_prepend(str(tmp_path))
        ns = vars(importlib.import_module("partial_kernel"))
        result = run_jit(ns["partial"], ns["specs"], ns["golden"], verbose=False)
        assert "timeline partial" in pypto_lab.timeline(result).text()
        assert pypto_lab.heatmap(result).output == "y"

    def test_no_hint_names_a_missing_function(self):
        import pypto_lab

        with pytest.raises(ValueError) as info:
            pypto_lab.heatmap(object())
        assert "pypto_lab.run(" not in str(info.value)
        assert "pypto.golden.run_jit" in str(info.value)

    def test_cells_run_without_history_keep_their_own_source(self, ip):
        """nbval runs cells without history: the execution count repeats. A kernel
        that failed to compile in one cell still reads its own text after another cell
        ran (it is parsed again on the next compile)."""
        from pypto.errors import UndefinedNameError

        first = ip.run_cell("%%pypto\n" + BAD, store_history=False).result
        ip.run_cell("%%pypto\n" + MIXED, store_history=False)
        with pytest.raises(UndefinedNameError) as info:
            ip.user_ns["broken"].compile()
        assert info.value.span == first.diagnostics[0].error.span


PLAIN_BAD = """
import numpy as np
import pypto.language as pl

@pl.jit
def bad(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.no_such_op(x[:, :])
    return y

bad(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32))
"""


def test_an_error_in_a_plain_cell_names_the_cell(ip):
    """Issue 29 item 5: not /tmp/ipykernel_*/....py:13:9 but the cell and its line."""
    from pypto.errors import PyptoError

    res = ip.run_cell(PLAIN_BAD, store_history=True)
    err = res.error_in_exec
    assert isinstance(err, PyptoError)
    assert f"--> Cell In[{res.execution_count}], line 7, column 19" in str(err)
    assert "y[:, :] = pl.no_such_op(x[:, :])" in str(err)  # the cell's own line


def test_an_error_in_a_pypto_cell_names_the_cell(ip):
    r = ip.run_cell("%%pypto\nimport pypto.language as pl\nx = (1,\ny = 2\n",
                    store_history=True)
    (d,) = r.result.diagnostics
    assert f"--> Cell In[{r.execution_count}], line 3, column 5" in repr(r.result)
    assert d.error.span.file.startswith("<pypto-cell-")  # the span keeps the real file


def test_unloading_forgets_the_cell_names(ip):
    from pypto.diagnostics import location
    from pypto.ir.span import Span

    span = Span("<pypto-cell-7>", 2, 3)
    assert location(span) == "Cell In[7], line 2, column 3"
    ip.extension_manager.unload_extension("pypto_lab")
    try:
        assert location(span) == "<pypto-cell-7>:2:3"
    finally:
        ip.extension_manager.load_extension("pypto_lab")


def test_run_in_a_cell_without_a_kernel_says_so_and_how(ip):
    """Issue 29 item 5: such a cell ran nothing and said only '0 kernel(s) compiled'."""
    from lab_cells import PARTIAL

    ip.run_cell_magic("pypto", "", PARTIAL)
    r = ip.run_cell("%%pypto --run specs golden --show heatmap\nspecs = specs[:]\n",
                    store_history=True)
    (d,) = r.result.diagnostics
    assert d.error.message == "--run: the cell defines no kernel, so nothing ran"
    assert d.error.hint.startswith("to run a kernel of an earlier cell, name it: --kernel ")
    span = d.error.span
    assert (span.line, span.col, span.end_col) == (1, 9, 14)  # the --run on the magic line


def test_a_cell_that_binds_a_kernel_again_runs_it(ip):
    """Tutorial 7's `kernel = lib.add_rms_norm`, run a second time: the same object, and
    still the cell's kernel (it compiled nothing and said only '0 kernel(s) compiled')."""
    from lab_cells import PARTIAL

    ip.run_cell_magic("pypto", "", PARTIAL)
    for _ in range(2):
        r = ip.run_cell_magic("pypto", "--run specs golden", "kernel = partial\n")
        assert [k.name for k in r.kernels] == ["kernel"] and not r.diagnostics
        assert r.kernels[0].run is not None


def test_kernel_option_runs_a_kernel_of_an_earlier_cell(ip):
    from lab_cells import PARTIAL

    ip.run_cell_magic("pypto", "", PARTIAL)
    r = ip.run_cell_magic("pypto", "--run specs golden --kernel partial",
                          "specs = specs[:]  # only the specs change here\n")
    assert [k.name for k in r.kernels] == ["partial"] and not r.diagnostics
    assert r.kernels[0].run is not None and not r.kernels[0].run.passed  # rows 48:64


def test_importing_the_package_in_ipython_registers_the_magic(ip):
    """Issue 29 item 5: a notebook that imports pypto_lab but forgot `%load_ext`."""
    import pypto_lab

    ip.extension_manager.unload_extension("pypto_lab")
    assert "pypto" not in ip.magics_manager.magics["cell"]
    try:
        pypto_lab._load_into_running_shell()  # what `import pypto_lab` runs
        assert "pypto" in ip.magics_manager.magics["cell"]
        r = ip.run_cell_magic("pypto", "", "x = 1\n")
        assert r.kernels == []
    finally:
        if "pypto" not in ip.magics_manager.magics["cell"]:
            ip.extension_manager.load_extension("pypto_lab")


SEEDED = """
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def copy(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:, :] = pl.add(x[:, :], 0.0)
    return y

specs = [TensorSpec("x", [8, 8], np.float32, init_value=np.random.randn),
         TensorSpec("y", [8, 8], np.float32, is_output=True)]
"""


def test_seed_option_seeds_the_inputs(ip):
    """`--seed` was passed only when run_jit took it, which it never did: ignored."""
    def inputs(line):
        run = ip.run_cell_magic("pypto", line, SEEDED).kernels[0].run
        return np.asarray(run.outputs[0].actual) if run.outputs else \
            np.asarray(run.raw.sim.outputs["y"])

    a, b, c = (inputs(f"--run specs --seed {s}") for s in (3, 3, 4))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.random.seed(3)
    np.testing.assert_array_equal(a, np.random.randn(8, 8).astype(np.float32))
