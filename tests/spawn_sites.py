"""Finding every place in a source tree that starts a process, for tests/test_spawning.py.

A site is a reference (a call, or a name passed on to be called later) to one of the
standard library's ways to start a program (subprocess, os.exec*/spawn*/posix_spawn/
system/popen/fork, pty, asyncio's and an event loop's subprocesses, multiprocessing,
concurrent.futures' process pool) or to the MCP SDK's stdio launch, however it was
imported (`import subprocess as sp`, `from os import execv`, `lazy_module("subprocess")`,
`importlib.import_module("pty")`). Type annotations and generic aliases
(`subprocess.Popen[bytes]`) start nothing and are not sites.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests import source_trees

# module -> the names in it that start a process (a name ending in "*" is a prefix)
SPAWNING: dict[str, tuple[str, ...]] = {
    "subprocess": (
        "Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput",
    ),
    "os": ("system", "popen", "fork", "forkpty", "posix_spawn*", "exec*", "spawn*", "startfile"),
    "pty": ("spawn", "fork"),
    "asyncio": ("create_subprocess_exec", "create_subprocess_shell"),
    "asyncio.subprocess": ("create_subprocess_exec", "create_subprocess_shell"),
    "multiprocessing": ("Process", "Pool", "get_context", "Manager"),
    "concurrent.futures": ("ProcessPoolExecutor",),
    "mcp": ("stdio_client",),
    "mcp.client.stdio": ("stdio_client", "stdio_server"),
}  # fmt: skip
# An event loop's own ways, whatever the loop is called.
LOOP_METHODS = ("subprocess_exec", "subprocess_shell")
# Importing these by a name in a string is itself a site: what comes back can start anything.
DYNAMIC_IMPORTERS = ("import_module", "__import__", "lazy_module")


@dataclass(frozen=True, order=True)
class Site:
    path: str  # relative to the tree's parent: "caretz/tools/process.py"
    function: str  # the enclosing function's qualified name; "<module>" at the top
    what: str  # "subprocess.Popen", "os.execvpe", "import_module('pty')"
    line: int


def spawns(module: str, name: str, spawning: dict[str, list[str]] | None = None) -> bool:
    for wanted in (spawning or SPAWNING).get(module, ()):
        if name == wanted or (wanted.endswith("*") and name.startswith(wanted[:-1])):
            return True
    return False


def spawning_module(name: str) -> bool:
    if name == "<computed>":
        return True
    return any(name == module or name.startswith(module + ".") for module in SPAWNING)


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, spawning: dict[str, list[str]] | None = None):
        self.path = path
        self.spawning = spawning
        self.modules: dict[str, str] = {}  # local name -> module it stands for
        self.functions: dict[str, str] = {}  # local name -> "module.name" that spawns
        self.stack: list[str] = []
        self.sites: list[Site] = []

    # -- what names stand for ------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.modules[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.modules[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            local = alias.asname or alias.name
            if spawns(module, alias.name, self.spawning):
                self.functions[local] = f"{module}.{alias.name}"
            elif spawning_module(f"{module}.{alias.name}"):
                self.modules[local] = f"{module}.{alias.name}"

    def visit_Assign(self, node: ast.Assign) -> None:
        imported = _dynamic_import(node.value)
        if imported is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.modules[target.id] = imported
        aliased = self._spawning_name(node.value)
        if aliased is not None:  # `Process = ShellProcess`: another name for a way to start
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.functions[target.id] = aliased
            return
        self.generic_visit(node)

    def _spawning_name(self, node: ast.expr) -> str | None:
        """What a plain name or attribute stands for, when it is a way to start a process."""
        dotted = _dotted(node.value if isinstance(node, ast.Subscript) else node)
        if dotted is None:
            return None
        if dotted in self.functions:
            return self.functions[dotted]
        head, _, name = dotted.rpartition(".")
        module = self._module(head) if head else None
        if module is not None and spawns(module, name, self.spawning):
            return f"{module}.{name}"
        return None

    # -- where they are used -------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self.stack.append(node.name)
        for statement in node.body:  # the annotations are left out: they start nothing
            self.visit(statement)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if any(self._spawning_name(base) for base in node.bases):
            self.functions[node.name] = node.name  # a Popen of its own: made, it starts one
        self.stack.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.stack.pop()

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if _dotted(node.value) is None:  # `subprocess.Popen[bytes]` is a type
            self.visit(node.value)
        self.visit(node.slice)

    def visit_Call(self, node: ast.Call) -> None:
        imported = _dynamic_import(node)
        # lazy_module("x") is an import (its uses are the sites); the others hand back a
        # module that can start anything, there and then.
        declared = _callee(node) == "lazy_module" and imported != "<computed>"
        if imported is not None and spawning_module(imported) and not declared:
            self._site(f"{_callee(node)}({imported!r})", node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = _dotted(node)
        if dotted is not None:
            base, _, name = dotted.rpartition(".")
            module = self._module(base)
            if module is not None and spawns(module, name, self.spawning):
                self._site(f"{module}.{name}", node)
                return
        if node.attr in LOOP_METHODS:
            self._site(f"<loop>.{node.attr}", node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.functions and isinstance(node.ctx, ast.Load):
            self._site(self.functions[node.id], node)

    def _module(self, dotted: str) -> str | None:
        head, _, rest = dotted.partition(".")
        module = self.modules.get(head)
        if module is None:
            return None
        return f"{module}.{rest}" if rest else module

    def _site(self, what: str, node: ast.AST) -> None:
        function = ".".join(self.stack) or "<module>"
        self.sites.append(Site(self.path, function, what, getattr(node, "lineno", 0)))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _callee(node: ast.Call) -> str:
    return (_dotted(node.func) or "?").rpartition(".")[2]


def _dynamic_import(node: ast.expr) -> str | None:
    """The module `import_module("x")`, `__import__("x")` or `lazy_module("x")` names."""
    if not isinstance(node, ast.Call) or _callee(node) not in DYNAMIC_IMPORTERS:
        return None
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return "<computed>"  # a module named at run time: could be any


def find_sites(tree: Path) -> list[Site]:
    """Every process-starting site in the .py files under `tree`. A module's own names for
    a way to start a process (a Popen subclass, an alias, a name imported from elsewhere)
    are ways to start one for every module that imports them, so they are found first,
    until no module adds one."""
    parsed = {path: source_trees.parsed(path) for path in sorted(tree.rglob("*.py"))}
    spawning = {module: list(names) for module, names in SPAWNING.items()}
    grew = True
    while grew:
        grew = False
        for path, module_tree in parsed.items():
            finder = _run(path, tree, module_tree, spawning)
            module = _module_name(path, tree)
            known = spawning.setdefault(module, [])
            for name in finder.functions:
                if name not in known:
                    known.append(name)
                    grew = True
    found: list[Site] = []
    for path, module_tree in parsed.items():
        found += _run(path, tree, module_tree, spawning).sites
    return sorted(found)


def _module_name(path: Path, tree: Path) -> str:
    return ".".join(path.relative_to(tree.parent).with_suffix("").parts)


def _run(
    path: Path, tree: Path, module_tree: ast.Module, spawning: dict[str, list[str]]
) -> _Finder:
    finder = _Finder(path.relative_to(tree.parent).as_posix(), spawning)
    finder.visit(module_tree)
    return finder
