"""Find and parse a decorated function's source, wherever it was defined.

`inspect.getsourcelines` reads through `linecache`, which also holds IPython
cell sources, so kernels defined in notebook cells parse like kernels in files.
Spans are mapped back to the original file's lines and character columns.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pypto.errors import PyptoSyntaxError, UnsupportedFeatureError
from pypto.ir.span import Span

_PARSE_LOCK = threading.Lock()


def parse_python(text: str, filename: str = "<unknown>", mode: str = "exec") -> Any:
    """`ast.parse`, safe to call from several threads. CPython 3.11 keeps the AST
    constructor's recursion count in state shared by the interpreter, so two threads
    parsing at once can fail with a spurious `SystemError: AST constructor recursion
    depth mismatch` (python/cpython#106905): our parses take turns, and one that still
    meets it (another library parsing in another thread) is retried."""
    for attempt in range(3):
        try:
            with _PARSE_LOCK:
                return ast.parse(text, filename=filename, mode=mode)
        except SystemError as err:
            if "recursion depth mismatch" not in str(err) or attempt == 2:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class SourceInfo:
    file: str
    first_line: int  # 1-based line of the `def` (or first decorator) in the file
    indent: int  # columns removed by dedenting
    tree: ast.FunctionDef | ast.AsyncFunctionDef

    def span(self, node: Any) -> Span:
        """The file span of an AST node of this function."""
        if not hasattr(node, "lineno"):
            return Span(self.file, self.first_line, 1 + self.indent)
        line = node.lineno + self.first_line - 1
        end_line = (getattr(node, "end_lineno", None) or node.lineno) + self.first_line - 1
        col = self._char_col(line, node.col_offset + self.indent)
        end_off = getattr(node, "end_col_offset", None)
        end_col = self._char_col(end_line, end_off + self.indent) if end_off is not None else 0
        return Span(self.file, line, col, end_line, end_col)

    def _char_col(self, line: int, byte_col: int) -> int:
        """AST columns are UTF-8 byte offsets; editors count characters."""
        text = linecache.getline(self.file, line)
        if text and not text.isascii():
            return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + 1
        return byte_col + 1


_TREES: dict = {}  # file -> (its text, {first line: [definitions starting there]})


def _fast_source(fn: Callable) -> tuple | None:
    """(lines, first line, file) of `fn` from an AST of its whole file (cached per file,
    keyed by the file's whole text), or None to let inspect find them. Cold-start speed
    (issue 7): inspect.getsourcelines tokenizes the source, and the tokenizer's regexes
    alone cost ~10 ms to build."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    file = code.co_filename
    # A file edited since linecache read it (then importlib.reload, or %autoreload) is
    # read again: the kernel that runs is the one in the file now. (Notebook cells have
    # no file to compare with; linecache keeps them.)
    linecache.checkcache(file)
    lines = linecache.getlines(file)
    if not lines:
        return None
    # the cache is keyed by the content: any edit, even one keeping the line count and
    # the first and last lines, parses the file again (comparing the text costs
    # microseconds; parsing it, milliseconds)
    key = "".join(lines)
    tree = _TREES.get(file)
    if tree is None or tree[0] != key:
        try:
            mod = parse_python(key)
        except (SyntaxError, ValueError):
            return None
        defs: dict[int, list] = {}
        # definitions are statements: only statement lists are searched (ast.walk over
        # every expression of the file cost ~10 ms of a cold start)
        stack = [mod]
        while stack:
            n = stack.pop()
            for f in ("body", "orelse", "finalbody", "handlers", "cases"):
                kids = getattr(n, f, None)
                if not isinstance(kids, list):
                    continue
                for node in kids:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                        defs.setdefault(start, []).append(node)
                    stack.append(node)
        tree = _TREES[file] = (key, defs)
    found = tree[1].get(code.co_firstlineno)
    if not found or len(found) != 1 or found[0].name != fn.__name__:
        return None
    node = found[0]
    first = code.co_firstlineno
    return lines[first - 1:node.end_lineno], first, file


def get_source(fn: Callable) -> SourceInfo:
    """Parse `fn`'s source into an `ast.FunctionDef` with its location in the file."""
    try:
        # `python -c CODE`: the code is on the command line (a "<string>" in linecache
        # may be some other text, e.g. one pl.parse read)
        fast = _command_line_source(fn) or _fast_source(fn)
        if fast is not None:
            lines, first, file = fast
        else:
            lines, first = inspect.getsourcelines(fn)
            file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as exc:
        raise PyptoSyntaxError(
            f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: {exc}",
            hint="kernels must be defined in a file, a notebook cell or `python -c`; "
                 "functions created by exec() of a string have no source to parse") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _leading(text) - _leading(dedented)
    module = parse_python(dedented)
    node = module.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise UnsupportedFeatureError(f"{fn!r} is not a function definition")
    return SourceInfo(file=file, first_line=max(first, 1), indent=indent, tree=node)


def _command_line_source(fn: Callable) -> tuple[list[str], int, str] | None:
    """The lines of `fn` when it was defined by `python -c CODE` (its file is
    `<string>` and the code is in `sys.orig_argv`), else None."""
    code = getattr(fn, "__code__", None)
    argv = list(getattr(sys, "orig_argv", ()))
    if code is None or code.co_filename != "<string>" or "-c" not in argv[:-1]:
        return None
    text = argv[argv.index("-c") + 1]
    lines = text.splitlines(keepends=True)
    try:
        mod = parse_python(text)
    except SyntaxError:
        return None
    first = code.co_firstlineno
    for node in ast.walk(mod):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == fn.__name__ and \
                min([node.lineno] + [d.lineno for d in node.decorator_list]) == first:
            # diagnostics show source lines through linecache
            linecache.cache["<string>"] = (len(text), None, lines, "<string>")
            return lines[first - 1:node.end_lineno], first, "<string>"
    return None


def _leading(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0
