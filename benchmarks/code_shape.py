"""The shape of the caretz package: module sizes, function lengths, import cycles.

Imports are read with `ast`, including imports inside functions; imports under
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


def _imports(tree: ast.AST, this: str, known: set[str], type_checking: bool = False) -> set[str]:
    found: set[str] = set()
    package = this if this in _packages(known) else this.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(_closest(alias.name, known))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in known else _closest(base, known))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard("")
    found.discard(this)
    return {name for name in found if name in known}


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
        modules[name] = Module(
            name,
            path,
            len(text.splitlines()),
            _imports(tree, name, known, type_checking),
            _function_lengths(tree),
        )
    return modules


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
    }


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


if __name__ == "__main__":
    main()
