"""The product's imports (issue 36): no module imports another module's private (underscored) name,
and the import contracts of pyproject.toml (the host's floors, no circle, the catalog's surface)
hold. A private name is its module's own: what another module needs is made public first.

Tests, benchmarks and scripts are left out: a test may reach into what it tests.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = "campus_"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _product() -> list[tuple[Path, str]]:
    """Every module of the host and the families, with its dotted name."""
    packages = [
        ROOT / "host" / "campus_mcp",
        *sorted(ROOT.glob("plugins/*/campus_*")),
        *ROOT.glob("examples/*/campus_*"),
    ]
    found = []
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            if "migrations" in path.relative_to(package).parts:
                continue
            parts = list(path.relative_to(package.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append((path, ".".join(parts)))
    return found


def private_imports() -> list[str]:
    found = []
    for path, module in _product():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if not node.module.startswith(FIRST_PARTY) or node.module == module:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{where} imports the private module {node.module}")
            found.extend(
                f"{where} imports {alias.name} from {node.module}" for alias in node.names if _private(alias.name)
            )
    return found


def test_no_module_imports_another_modules_private_name() -> None:
    found = private_imports()
    assert not found, "make the name public in its module (or move it where both need it): " + "; ".join(found)


def test_the_import_contracts_hold() -> None:
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports is not None, "import-linter is in the dev extra: make bootstrap"
    result = subprocess.run(
        [lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert "0 broken" in result.stdout
