#!/usr/bin/env python
"""Steps per second of the default engine at B = 1 and 4096, 2 players: ``B=1:<wall>/<cpu> B=4096:<wall>/<cpu>``.

Run from the root of two checkouts in turn to compare the default path before and after a change.
"""

from __future__ import annotations

import time

import numpy as np

from uno_env import Engine, UnoRules, sample_legal


def main() -> None:
    out = []
    for B, n in ((1, 20000), (4096, 60)):
        e = Engine(B, 2, UnoRules(), seed=0, autoreset=True)
        rng = np.random.default_rng(0)
        for _ in range(200):  # compile and warm up outside the timing
            e.step(sample_legal(e.legal_mask, rng))
        t, c = time.perf_counter(), time.process_time()
        for _ in range(n):
            e.step(sample_legal(e.legal_mask, rng))
        out.append((B, n * B / (time.perf_counter() - t), n * B / (time.process_time() - c)))
    print(" ".join(f"B={B}:{wall:.0f}/{cpu:.0f}" for B, wall, cpu in out))


if __name__ == "__main__":
    main()
