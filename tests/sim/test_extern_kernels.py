"""Hand-written kernels (`@pl.jit.extern`, `@pl.function(external_source=...)`): they
compile like any kernel (signature, region graph, text form); running one is refused
with a located NotSimulatableError at its launch; bad decorator arguments are refused
as the real toolchain refuses them."""
from __future__ import annotations

import os

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import NotSimulatableError, PyptoSyntaxError, PyptoTypeError
from pypto.ir.equal import assert_structural_equal
from pypto.ir.printer import print_program
from tests.frontend.frontend_helpers import assert_at

N = 16
HERE = os.path.dirname(os.path.abspath(__file__))


@pl.jit.extern(core_type="aiv", source="kernels/spmd_write.cpp")
def spmd_write(x: pl.Tensor, out: pl.InOut[pl.Tensor],  # ERR:decl
               base: pl.Scalar[pl.INDEX]) -> pl.Tensor: ...


@pl.jit
def uses_extern(a: pl.Tensor[[N, N], pl.FP32], out: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    b = pl.create_tensor([N, N], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="before"):
        b = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), 1.0), [0, 0], b)
    with pl.spmd(4):
        out = spmd_write(b, out, 2)  # ERR:launch
    return out


def test_a_kernel_calling_an_extern_compiles_with_its_signature():
    a = np.ones((N, N), np.float32)
    prog = uses_extern.compile(a, a.copy()).program
    fn = next(f for f in prog.functions if f.attr("extern") is not None)
    core, path = fn.attr("extern")
    assert core == "aiv" and path == os.path.join(HERE, "kernels", "spmd_write.cpp")
    assert [p.direction.value for p in fn.params] == ["In", "InOut", "In"]
    assert fn.returns == (fn.params[1].var.type,)  # the result is the InOut it writes
    text = print_program(prog)
    assert "'extern': ('aiv'," in text
    assert_structural_equal(pl.parse(text), prog)


def test_running_it_stops_at_the_launch_with_a_located_error():
    a = np.ones((N, N), np.float32)
    out = np.zeros((N, N), np.float32)
    with pytest.raises(NotSimulatableError) as info:
        uses_extern(a, out)
    err = info.value
    assert "spmd_write is a hand-written aiv kernel" in err.message
    assert "spmd_write.cpp" in err.message and "cannot run" in err.message
    assert err.code == "S020"
    assert_at(err, __file__, "launch", "spmd_write(")
    assert "declared at" in err.note and f"{__file__}:" in err.note


def test_calling_the_extern_itself_is_refused_at_its_declaration():
    with pytest.raises(NotSimulatableError) as info:
        spmd_write(np.ones(4, np.float32), np.ones(4, np.float32), 0)
    assert "cannot run" in info.value.message
    assert_at(info.value, __file__, "decl", "def")
    with pytest.raises(NotSimulatableError, match="cannot compile"):
        spmd_write.compile()
    assert repr(spmd_write) == "<pl.jit.extern spmd_write>"


@pl.program
class WithExternalSource:
    @pl.function(type=pl.FunctionType.AIV, external_source="kernels/aiv/k.cpp")
    def hand(self, out: pl.InOut[pl.Tensor[[N], pl.FP32]]) -> pl.Tensor[[N], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, out: pl.InOut[pl.Tensor[[N], pl.FP32]]) -> pl.Tensor[[N], pl.FP32]:
        with pl.spmd(core_num=2):
            out = self.hand(out)  # ERR:program
        return out


def test_a_program_function_with_external_source_is_an_extern():
    out = np.zeros(N, np.float32)
    with pytest.raises(NotSimulatableError) as info:
        WithExternalSource(out)
    assert "hand is a hand-written aiv kernel" in info.value.message
    assert_at(info.value, __file__, "program", "self.hand(")


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"core_type": "cube", "source": "k.cpp"}, ValueError, "must be 'aic', 'aiv', or 'mixed'"),
    ({"core_type": "aiv", "source": "k.cpp", "dual_aiv_dispatch": True}, ValueError,
     "dual_aiv_dispatch=True requires core_type='mixed'"),
    ({"core_type": "mixed", "aic_source": "k.cpp"}, ValueError,
     "requires both aic_source= and aiv_source="),
    ({"core_type": "aic"}, ValueError, "requires source="),
    ({"source": "k.cpp", "include_dirs": "inc"}, TypeError, "must be a sequence of paths"),
])
def test_bad_extern_declarations_are_refused(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        pl.jit.extern(**kwargs)(lambda x: None)


@pl.jit.extern(core_type="mixed", aic_source="k.cpp", aiv_source="k.cpp",
               dual_aiv_dispatch=True)
def with_body(out: pl.Out[pl.Tensor]) -> pl.Tensor:
    out = out  # ERR:body
    return out


@pl.jit.extern(source="k.cpp")
def two_results(out: pl.Out[pl.Tensor]) -> tuple[pl.Tensor, pl.Tensor]: ...  # ERR:results


@pl.jit
def calls_with_body(out: pl.Out[pl.Tensor[[N], pl.FP32]]):
    out = with_body(out)
    return out


@pl.jit
def calls_two_results(out: pl.Out[pl.Tensor[[N], pl.FP32]]):
    out, other = two_results(out)
    return out


def test_an_extern_stub_must_be_a_signature():
    with pytest.raises(PyptoSyntaxError) as info:
        calls_with_body.compile()
    assert "its Python body must be `...`" in info.value.message
    assert_at(info.value, __file__, "body", "out = out")
    with pytest.raises(PyptoTypeError) as info:
        calls_two_results.compile()
    assert "declares 2 result(s) but has 1 pl.Out / pl.InOut parameter(s)" in info.value.message
    assert_at(info.value, __file__, "results", "tuple[")
