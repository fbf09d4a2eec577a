"""`--compile-only`: compile every launch of the stress cases for several NVIDIA architectures
on the CPU (no GPU, no driver) and report shared memory, register spills and compile failures
per autotune config and architecture (TL915, TL916, TL917).

The parent side (`run`, `findings`, `targets`) never imports torch or triton; the compiling
happens in `python -m triton_lint.compile.child`, one child per file and architecture.
"""
