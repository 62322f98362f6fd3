"""Fixtures for the scale tests: corpus directories of small kernel files."""
import pytest
from scale_kernels import write


@pytest.fixture
def corpus(tmp_path):
    """Four files: two pass, one fails its golden, one leaves rows of its pl.Out unwritten
    (diagnosed); plus a library module that is skipped."""
    d = tmp_path / "corpus"
    d.mkdir()
    write(d, "a_pass.py")
    write(d, "b_pass.py", tile=64)
    write(d, "c_wrong.py", factor=3)
    write(d, "d_tail.py", skip_rows=32)
    (d / "helpers.py").write_text("VALUE = 1\n")
    return d
