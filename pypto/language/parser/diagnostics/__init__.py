"""The parser's error classes under the real toolchain's names (aliases of
`pypto.errors`: `ParserTypeError` is `PyptoTypeError`, and so on)."""
from pypto.language.parser.diagnostics.exceptions import *  # noqa: F403 (the same names)
from pypto.language.parser.diagnostics.exceptions import __all__ as __all__
