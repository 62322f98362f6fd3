"""`%%pypto` driven through a real InteractiveShell."""
from __future__ import annotations

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
        assert titles == ["summary mlp", "IR", "pipeline mlp", "region graph mlp"]


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
