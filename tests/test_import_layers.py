"""gradkit's modules import one way (docs/architecture.md, "How the layers import").

Read from the source with ``ast``: the module-level imports between gradkit's modules form no
circle, and no function imports a module, except the few listed below with their reason.
"""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gradkit"

# (module, imported module) -> why that import stays inside a function
FUNCTION_LEVEL_IMPORTS = {
    ("gradkit.backend", "cupy"): "optional dependency (GPU arrays)",
}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, pathlib.Path]:
    """Every gradkit module (the CLI, a symlinked folder of its own, left out)."""
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "cli" not in p.relative_to(PACKAGE).parts}


def _targets(node: ast.Import | ast.ImportFrom, known) -> list[str]:
    """The gradkit modules an import statement loads: ``from a import b`` is a.b if that is
    a module, else a (a package's __init__ when a is a package)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in known]
    if node.module is None or node.module not in known:
        return []
    return [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known
            else node.module for alias in node.names]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module):
    """(import node, inside a function?) for every import statement of a module."""
    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            yield from walk(child, nested)
    yield from walk(tree, False)


def import_graph() -> dict[str, set[str]]:
    """Module -> the gradkit modules it imports at module level."""
    known = modules()
    graph = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = {target for node, in_function in _imports(tree) if not in_function
                       for target in _targets(node, known) if target != name}
    return graph


def function_level_imports() -> list[tuple[str, str, int]]:
    """(module, imported module, line) for each import inside a function."""
    found = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text(), str(path))
        for node, in_function in _imports(tree):
            if in_function:
                target = node.names[0].name if isinstance(node, ast.Import) else node.module
                found.append((name, target, node.lineno))
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as [a, b, ..., a], or None."""
    state = dict.fromkeys(graph, 0)  # 0 unseen, 1 on the stack, 2 done
    for start in sorted(graph):
        if state[start]:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif state.get(child) == 0:
                state[child] = 1
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
    return None


def layer_order(graph: dict[str, set[str]]) -> list[str]:
    """The modules, each after everything it imports."""
    done, order = set(), []

    def visit(name):
        if name not in done:
            done.add(name)
            for child in sorted(graph[name]):
                visit(child)
            order.append(name)
    for name in sorted(graph):
        visit(name)
    return order


def test_module_level_imports_form_no_circle():
    assert find_cycle(import_graph()) is None


def test_find_cycle_reports_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_tensor_core_and_the_op_mechanism_import_no_op_and_no_api():
    graph = import_graph()
    assert not {m for m in graph["gradkit._tensor"] if m.startswith("gradkit.ops")}
    mechanism = ("gradkit.ops._op", "gradkit.ops._dispatch", "gradkit.ops._dispatch_general")
    assert "gradkit._tensor" in graph["gradkit.ops._dispatch"]
    for module in mechanism:
        assert not graph[module] & {"gradkit.ops", "gradkit.autograd", "gradkit.autograd.api",
                                    "gradkit.autograd.engine", "gradkit.autograd.forward_ad"}


def test_no_function_level_imports_but_the_listed_ones():
    found = {(module, target) for module, target, _ in function_level_imports()}
    assert sorted(found - set(FUNCTION_LEVEL_IMPORTS)) == []
    assert sorted(set(FUNCTION_LEVEL_IMPORTS) - found) == []  # the list stays up to date


def test_each_module_imports_in_layer_order_in_a_fresh_interpreter():
    """Importing every module, lowest layer first, loads each one without error."""
    order = [m for m in layer_order(import_graph()) if m != "gradkit.__main__"]
    program = f"import importlib\nfor name in {order!r}:\n    importlib.import_module(name)\n"
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
