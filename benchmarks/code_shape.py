"""The shape of the caretz package: module sizes, function lengths, import cycles.

Imports are read with `ast`, including imports inside functions and the lazy ones a module
declares at its top (`x = lazy_module("caretz.x")`, caretz/lazy.py); imports under
`if TYPE_CHECKING:` are left out, since they never run.

    python benchmarks/code_shape.py            # figures
    python benchmarks/code_shape.py --json     # the same as JSON
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "caretz"


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    imports: set[str] = field(default_factory=set)
    function_lengths: list[int] = field(default_factory=list)
    # What importing the module imports at once: its top-level imports, neither lazy nor
    # inside a function; caretz modules by name, other packages by their top-level name.
    eager: set[str] = field(default_factory=set)
    eager_outside: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class FunctionImport:
    """An import statement inside a function, and the comment that says why it is there."""

    path: Path
    line: int
    source: str
    comment: str


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_lazy_declaration(node: ast.AST) -> str | None:
    """The module named by `lazy_module("name")`, else None."""
    if not (isinstance(node, ast.Call) and node.args and not node.keywords):
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    first = node.args[0]
    if called == "lazy_module" and isinstance(first, ast.Constant):
        return first.value if isinstance(first.value, str) else None
    return None


@dataclass
class _Found:
    imports: set[str] = field(default_factory=set)
    eager: set[str] = field(default_factory=set)
    eager_outside: set[str] = field(default_factory=set)


def _imports(tree: ast.AST, this: str, known: set[str], type_checking: bool = False) -> _Found:
    found = _Found()
    package = this if this in _packages(known) else this.rpartition(".")[0]

    def add(name: str, eager: bool) -> None:
        found.imports.add(name)
        if eager:
            found.eager.add(name)

    def visit(node: ast.AST, eager: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            for child in node.orelse:
                visit(child, eager)
            return
        lazy = _is_lazy_declaration(node)
        if lazy is not None:
            found.imports.add(_closest(lazy, known))
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_closest(alias.name, known), eager)
                if eager and not alias.name.startswith("caretz"):
                    found.eager_outside.add(alias.name.partition(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            elif eager and not base.startswith("caretz"):
                found.eager_outside.add(base.partition(".")[0])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                add(candidate if candidate in known else _closest(base, known), eager)
        inside = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, eager and not inside)

    visit(tree, True)
    for names in (found.imports, found.eager):
        names.discard("")
        names.discard(this)
        names.intersection_update(known)
    found.eager_outside.discard("__future__")
    return found


def _packages(known: set[str]) -> set[str]:
    return {name.rpartition(".")[0] for name in known if "." in name}


def _closest(name: str, known: set[str]) -> str:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def _function_lengths(tree: ast.AST) -> list[int]:
    return [
        node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno
    ]


def read_package(root: Path = PACKAGE, type_checking: bool = False) -> dict[str, Module]:
    paths = sorted(root.rglob("*.py"))
    known = {module_name(path, root) for path in paths}
    modules = {}
    for path in paths:
        name = module_name(path, root)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        found = _imports(tree, name, known, type_checking)
        modules[name] = Module(
            name,
            path,
            len(text.splitlines()),
            found.imports,
            _function_lengths(tree),
            found.eager,
            found.eager_outside,
        )
    return modules


def loaded_with(name: str, modules: dict[str, Module]) -> set[str]:
    """Every module importing `name` imports at once: its packages', its own eager imports',
    theirs, and so on; other packages by their top-level name."""
    seen: set[str] = set()
    outside: set[str] = set()
    waiting = [name]
    while waiting:
        current = waiting.pop()
        if current in seen or current not in modules:
            continue
        seen.add(current)
        outside |= modules[current].eager_outside
        parent = current.rpartition(".")[0]
        waiting += [*modules[current].eager, *([parent] if parent else [])]
    return seen | outside


def function_imports(root: Path = PACKAGE) -> list[FunctionImport]:
    """Every import statement inside a function, with the comment on its line or, failing
    that, the comment line just above it."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in _inside_functions(ast.parse("\n".join(lines))):
            found.append(
                FunctionImport(path, node.lineno, ast.unparse(node), _comment(lines, node))
            )
    return found


