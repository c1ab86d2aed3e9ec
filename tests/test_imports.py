"""conform's modules import each other without a cycle.

The graph is read from the source, not from an import: each module's `import` statements, parsed,
those inside its functions too (an import put off into a function still needs the other module
whenever that function runs; putting it off hides a cycle, it does not cut it). An import under
`if TYPE_CHECKING:` never runs and is left out. Importing `a.b.c` runs the packages `a` and `a.b`
first, so it counts as importing them too, except a module's own packages, which are running
already when it is imported. What a registry imports by name (importlib, as reference/__init__.py
imports an op's module when the op is asked for) is no statement and not in the graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

import conformance

PACKAGE = Path(conformance.__file__).parent
# Cycles being cut elsewhere, each by its modules (a cycle through them and their packages alone).
ALLOWED_CYCLES = (
    # compare imports reference.base (Expected, Reading), which imports compare's arrays_identical in
    # its functions: the lead is moving that comparison out of compare.py; remove this entry then.
    frozenset({"conformance.compare", "conformance.reference.base"}),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def packages_of(module: str) -> set[str]:
    """The packages a module sits in ('a.b.c' -> {'a', 'a.b'})."""
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING")


def import_statements(tree: ast.AST):
    """Every import statement of a module, wherever it is, but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif not _is_type_checking(node):
            yield from import_statements(node)


def imported(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules an import statement names: `from x import y` names x, and x.y where y is a module."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    base = node.module or ""
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    return {base} | {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES}


def import_graph() -> dict[str, set[str]]:
    """Each conformance module -> the conformance modules its import statements run."""
    graph = {}
    for module, path in MODULES.items():
        named = {name for node in import_statements(ast.parse(path.read_text(), str(path))) for name in imported(module, node)}
        runs = {found for name in named for found in {name} | packages_of(name)}
        graph[module] = {found for found in runs if found in MODULES and found != module and found not in packages_of(module)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules, as a path that ends where it starts."""
    found = []
    for group in _strongly_connected(graph):
        if len(group) > 1:
            found.append(_cycle_within(graph, group))
    return found


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's groups, iteratively (no recursion limit), in a fixed order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                groups.append(group)
    return groups


def _cycle_within(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest cycle through the group's first module (by name), found breadth first."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for step in sorted(graph[node] & group):
                if step == start:
                    return paths[node] + [start]
                if step not in paths:
                    paths[step] = paths[node] + [step]
                    following.append(step)
        frontier = following
    raise AssertionError(f"no cycle in {sorted(group)}")  # a strongly connected group has one


def is_allowed(cycle: list[str]) -> bool:
    """Whether a cycle runs through one allowed cycle's modules and the packages they sit in alone."""
    return any(set(cycle) <= allowed | {p for m in allowed for p in packages_of(m)} for allowed in ALLOWED_CYCLES)


def test_no_module_imports_itself_through_others():
    found = [cycle for cycle in cycles(import_graph()) if not is_allowed(cycle)]
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def test_the_graph_sees_imports_put_off_into_functions_and_the_packages_an_import_runs():
    # A check that the graph reads what it must; were it blind to either, the test above could not fail.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    source = "import os\ndef later():\n    from .compare import judge\nif TYPE_CHECKING:\n    from .cli import main\n"
    statements = list(import_statements(ast.parse(source)))
    assert [imported("conformance.execute", node) for node in statements] == [{"os"}, {"conformance.compare"}]
    assert "conformance.reference" in import_graph()["conformance.compare"]  # compare imports reference.base


def test_asking_for_one_op_imports_its_module_alone(tmp_path):
    # The registry imports an op's module when the op is asked for; importing the package, or one
    # op, must not import every op (the cost every command paid, and that grew with each op).
    import subprocess
    import sys

    probe = ("import sys; import conformance.reference as r; r.for_op('Slice'); "
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('conformance.reference.'))))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    assert "conformance.reference.slice" in loaded
    assert not {"conformance.reference.cast", "conformance.reference.arithmetic", "conformance.reference.clip"} & set(loaded), loaded
