"""The test kit's own dependencies: the ``testing`` extra of ``campus-mcp``, and the error naming it.

``campus_mcp.testing`` is a pytest plugin that needs pytest, pytest-asyncio and jsonschema, which a
deployment does not: they are the extra, not the distribution's dependencies. Without them a plugin
author would see a bare ``No module named 'pytest_asyncio'`` from inside pytest's plugin loading.
"""

from __future__ import annotations

INSTALL_TESTING_EXTRA = 'pip install "campus-mcp[testing]"'


def missing_kit_dependency(error: ModuleNotFoundError) -> ModuleNotFoundError:
    """The import error to raise instead of ``error``: what is missing and the command that installs it."""
    return ModuleNotFoundError(
        f"The Campus MCP test kit (campus_mcp.testing) needs the package {error.name!r}, which is not "
        f"installed. Install the kit's test dependencies with: {INSTALL_TESTING_EXTRA}",
        name=error.name,
    )
