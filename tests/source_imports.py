"""Reading the project's imports from its source (with ast), for the tests of its layout."""

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    """Return the absolute name of every module a source file imports, wherever in the file."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            found.add(module)
            # `from package import module` imports the module too.
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def project_sources() -> list[Path]:
    """List the project's Python files, less the tests and hidden directories (.venv, .git)."""
    sources = []
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [
            name
            for name in subdirectories
            if not name.startswith(".") and name not in ("tests", "__pycache__", "node_modules")
        ]
        sources += [Path(directory, name) for name in files if name.endswith(".py")]
    return sorted(sources)


def modules_in_or_under_a_circle(package: Path) -> list[str]:
    """Return the modules of a package (its own files) that an import circle keeps from loading.

    Modules that import no module left are taken away until none remains; what is left is in a
    circle or imports one. An empty list: the package's modules import one way only.
    """
    name = ".".join(package.relative_to(ROOT).parts)
    prefix = f"{name}."
    remaining = {
        path.stem: {
            imported.removeprefix(prefix).split(".")[0]
            for imported in imported_modules(path)
            if imported.startswith(prefix)
        }
        - {path.stem}
        for path in package.glob("*.py")
        if path.stem != "__init__"
    }
    while True:
        free = [module for module, imports in remaining.items() if not imports & remaining.keys()]
        if not free:
            return sorted(remaining)
        for module in free:
            del remaining[module]
