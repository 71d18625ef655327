"""The layering rules, read from the source: no import cycle between coca_eval's modules, click only in
the command layer (coca_eval/cli) and nothing below that layer importing it.

Imports are read with :mod:`ast`, so a function-level (lazy) import counts like a module-level one: a
cycle closed inside a function still ties two modules together. Imports under ``if TYPE_CHECKING:``
run only for type checkers: they do not count as a layer's dependency, but they do close a cycle (a
type checker resolves both modules together, and each then depends on the other's names).

No task family imports another: the families (the packages whose spec modules the task registry
loads) stand on the base packages, and one that reuses another's tasks looks them up in the registry.
The import of other harnesses' outputs (``coca_eval.imported``) is a layer above the families: it turns
those outputs into the families' records, so it may import them, and no family imports it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "coca_eval"
# The zoo is a plug-in package (its own command, its own registrations), as a third-party plug-in
# would be, so the core's rules on click and cycles do not bind its inside.
PLUGIN = "coca_eval.zoo"
ENTRY_POINT = "coca_eval.__main__"  # `python -m coca_eval` sits above the command layer
IMPORT_LAYER = "coca_eval.imported"  # above the families (see the module doc)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    return {module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_nodes(tree: ast.AST, type_only: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those only a type checker runs (with them when
    ``type_only``)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if not type_only and isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imported_names(module: str, path: Path, type_only: bool = False) -> Iterator[tuple[str, int]]:
    """``(dotted name, line)`` of everything ``module`` imports; relative imports made absolute, and
    ``from pkg import name`` given as ``pkg.name`` (a submodule or an attribute of ``pkg``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in import_nodes(ast.parse(path.read_text(encoding="utf-8")), type_only):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        for alias in node.names:
            yield f"{base}.{alias.name}", node.lineno


def import_graph(
    root: Path = ROOT, package: str = PACKAGE, type_only: bool = False
) -> dict[str, dict[str, int]]:
    """Module -> {module it imports: line of the first such import}, within ``package`` only (with the
    imports only a type checker runs when ``type_only``)."""
    modules = source_modules(root, package)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        for imported, line in imported_names(name, path, type_only):
            if imported == package or imported.startswith(package + "."):
                target = resolve(imported)
                if target is not None and target != name:
                    graph[name].setdefault(target, line)
    return graph


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None when the graph has none (depth-first search)."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once fully explored
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, {})):
            if state.get(target) == "open":
                return path[path.index(target) :] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    steps = [f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:], strict=False)]
    return " -> ".join([*steps, cycle[-1]])


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_import_cycle_between_modules():
    graph = {
        name: {t: line for t, line in targets.items() if not _inside(t, PLUGIN)}
        for name, targets in import_graph(type_only=True).items()
        if not _inside(name, PLUGIN)
    }
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + describe(cycle, graph)


def families() -> list[str]:
    """The task families: the package of each spec module the task registry loads (``ppl`` for
    ``coca_eval.ppl.spec``), a family's sub-packages (``ppl.longppl``) inside its own."""
    from coca_eval.taskspec import TASKS

    packages = {module.rpartition(".")[0] for module in TASKS.builtins} - {IMPORT_LAYER}
    return sorted(p for p in packages if not any(_inside(p, other) for other in packages - {p}))


def family_imports(graph: dict[str, dict[str, int]], names: list[str]) -> list[str]:
    """``a -> b (line)`` for every import of one family's module from another family."""

    def family(module: str) -> str | None:
        return next((f for f in names if _inside(module, f)), None)

    return [
        f"{name} -> {target} (line {line})"
        for name, targets in graph.items()
        if family(name) is not None
        for target, line in targets.items()
        if family(target) not in (None, family(name))
    ]


def test_no_family_imports_another():
    names = families()
    assert {"coca_eval.ruler", "coca_eval.helmet", "coca_eval.babilong", "coca_eval.passkey"} <= set(names)
    offenders = family_imports(import_graph(), names)
    assert not offenders, f"a family imports another family: {offenders}"


def test_no_family_imports_the_layers_above_it():
    offenders = [
        f"{name} -> {target} (line {line})"
        for name, targets in import_graph().items()
        if any(_inside(name, family) for family in families())
        for target, line in targets.items()
        if _inside(target, IMPORT_LAYER) or _inside(target, "coca_eval.cli")
    ]
    assert not offenders, f"a family imports the import layer or the CLI: {offenders}"


def test_a_family_importing_another_is_found(tmp_path):
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/base.py", "")
    _write(tmp_path, "pkg/one/__init__.py", "")
    _write(tmp_path, "pkg/one/task.py", "from pkg import base\ndef f():\n    from pkg.two.tasks import T\n")
    _write(tmp_path, "pkg/two/__init__.py", "")
    _write(tmp_path, "pkg/two/tasks.py", "from pkg.base import X\n")
    graph = import_graph(tmp_path, "pkg")
    assert family_imports(graph, ["pkg.one", "pkg.two"]) == ["pkg.one.task -> pkg.two.tasks (line 3)"]


def test_click_is_imported_only_by_the_command_layer():
    offenders = [
        f"{name}:{line}"
        for name, path in source_modules().items()
        if not _inside(name, "coca_eval.cli") and not _inside(name, PLUGIN)
        for imported, line in imported_names(name, path)
        if _inside(imported, "click")
    ]
    assert not offenders, f"click imported outside coca_eval/cli: {offenders}"


def test_nothing_below_the_command_layer_imports_it():
    offenders = [
        f"{name} -> {target} (line {line})"
        for name, targets in import_graph().items()
        if not _inside(name, "coca_eval.cli") and name != ENTRY_POINT and not _inside(name, PLUGIN)
        for target, line in targets.items()
        if _inside(target, "coca_eval.cli")
    ]
    assert not offenders, f"modules below coca_eval/cli import it: {offenders}"


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_walker_sees_lazy_and_relative_imports_but_not_type_only_ones(tmp_path):
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/low.py", "def late():\n    from pkg.sub import high\n")
    _write(tmp_path, "pkg/sub/__init__.py", "")
    _write(tmp_path, "pkg/sub/high.py", "from .. import low\n")
    _write(
        tmp_path,
        "pkg/typed.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.untyped import X\n",
    )
    _write(tmp_path, "pkg/untyped.py", "import pkg.typed\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.low"] == {"pkg.sub.high": 2}
    assert graph["pkg.sub.high"] == {"pkg.low": 1}
    assert graph["pkg.typed"] == {}
    assert import_graph(tmp_path, "pkg", type_only=True)["pkg.typed"] == {"pkg.untyped": 3}
    assert find_cycle(graph) == ["pkg.low", "pkg.sub.high", "pkg.low"]
    del graph["pkg.sub.high"]["pkg.low"]
    assert find_cycle(graph) is None
