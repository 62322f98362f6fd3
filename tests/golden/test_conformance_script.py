"""benchmarks/conformance.py summarises each pypto-lib run in its table's reason column."""
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "conformance.py"


def load():
    spec = importlib.util.spec_from_file_location("conformance", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_warnings_of_a_passing_run_are_summarised():
    c = load()
    out = ("[RUN]   warning: read past the end of a tensor: slice of 'x_flat'[0:16, 0:256] "
           "runs past axis 0 ...\n"
           "[RUN]   warning: 'kv' passes only because fresh memory on a2a3sim reads as zeros: "
           "3072 element(s) ...\n"
           "[RUN]   warning: 'kv' passes only because fresh memory on a2a3sim reads as zeros\n"
           "[RUN] PASS (0.34s)\n")
    assert c.warnings_from(out) == ("passes on a2a3sim's zero fill only: 'kv' partly "
                                    "unwritten (garbage on a2a3); reads past the end of "
                                    "'x_flat'")
    assert c.warnings_from("[RUN] PASS (0.1s)\n") == ""


def test_reason_of_a_failed_run_is_the_last_exception_line():
    c = load()
    out = "Traceback (most recent call last):\n  ...\nValueError: bad shape\n"
    assert c.reason_from(out, 1) == "ValueError: bad shape"
