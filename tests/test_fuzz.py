"""A fast subset of bench/fuzz.py: generated and mutated kernel files never make the linter
or a reporter raise (the long run is `python bench/fuzz.py --seconds N`)."""

from __future__ import annotations

import importlib.util
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO

hypothesmith = pytest.importorskip("hypothesmith")

_spec = importlib.util.spec_from_file_location("fuzz", REPO / "bench" / "fuzz.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

FIXTURES = [p.read_text(encoding="utf-8") for p in sorted(REPO.glob("fixtures/TL*/**/*.py"))]
FAST = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(
    st.sampled_from(FIXTURES),
    st.lists(st.sampled_from(sorted(fuzz.MUTATIONS)), min_size=1, max_size=3),
    st.randoms(use_true_random=False),
)
def test_mutated_kernels_never_crash_the_pipeline(text, kinds, rng):
    for kind in kinds:
        text = fuzz.MUTATIONS[kind](text, rng)
    assert fuzz.check("fuzz.py", text) is None


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it draws
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_python_made_kernels_never_crashes_the_pipeline(source):
    assert fuzz.check("fuzz.py", fuzz.as_kernels(source)) is None


def test_every_mutation_changes_a_kernel_file():
    text = (REPO / "fixtures" / "TL101" / "bad.py").read_text(encoding="utf-8")
    for kind, mutate in fuzz.MUTATIONS.items():
        rng = random.Random(1)
        assert any(mutate(text, rng) != text for _ in range(5)), kind


def test_check_reports_what_escapes(monkeypatch):
    def broken(result, statistics):
        raise KeyError("no such key")

    monkeypatch.setitem(fuzz.REPORTERS, "text", broken)
    text = (REPO / "fixtures" / "TL101" / "bad.py").read_text(encoding="utf-8")
    assert fuzz.check("k.py", text) == "KeyError: 'no such key'"


def test_a_load_without_a_pointer_never_crashes_the_bounds_evidence():
    """`tl.load(mask=...)` with its pointer swapped away (a mutation the fuzzer draws) reached
    an assertion in the lane-bounds evidence that TL102 and TL106 read."""
    text = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    parts = [tl.load(mask=offs < BLOCK) for p in (x_ptr, p + offs, out_ptr)]\n"
        "    tl.store(out_ptr + offs, parts[0])\n"
    )
    assert fuzz.check("fuzz.py", text) is None
