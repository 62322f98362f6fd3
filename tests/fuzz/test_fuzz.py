"""Bad input never crashes pypto: the hand-written corpus (`corpus/*.py`) and a few hundred
mutants of the seed kernels (`seeds/*.py`, mutated by `mutator.py` under hypothesis) each
end in a located user error or succeed. Cases run in watched worker processes with a time
and memory budget (see `fuzzlib.py`); `python tools/fuzz_report.py` runs the same thing
from the command line."""
from __future__ import annotations

import ast
import os

import fuzzlib
import mutator
import pytest

GENERATED = int(os.environ.get("PYPTO_FUZZ_CASES", "600"))


def _report(capsys, text: str) -> None:
    with capsys.disabled():
        print("\n" + text)


def test_corpus_cases_end_as_expected(capsys):
    cases = fuzzlib.load_corpus()
    assert len(cases) >= 150
    outs = fuzzlib.run_cases(cases)
    _report(capsys, fuzzlib.summary(outs, "fuzz corpus"))
    wrong = [f"{o.id}: {o.expectation_error()}\n{o.detail}" for o in outs
             if o.expectation_error() is not None]
    assert not wrong, "\n\n".join(wrong)


def test_corpus_covers_every_diagnostic_family():
    from pypto import errors

    expected = {c.expect for c in fuzzlib.load_corpus()}
    families = {"PyptoSyntaxError", "PyptoTypeError", "UndefinedNameError",
                "InvalidOperationError", "UnsupportedFeatureError", "ScopeError",
                "DynamicShapeError", "SimulationError", "definition", "ok"}
    assert families <= expected, families - expected
    for name in expected - {"definition", "ok"}:
        assert issubclass(getattr(errors, name), errors.PyptoError), name


def test_generated_mutants_never_crash(capsys):
    cases = fuzzlib.generate(GENERATED, seed=0)
    assert len(cases) >= min(GENERATED, 500)
    outs = fuzzlib.run_cases(cases)
    c = fuzzlib.counts(outs)
    _report(capsys, fuzzlib.summary(outs, "fuzz generated (hypothesis, derandomized)"))
    bugs = [f"{o.short()}\n{o.detail}\n--- source ---\n{case.source}"
            for o, case in zip(outs, cases) if o.bug]
    assert not bugs, "\n\n".join(bugs[:5])
    # the mutants exercise both sides of the contract
    assert c["user"] + c["sim"] > len(cases) // 2
    assert c["ran"] > 50
    assert c["python"] < len(cases) // 10


def test_generation_is_deterministic():
    a = [(c.id, c.source) for c in fuzzlib.generate(40, seed=0)]
    b = [(c.id, c.source) for c in fuzzlib.generate(40, seed=0)]
    assert a == b
    r1 = [(c.id, c.source) for c in fuzzlib.generate(40, seed=3, engine="random")]
    r2 = [(c.id, c.source) for c in fuzzlib.generate(40, seed=3, engine="random")]
    assert r1 == r2
    for _, src in a + r1:
        ast.parse(src)


def test_seeds_compile_and_run():
    seeds = [fuzzlib.Case(name, text, origin=name, expect="ok")
             for name, text in mutator.seed_sources().items()]
    assert len(seeds) >= 6
    outs = fuzzlib.run_cases(seeds, workers=0)
    assert [o.outcome for o in outs] == ["ran"] * len(seeds), [o.short() for o in outs]


# --- the harness itself flags what it must --------------------------------------------------

HEAD = "import pypto.language as pl\n\n\n"


def _one(source: str, **kw) -> fuzzlib.Outcome:
    return fuzzlib.run_cases([fuzzlib.Case("probe", HEAD + source, **kw)], workers=0)[0]


def test_harness_flags_an_escaping_exception():
    out = _one("class K:\n    def compile(self):\n        import pypto.ir.nodes\n"
               "        raise KeyError('boom')\n\n\nkernel = K()\n")
    assert out.outcome == "crash" and out.bug


def test_harness_flags_an_internal_error():
    out = _one("from pypto.errors import InternalError\n\n\nclass K:\n"
               "    def compile(self):\n        raise InternalError('bug')\n\n\nkernel = K()\n")
    assert out.outcome == "internal"


def test_harness_flags_an_unlocated_user_error():
    out = _one("from pypto.errors import PyptoTypeError\n\n\nclass K:\n"
               "    def compile(self):\n        raise PyptoTypeError('where?')\n\n\nkernel = K()\n")
    assert out.outcome == "unlocated"


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs SIGALRM")
def test_harness_flags_a_hang(monkeypatch):
    monkeypatch.setattr(fuzzlib, "SOFT_TIMEOUT", 0.5)
    out = _one("class K:\n    def compile(self):\n        import pypto\n        while True:\n"
               "            pass\n\n\nkernel = K()\n")
    assert out.outcome == "timeout"


def test_worker_pool_survives_a_dying_worker(monkeypatch):
    monkeypatch.setattr(fuzzlib, "HARD_TIMEOUT", 5.0)
    cases = [fuzzlib.Case("dies", HEAD + "import os\nos._exit(3)\n"),
             fuzzlib.Case("fine", HEAD + "N = 1\n")]
    outs = fuzzlib.run_cases(cases, workers=1)
    assert [o.outcome for o in outs] == ["died", "python"]
