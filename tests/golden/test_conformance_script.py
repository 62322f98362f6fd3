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
    assert c.warnings_from(out) == ("passes on zero-filled fresh memory only: 'kv' partly "
                                    "unwritten; reads past the end of 'x_flat'")
    assert c.warnings_from("[RUN] PASS (0.1s)\n") == ""


def test_reason_of_a_failed_run_is_the_last_exception_line():
    c = load()
    out = "Traceback (most recent call last):\n  ...\nValueError: bad shape\n"
    assert c.reason_from(out, 1) == "ValueError: bad shape"


FAIL_UNWRITTEN = """\
Output(s) does not match golden: ['kv']
  'kv' pl.Out float32[4, 2, 512]: FAIL (ratio_allclose(atol=0.0001, rtol=0.0078125))
    3072/4096 mismatched (75.00%), first at [0,0,0]
    unwritten pl.Out region: 6 of 8 slices [0, 0, :] ..., 3072 element(s) never written \
(last writer = none); every mismatch lies there
    the golden asserts zeros there, a value the kernel never promised: ...
"""


def test_a_failure_on_never_written_regions_only_is_told_apart():
    c = load()
    assert c.unwritten_only(FAIL_UNWRITTEN) == ["kv"]
    # a second failing output that is a real mismatch makes it a real failure
    both = FAIL_UNWRITTEN.replace("Output(s) does not match golden: ['kv']",
                                  "Output(s) does not match golden: ['kv', 'y']") + (
        "  'y' pl.Out float32[8, 8]: FAIL (allclose)\n    3/64 mismatched (4.69%)\n")
    assert c.unwritten_only(both) == []
    # a mismatch partly outside the unwritten region is a real failure too
    assert c.unwritten_only(FAIL_UNWRITTEN.replace("; every mismatch lies there", "")) == []
    assert c.unwritten_only("ValueError: bad shape\n") == []
