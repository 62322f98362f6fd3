"""Cell builders shared by the tutorial sources (see tools/build_notebooks.py)."""
from __future__ import annotations

import textwrap

import nbformat

CHECK = "nbval-check-output"


def md(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip())


def code(src: str, *, check: bool = False) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(textwrap.dedent(src).strip())
    if check:
        cell.metadata["tags"] = [CHECK]
    return cell


SETUP = code("""
    %load_ext pypto_lab
    import numpy as np
    import pypto.language as pl
    import pypto_lab

    pypto_lab.set_plotlyjs("none")  # store figures as plotly JSON, not 4.6 MB of plotly.js each
""")


def notebook(cells: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb
