"""`pypto` must not pull in the notebook stack."""
from __future__ import annotations

import subprocess
import sys


def test_core_imports_no_notebook_modules():
    code = ("import pypto.language, pypto.compile, sys\n"
            "try:\n    import pypto.sim, pypto.golden\nexcept ImportError:\n    pass\n"
            "bad = [m for m in ('IPython', 'ipywidgets', 'plotly', 'networkx', 'pypto_lab')"
            " if m in sys.modules]\nprint(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_import_pypto_lab_is_light():
    code = ("import pypto_lab, sys\n"
            "print(','.join(m for m in ('IPython', 'plotly', 'networkx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""
