"""The package's import graph: no cycles, counting imports inside functions too (a dependency
all the same), and no library module importing the command line."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "judgekit"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """judgekit modules that ``name`` imports anywhere (not under ``if TYPE_CHECKING``)."""
    skipped = {id(n) for top in ast.walk(tree) if _type_checking(top) for n in ast.walk(top)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in known:  # ``import a.b.c`` depends on a.b.c's module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _stamps() -> tuple[tuple[Path, int, int], ...]:
    """Every module file of the package with its modification time and size."""
    return tuple(
        (p, (st := p.stat()).st_mtime_ns, st.st_size) for p in sorted(PACKAGE.rglob("*.py"))
    )


@cache
def _parse(path: Path, mtime_ns: int, size: int) -> ast.Module:
    """The syntax tree of ``path`` as it is now (a changed file is parsed again)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def _graph(stamps: tuple[tuple[Path, int, int], ...]) -> dict[str, frozenset[str]]:
    files = {_module_name(stamp[0]): stamp for stamp in stamps}
    known = set(files)
    return {
        name: frozenset(_imports(_parse(*stamp), name, stamp[0].name == "__init__.py", known))
        for name, stamp in files.items()
    }


def import_graph() -> dict[str, set[str]]:
    """judgekit module -> the judgekit modules it imports; built once per state of the files
    (each test gets its own copy)."""
    return {name: set(targets) for name, targets in _graph(_stamps()).items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    assert "judgekit.engine" in graph["judgekit.cli.run"]  # imported inside execute()
    assert "judgekit.config" in graph["judgekit.engine"]


def test_no_import_cycles_in_the_package() -> None:
    assert _cycles(import_graph()) == []


def test_library_modules_never_import_the_command_line() -> None:
    graph = import_graph()
    offenders = {
        name: sorted(t for t in targets if t.startswith("judgekit.cli"))
        for name, targets in graph.items()
        if not name.startswith("judgekit.cli") and name != "judgekit.__main__"
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_metrics_never_import_reports() -> None:
    graph = import_graph()
    metrics = {n: t for n, t in graph.items() if n.startswith("judgekit.metrics")}
    assert {n: sorted(t) for n, t in metrics.items() if any("report" in x for x in t)} == {}


def _judgekit_imports(folder: str) -> dict[str, set[str]]:
    return {n: t for n, t in import_graph().items() if n.startswith(f"judgekit.{folder}")}


def test_data_imports_no_other_judgekit_folder() -> None:
    """data/ is the bottom layer: readers and writers of files, used by every other folder."""
    allowed = ("judgekit.data", "judgekit.errors", "judgekit.bundled")
    offenders = {
        name: sorted(t for t in targets if not t.startswith(allowed))
        for name, targets in _judgekit_imports("data").items()
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_calibration_never_imports_reports_or_plotting() -> None:
    calibration = _judgekit_imports("calibration")
    bad = ("judgekit.report", "judgekit.plotting", "judgekit.view")
    offenders = {n: sorted(t for t in ts if t.startswith(bad)) for n, ts in calibration.items()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_module_imports_another_modules_private_name() -> None:
    offenders = []
    for path, *stamp in _stamps():
        for node in ast.walk(_parse(path, *stamp)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("judgekit"):
                private = [
                    a.name for a in node.names if a.name.startswith("_") and a.name[:2] != "__"
                ]
                if private:
                    offenders.append(f"{path.relative_to(PACKAGE.parent)}: {private}")
    assert offenders == []


def test_tables_figures_and_file_hashes_are_written_only_by_data_and_report() -> None:
    """``to_csv(``, ``savefig(`` and file hashing belong to data/ (the atomic writers, the one
    file hash), report/ and signature.py; everywhere else calls them."""
    allowed = ("data", "report", "signature.py")
    spellings = (
        "to_csv(",
        "savefig(",
        ".read_bytes()).hexdigest(",
        "hashlib.file_digest(",
        ".write_text(",
        ".write_bytes(",
        '.open("w"',
        'open(path, "w"',
    )
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in allowed:
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{rel}: {s}" for s in spellings if s in text]
    assert offenders == []
