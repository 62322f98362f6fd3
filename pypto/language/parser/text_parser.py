"""`pypto.language.parser.text_parser`: the real toolchain's module for reading kernels
from text; here the names of pypto-lab's text-form reader (`pl.parse` and its kin)."""
from __future__ import annotations

from pypto.language import loads, loads_program, parse, parse_program

__all__ = ["loads", "loads_program", "parse", "parse_program"]
