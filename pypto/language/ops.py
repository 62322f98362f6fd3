"""Op stubs: the `pl.add`, `pl.tensor.dim`, `pl.tile.load` … objects users call in kernels.

Each stub is generated from the op registry, so the `pl` namespace cannot drift
from what the parser, passes and simulator know. Calling one outside a kernel
raises: kernel bodies are parsed, never executed.
"""
from __future__ import annotations

from typing import Any

import pypto.ops  # noqa: F401  (registers every op family)
from pypto.language.dsl import KernelOnlyError
from pypto.ops.registry import BY_PUBLIC_NAME, REGISTRY


class OpStub:
    """The Python object behind a public op name such as `pl.row_sum`."""

    def __init__(self, op: str, public_name: str):
        self.op = op
        self.public_name = public_name
        self.__name__ = public_name.rsplit(".", 1)[-1]

    # help(pl.add), `pl.add?` and inspect.signature read these; they come from the
    # registry when asked (reading ~220 signatures at import would slow `import pl`).
    @property
    def __doc__(self) -> str:  # type: ignore[override]
        return REGISTRY[self.op].doc

    @property
    def __signature__(self) -> Any:
        return REGISTRY[self.op].spelling(self.public_name).signature

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.__signature__.bind(*args, **kwargs)  # a TypeError, as the real wrapper's call
        raise KernelOnlyError(f"{self.public_name}() can only be used inside a kernel body; "
                              "kernel bodies are parsed, not executed")

    def __repr__(self) -> str:
        return f"<pl op {self.public_name}>"


def build_namespaces() -> dict[str, dict[str, OpStub]]:
    """Map 'pl', 'pl.tensor', 'pl.tile', … to {attribute: OpStub}."""
    spaces: dict[str, dict[str, OpStub]] = {}
    for public, op in BY_PUBLIC_NAME.items():
        space, _, attr = public.rpartition(".")
        spaces.setdefault(space, {})[attr] = OpStub(op, public)
    return spaces