def lazy_declarations(root: Path = PACKAGE) -> list[FunctionImport]:
    """Every `lazy_module("name")` call, `source` being the name, with its comment (on its
    line, or the comment line above the run of declarations it is part of)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            name = _is_lazy_declaration(node)
            if name is not None and isinstance(node, ast.expr):
                found.append(FunctionImport(path, node.lineno, name, _group_comment(lines, node)))
    return found


def _group_comment(lines: list[str], node: ast.expr) -> str:
    if "#" in lines[node.lineno - 1]:
        return lines[node.lineno - 1].split("#", 1)[1].strip()
    number = node.lineno - 1
    while number > 0 and "lazy_module(" in lines[number - 1] and "#" not in lines[number - 1]:
        number -= 1
    above = lines[number - 1].strip() if number > 0 else ""
    return above[1:].strip() if above.startswith("#") else ""


def sources_of(name: str, root: Path = PACKAGE) -> set[tuple[str, str]]:
    """(importer, module) for each `from module import name` in the package, at the top or
    inside a function."""
    known = {module_name(path, root) for path in root.rglob("*.py")}
    found = set()
    for path in sorted(root.rglob("*.py")):
        this = module_name(path, root)
        package = this if this in _packages(known) else this.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                found.add((this, base))
    return found


def _inside_functions(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found = []

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            visit(child, inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(tree, False)
    return found


def _comment(lines: list[str], node: ast.stmt) -> str:
    line = lines[node.lineno - 1]
    if "#" in line:
        return line.split("#", 1)[1].strip()
    above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
    return above[1:].strip() if above.startswith("#") else ""


def cycles(modules: dict[str, Module]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(10_000)

    def connect(name: str) -> None:
        nonlocal counter
        index[name] = low[name] = counter
        counter += 1
        stack.append(name)
        on_stack.add(name)
        for target in modules[name].imports:
            if target not in index:
                connect(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(modules):
        if name not in index:
            connect(name)
    return found


def package_of(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else name


def package_graph(modules: dict[str, Module]) -> dict[str, Module]:
    """The same graph one level up: caretz.agent, caretz.guard, … and top-level modules."""
    packages: dict[str, Module] = {}
    for module in modules.values():
        name = package_of(module.name)
        merged = packages.setdefault(name, Module(name, module.path, 0))
        merged.lines += module.lines
        merged.imports.update(package_of(target) for target in module.imports)
    for merged in packages.values():
        merged.imports.discard(merged.name)
    return packages


def figures(modules: dict[str, Module]) -> dict[str, object]:
    lengths = [n for module in modules.values() for n in module.function_lengths]
    largest = sorted(modules.values(), key=lambda m: m.lines, reverse=True)[:8]
    return {
        "modules": len(modules),
        "lines": sum(m.lines for m in modules.values()),
        "largest": [(m.name, m.lines) for m in largest],
        "functions": len(lengths),
        "function_length_median": statistics.median(lengths) if lengths else 0,
        "function_length_max": max(lengths, default=0),
        "cycles": cycles(modules),
        "package_cycles": cycles(package_graph(modules)),
        "package_lines": {
            name: module.lines for name, module in sorted(package_graph(modules).items())
        },
        "function_imports": _count_by_package(item.path for item in function_imports()),
        "lazy_declarations": len(lazy_declarations()),
    }


def _count_by_package(paths: Iterable[Path]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in paths:
        name = package_of(module_name(path))
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--type-checking", action="store_true", help="count TYPE_CHECKING imports too"
    )
    args = parser.parse_args()
    data = figures(read_package(type_checking=args.type_checking))
    if args.json:
        print(json.dumps(data, indent=2))
        return
    print(f"modules: {data['modules']}, lines: {data['lines']}")
    print("largest modules:")
    for name, lines in data["largest"]:
        print(f"  {lines:5d}  {name}")
    print(
        f"functions: {data['functions']}, length median {data['function_length_median']}, "
        f"max {data['function_length_max']}"
    )
    print(f"import cycles: {len(data['cycles'])}")
    for component in data["cycles"]:
        print("  " + " ↔ ".join(component))
    print(f"package cycles: {len(data['package_cycles'])}")
    for component in data["package_cycles"]:
        print("  " + " ↔ ".join(component))
    inside = data["function_imports"]
    print(f"imports inside functions: {sum(inside.values())}; lazy_module declarations: ", end="")
    print(data["lazy_declarations"])
    for name, count in inside.items():
        print(f"  {count:4d}  {name}")


if __name__ == "__main__":
    main()
