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


def test_every_core_module_imports_first():
    """Each module of `pypto` imports on its own in a fresh module table: an import cycle
    that only bites when a particular module is imported first (the CLI imports
    `pypto.golden` before `pypto.sim`, say) fails here, naming the module."""
    code = (
        "import importlib, pkgutil, sys, pypto\n"
        "names = [m.name for m in pkgutil.walk_packages(pypto.__path__, 'pypto.')]\n"
        "bad = []\n"
        "for name in names:\n"
        "    for loaded in [k for k in sys.modules if k == 'pypto' or k.startswith('pypto.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as err:\n"
        "        if 'torch' not in str(err):\n"
        "            bad.append(f'{name}: {err}')\n"
        "print(len(names)); print('\\n'.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    count, *bad = out.stdout.strip().splitlines()
    assert int(count) > 60 and bad == []
