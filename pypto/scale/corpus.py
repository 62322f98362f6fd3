"""Which files a corpus run covers: paths, directories, globs and list files.

A directory stands for every `.py` file under it (recursively, sorted, hidden and
`__pycache__` folders left out). A list file (`--list FILE`, or `@FILE` among the
targets) holds one path or glob a line (`#` comments); its entries, like globs given
on the command line, are relative to `root` (default: the current directory), so
pypto-lib's tier lists work with `--root CHECKOUT`.

Files that pypto-lib's CI would not run are kept, marked skipped with the reason:
`*_draft.py`, files marked `# ci: no-sim`, and files without a `__main__` block
(library modules, not kernel scripts).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_NO_SIM = re.compile(r"#\s*ci:\s*no-sim")
_GLOB = set("*?[")


class CorpusError(ValueError):
    """A target that names nothing runnable (the message says what was given)."""


@dataclass(frozen=True)
class CorpusFile:
    path: str  # absolute
    label: str  # as shown in reports: relative to the root when under it
    skip: str = ""  # why it is not run ("" = run it)


def skip_reason(path: Path) -> str:
    if path.name.endswith("_draft.py"):
        return "draft file"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if _NO_SIM.search(text):
        return "marked # ci: no-sim"
    if "__main__" not in text:
        return "no __main__ block (a library module, not a kernel script)"
    return ""


def read_list(list_file: Path) -> list[str]:
    try:
        lines = list_file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CorpusError(f"list file {list_file}: {exc.strerror or exc}") from None
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def _python_files(directory: Path) -> list[Path]:
    found = []
    for p in sorted(directory.rglob("*.py")):
        rel = p.relative_to(directory).parts
        if any(part.startswith(".") or part == "__pycache__" for part in rel[:-1]):
            continue
        found.append(p)
    return found


def _expand(target: str, root: Path) -> list[Path]:
    if any(c in _GLOB for c in target):
        base = Path(target)
        hits = sorted(Path("/").glob(str(base)[1:])) if base.is_absolute() else \
            sorted(root.glob(target))
        if not hits:
            raise CorpusError(f"{target}: the pattern matches no file under {root}")
        return [h for h in hits if h.is_file() and h.suffix == ".py"] + \
            [p for h in hits if h.is_dir() for p in _python_files(h)]
    path = Path(target)
    if not path.is_absolute() and not path.exists():
        path = root / target
    if path.is_dir():
        files = _python_files(path)
        if not files:
            raise CorpusError(f"{target}: a directory with no .py files under it")
        return files
    if path.is_file():
        return [path]
    raise CorpusError(f"{target}: no such file or directory")


def collect(targets: list[str], root: str | Path | None = None,
            lists: Sequence[str | Path] = ()) -> list[CorpusFile]:
    """The files `targets` (and the entries of `lists`) name, in order, each once."""
    base = Path(root).resolve() if root is not None else Path.cwd()
    names: list[str] = []
    for t in targets:
        if t.startswith("@"):
            names += read_list(Path(t[1:]))
        else:
            names.append(t)
    for lf in lists:
        names += read_list(Path(lf))
    seen: dict[Path, CorpusFile] = {}
    for name in names:
        for p in _expand(name, base):
            p = p.resolve()
            if p in seen:
                continue
            try:
                label = str(p.relative_to(base))
            except ValueError:
                label = str(p)
            seen[p] = CorpusFile(str(p), label, skip_reason(p))
    return list(seen.values())
