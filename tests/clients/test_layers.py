"""The house's layers (README, Architecture): every import looks down, never up or across.

Reads the code with ``ast`` (nothing is imported), so a violation is named with file and module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGES = ("uno_env", "agents", "arena", "training", "uno_web", "benchmarks", "lab", "tools")
# What each package may import from the project (itself always).
ALLOWED = {
    "uno_env": {"uno_env"},
    "agents": {"uno_env", "agents"},
    "arena": {"uno_env", "agents", "arena"},
    "training": {"uno_env", "agents", "arena", "training"},
    "uno_web": {"uno_env", "agents", "uno_web"},
    "benchmarks": {"uno_env", "agents", "arena", "training", "benchmarks"},
    # Not packaged: the experiments (beside the benchmarks they time with) and the maintainers' tools.
    "lab": {"uno_env", "agents", "arena", "training", "benchmarks", "lab"},
    "tools": {"uno_env", "agents", "arena", "training", "uno_web", "tools"},
}
# The scripts that may read the engine package itself (uno_env.engine) for what they measure.
ENGINE_READERS = ("benchmarks", "lab")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) of every import in a file, relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_of(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
            out.append((module, [alias.name for alias in node.names]))
    return out


def _files(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def _project_imports() -> list[tuple[Path, str, list[str]]]:
    return [(f, m, names) for pkg in PACKAGES for f in _files(pkg) for m, names in _imports(f)]


def test_each_package_imports_only_the_layers_below_it():
    bad = []
    for f, module, _ in _project_imports():
        top, owner = module.split(".")[0], f.relative_to(ROOT).parts[0]
        if top in ALLOWED and top not in ALLOWED[owner]:
            bad.append(f"{f.relative_to(ROOT)} imports {module}")
    assert not bad, "imports that go up the layers:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", ["agents", "arena", "training", "uno_web", "benchmarks", "lab", "tools"])
def test_no_package_above_the_library_reaches_into_the_engine_or_private_modules(package):
    bad = []
    for f in _files(package):
        for module, names in _imports(f):
            parts = module.split(".")
            if parts[0] != "uno_env":
                continue
            if package not in ENGINE_READERS and parts[1:2] == ["engine"]:
                bad.append(f"{f.relative_to(ROOT)} imports {module}")
            if any(p.startswith("_") for p in parts[1:]) or any(n.startswith("_") for n in names):
                bad.append(f"{f.relative_to(ROOT)} imports private {module} {names}")
            if module == "uno_env" and "engine" in names and package not in ENGINE_READERS:
                bad.append(f"{f.relative_to(ROOT)} imports uno_env.engine")
    assert not bad, "\n".join(bad)


def test_no_private_name_crosses_packages():
    bad = []
    for f, module, names in _project_imports():
        top, owner = module.split(".")[0], f.relative_to(ROOT).parts[0]
        if top in PACKAGES and top != owner:
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                bad.append(f"{f.relative_to(ROOT)} imports {private} from {module}")
    assert not bad, "\n".join(bad)


def test_scripts_do_not_import_each_other():
    for script in ("evaluate.py", "train.py"):
        modules = [m for m, _ in _imports(ROOT / script)]
        assert not [m for m in modules if m.split(".")[0] in ("train", "evaluate")], f"{script} imports a script"


def test_no_import_cycle_among_project_modules():
    modules = {_module_of(f): f for pkg in PACKAGES for f in _files(pkg)}
    graph = {m: set() for m in modules}
    for m, f in modules.items():
        for target, names in _imports(f):
            # ``from pkg import sub`` depends on the submodule; ``from pkg import name`` on pkg.
            for n in names or [None]:
                candidate = f"{target}.{n}" if n and f"{target}.{n}" in modules else target
                if candidate in modules and candidate != m:
                    graph[m].add(candidate)
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, stack: list[str]) -> bool:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle.extend(stack[stack.index(n) :] + [n] if n in stack else [m, n])
                return True
            if n not in state and visit(n, stack + [n]):
                return True
        state[m] = 2
        return False

    for m in sorted(graph):
        if m not in state and visit(m, [m]):
            break
    assert not cycle, "import cycle: " + " -> ".join(cycle)
