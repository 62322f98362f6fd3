"""Runtime scopes follow the real parser's rules: `pl.scope()` opens an AUTO scope, which
needs `auto_scope=False` on its function (with the default the compiler places AUTO
scopes itself) and may not nest inside a MANUAL one; `pl.scope` takes keywords only."""
import pytest
from frontend_helpers import assert_at

import pypto.language as pl
from pypto.errors import PyptoSyntaxError

HERE = __file__
N = 64


def program(body: str):
    """A program whose orchestration function runs `body` around `a = self.k1(x)`."""
    if body == "auto_default":
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k1(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                return x

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                with pl.scope():  # ERR:auto_default
                    a = self.k1(x)
                return a
    elif body == "auto_opted_out":
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k1(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                return x

            @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
            def main(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                with pl.scope():
                    a = self.k1(x)
                with pl.scope(mode=pl.ScopeMode.MANUAL):
                    b = self.k1(a)
                return b
    elif body == "auto_in_manual":
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k1(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                return x

            @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
            def main(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                with pl.manual_scope():  # noqa: SIM117 - kernel scopes nest one per with
                    with pl.scope():  # ERR:auto_in_manual
                        a = self.k1(x)
                return a
    else:
        @pl.program
        class P:
            @pl.function(type=pl.FunctionType.InCore)
            def k1(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                return x

            @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
            def main(self, x: pl.Tensor[[N], pl.FP32]) -> pl.Tensor[[N], pl.FP32]:
                with pl.scope(1):  # ERR:positional
                    a = self.k1(x)
                return a
    return P


@pytest.mark.parametrize("case, message", [
    ("auto_default", "pl.scope() opens an AUTO runtime scope, which needs auto_scope=False"),
    ("auto_in_manual", "an AUTO pl.scope() cannot nest inside a MANUAL scope"),
    ("positional", "pl.scope takes keyword arguments only"),
])
def test_runtime_scope_rules(case, message):
    with pytest.raises(PyptoSyntaxError) as info:
        program(case).compile()
    assert message in info.value.message
    assert_at(info.value, HERE, case, "pl.scope(")


def test_auto_scope_opt_out_allows_auto_and_manual_scopes():
    assert program("auto_opted_out").compile().program is not None
