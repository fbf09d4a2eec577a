"""Cost of one checked launch of a vector add at a stress size and at 2**24 elements (run by
bench/gpu.py).

`plain`: the wrapper alone; `redzones`: the same call through the GPU backend (inputs placed
between guards, guards filled and checked, outputs copied back). Run under compute-sanitizer,
`plain` gives memcheck's cost per launch. Prints one JSON object: milliseconds per mode and size.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TRITON_INTERPRET", "0")
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fixtures" / "dynamic"))

import torch  # noqa: E402
import vector_add  # noqa: E402

from triton_lint.dynamic.backend import RunMode  # noqa: E402
from triton_lint.dynamic.cuda_backend import CudaBackend  # noqa: E402

SIZES = (1030, 2**24)
CALLS = 20


def per_call_ms(fn) -> float:
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3 / CALLS


def main() -> None:
    modes = sys.argv[1:] or ["plain", "redzones"]
    backend = CudaBackend(redzones=True) if "redzones" in modes else None
    case = vector_add.add_clean.__stress_case__
    out: dict[str, dict[int, float]] = {mode: {} for mode in modes}
    for n in SIZES:
        x, y = torch.randn(n, device="cpu"), torch.randn(n, device="cpu")
        if "plain" in modes:
            dx, dy = x.cuda(), y.cuda()
            out["plain"][n] = per_call_ms(lambda dx=dx, dy=dy: vector_add.add_clean(dx, dy))
        if backend is not None:
            out["redzones"][n] = per_call_ms(lambda x=x, y=y: backend.call(case, [x, y], RunMode()))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
