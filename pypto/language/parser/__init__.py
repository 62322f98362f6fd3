"""`pypto.language.parser`: where the real toolchain keeps its DSL parser. pypto-lab's
parser is `pypto.frontend`; this package holds the real spellings of what callers
import from here (`diagnostics`: the parser's error classes)."""
