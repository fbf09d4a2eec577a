"""Metadata for the dynamic (runtime) checks, kept in one place so docs can be generated from it."""

from __future__ import annotations

from dataclasses import dataclass

from triton_lint.finding import Category, Severity


@dataclass(frozen=True)
class DynamicCode:
    """One runtime check: identity, default severity and the text docs and reporters show."""

    code: str
    name: str
    category: Category
    severity: Severity
    summary: str
    rationale: str
    fix: str
    #: The option whose runs report it: stress cases run (`--dynamic`) or compiled per
    #: architecture without a GPU (`--compile-only`).
    mode: str = "--dynamic"


CODES: dict[str, DynamicCode] = {
    c.code: c
    for c in (
        DynamicCode(
            "TL901",
            "out-of-bounds-access",
            Category.MEMORY_SAFETY,
            Severity.ERROR,
            "An active lane of a load, store or atomic touched memory outside the tensor its "
            "pointer derives from.",
            "On a GPU this reads garbage, corrupts a neighbouring allocation or faults; the "
            "interpreter does no "
            "bounds checks, so tests pass while production runs are wrong.",
            "Mask the access with the tensor's extent (e.g. `mask=offs < n_elements`) and check "
            "the grid covers "
            "exactly the output.",
        ),
        DynamicCode(
            "TL902",
            "nan-or-inf",
            Category.NUMERICS,
            Severity.ERROR,
            "The kernel produced NaN/Inf where the inputs and the reference are finite.",
            "Overflow in exp, division by a zero sum, or a missing max-subtraction makes results "
            "non-finite only "
            "for some input ranges, which unit tests with small random values rarely hit.",
            "Stabilise the operation named in the finding (subtract the row max before exp, "
            "clamp, accumulate "
            "in float32).",
        ),
        DynamicCode(
            "TL903",
            "reference-mismatch",
            Category.CORRECTNESS,
            Severity.ERROR,
            "The kernel's output differs from the PyTorch reference beyond tolerance.",
            "A mismatch on edge sizes, dtypes or value patterns is a correctness bug even when "
            "the common case "
            "passes.",
            "Reproduce with the witness (dims, dtype, pattern, element index, program id) and fix "
            "the indexing "
            "or precision it points to.",
        ),
        DynamicCode(
            "TL904",
            "nondeterministic-output",
            Category.CORRECTNESS,
            Severity.WARNING,
            "Two runs with the same inputs (programs in a different order) gave bitwise different "
            "outputs.",
            "Races and order-dependent float atomics make results irreproducible across runs and "
            "GPUs.",
            "Avoid cross-program races; use a deterministic reduction instead of float atomics "
            "where "
            "reproducibility matters.",
        ),
        DynamicCode(
            "TL905",
            "masked-lane-read",
            Category.CORRECTNESS,
            Severity.ERROR,
            "The output depends on masked-off lanes of a load that has no `other=`.",
            "Masked-off lanes are undefined on a GPU; the interpreter fills them with 0, which "
            "hides the bug for "
            "sums but not for max or products.",
            "Pass the reduction's identity as `other=` (0 for sum, -inf for max, 1 for product).",
        ),
        DynamicCode(
            "TL906",
            "uninitialised-output",
            Category.CORRECTNESS,
            Severity.ERROR,
            "Output elements allocated with `torch.empty*` were never written by the kernel.",
            "Unwritten elements hold whatever the allocator left there: usually zeros in tests, "
            "garbage in "
            "production.",
            "Make the grid and store mask cover the whole output, or allocate with `torch.zeros` "
            "if the kernel "
            "writes sparsely on purpose.",
        ),
        DynamicCode(
            "TL907",
            "recompilation",
            Category.PERFORMANCE,
            Severity.WARNING,
            "The kernel compiled a new variant for (almost) every input size.",
            "A runtime value marked `tl.constexpr` recompiles per distinct value, costing seconds "
            "per call.",
            "Pass sizes as regular arguments; keep constexpr for block sizes and flags.",
        ),
        DynamicCode(
            "TL908",
            "case-failed",
            Category.CORRECTNESS,
            Severity.ERROR,
            "A stress case crashed, hung, or raised an error in the wrapper or the interpreter.",
            "A segfault, hang or exception on an edge size is a bug users will hit; it is "
            "isolated so the run "
            "goes on.",
            "Run the case alone (`triton_lint.stress.run(fn)`) with the reported "
            "dims/dtype/pattern.",
        ),
        DynamicCode(
            "TL909",
            "device-assert-failed",
            Category.CORRECTNESS,
            Severity.ERROR,
            "A `tl.device_assert` failed (the interpreter drops these unless debug is on).",
            "The kernel's own invariant is violated for this input.",
            "Fix the caller or the kernel so the asserted invariant holds, or validate inputs on "
            "the host.",
        ),
        DynamicCode(
            "TL910",
            "integer-overflow",
            Category.NUMERICS,
            Severity.ERROR,
            "A 32-bit integer add/sub/mul overflowed (usually offset arithmetic on a large "
            "tensor).",
            "Overflowing offsets wrap to negative addresses and read or write the wrong memory.",
            "Cast the program id or the stride to `tl.int64` before multiplying.",
        ),
        DynamicCode(
            "TL911",
            "autotune-config-mismatch",
            Category.CORRECTNESS,
            Severity.ERROR,
            "One `@triton.autotune` config produces a different output from the others.",
            "The autotuner picks configs by speed on the user's GPU, so a wrong config ships "
            "silently on some "
            "machines.",
            "Fix the kernel for that config's block sizes (usually a missing mask or a block-size "
            "assumption), or "
            "drop the config.",
        ),
        DynamicCode(
            "TL912",
            "ignores-input-strides",
            Category.CORRECTNESS,
            Severity.WARNING,
            "The wrapper accepts a non-contiguous input but the kernel ignores its strides: the "
            "output is wrong on that layout and right on a contiguous one.",
            "A transposed or sliced tensor reaches a kernel written for contiguous memory: "
            "callers who pass `x.T` or `x[:, ::2]` get wrong results (or out-of-bounds reads) "
            "without an error. It is a different hazard from a kernel that is wrong on the "
            "inputs it expects, so it has its own code instead of TL901/TL903.",
            "Pass the tensor's strides to the kernel and use them, call `.contiguous()` in the "
            "wrapper, or reject other layouts (`assert x.is_contiguous()`); a case that only "
            'means contiguous inputs says `layouts=("contiguous",)`.',
        ),
        DynamicCode(
            "TL913",
            "uninitialised-read",
            Category.CORRECTNESS,
            Severity.ERROR,
            "compute-sanitizer initcheck saw the kernel read device memory that nothing wrote.",
            "Reading uninitialised memory gives values that differ between runs and machines; "
            "results look right in tests where the allocator hands out zeroed pages.",
            "Initialise the buffer (`torch.zeros`) or make the kernel write every element before "
            "another program or a later launch reads it.",
        ),
        DynamicCode(
            "TL914",
            "slower-than-baselines",
            Category.PERFORMANCE,
            Severity.WARNING,
            "`--bench`: the Triton wrapper is slower than both the PyTorch reference and "
            "`torch.compile` of it at a benchmarked size.",
            "A custom kernel is maintenance cost that only speed pays for; one that loses to the "
            "eager reference and to the compiler at realistic sizes makes the model slower (poor "
            "block sizes, too few programs, a serial loop, uncoalesced accesses). The wrapper "
            "must be slower than the slower baseline by 10% and by 30 microseconds: a Triton "
            "launch costs tens of microseconds more than a PyTorch one, which at small sizes is "
            "launch overhead, not the kernel.",
            "Profile the kernel at the reported size (block sizes, `num_warps`, grid), autotune "
            "it, or call the PyTorch operation instead.",
        ),
        DynamicCode(
            "TL915",
            "shared-memory-overflow",
            Category.CORRECTNESS,
            Severity.ERROR,
            "A compiled variant (config x architecture) needs more shared "
            "memory per block than the architecture allows; info when another autotune config of "
            "the kernel fits there.",
            "Triton sizes shared memory at compile time (pipeline stages x tile sizes, "
            "reductions, layout conversions) and the launcher raises `OutOfResources` when it "
            "exceeds the device's per-block limit: 227 KB on H100/B200, 163 KB on A100, 99 KB "
            "on A10, L4, L40 and RTX parts. A config tuned on an H100 fails on the user's L4; "
            "when every autotune config of a size overflows there, the kernel cannot run at all. "
            "Triton's autotuner skips a config that raises OutOfResources, so an overflowing "
            "config beside one that fits costs tuning time only (info). "
            "The limits are the opt-in per-block maxima of the CUDA C++ Programming Guide "
            "(`triton_lint/compile/targets.py`).",
            "Lower `num_stages` or the block sizes of that config for the named architectures "
            "(e.g. prune configs by `torch.cuda.get_device_properties().shared_memory_per_block_"
            "optin` in `prune_configs_by`), or add a config that fits.",
            mode="--compile-only",
        ),
        DynamicCode(
            "TL916",
            "register-spills",
            Category.PERFORMANCE,
            Severity.WARNING,
            "A compiled variant spills registers to local memory (stack); "
            "info when another autotune config of the kernel does not spill.",
            "A thread has at most 255 registers; a tile that needs more is spilled to local "
            "memory, which lives in DRAM behind the L1 cache: every spill is a load or store "
            "per thread, and the kernel can run several times slower. The autotuner usually "
            "skips a spilling config when a clean one exists (hence info), but a kernel whose "
            "only config spills ships slow.",
            "Use more warps for the tile (`num_warps`), a smaller block, or split the "
            "computation (e.g. loop over the row in chunks) so fewer values stay live.",
            mode="--compile-only",
        ),
        DynamicCode(
            "TL917",
            "target-compile-failure",
            Category.CORRECTNESS,
            Severity.ERROR,
            "The compiler rejects the kernel for an architecture that other architectures accept.",
            "fp8 e4m3 (`tl.float8e4nv`) needs sm_89, warp-group MMA and TMA need sm_90, some "
            "instructions need newer parts: the kernel that compiles on the author's GPU raises "
            "a `CompilationError` on the user's older one, at the first launch.",
            "Guard the feature by the device's capability in the wrapper (another dtype or "
            "kernel for older parts), or document and check the minimum architecture.",
            mode="--compile-only",
        ),
    )
}


def lookup(code: str) -> DynamicCode:
    """Return the metadata for a dynamic code (KeyError if unknown)."""
    return CODES[code]
