"""Compile-time rules: the TL203 fix, version awareness of TL207/TL208/TL210."""

from __future__ import annotations

from pathlib import Path

from triton_lint.engine import lint_text
from triton_lint.finding import Applicability
from triton_lint.rules import rules_by_code

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr, eps: tl.constexpr = 1e-5):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(x_ptr + offs, x * SCALE + eps, mask=offs < n)
"""


def _apply(text: str, edit) -> str:
    lines = text.splitlines(keepends=True)
    span = edit.span
    start = sum(len(line) for line in lines[: span.line - 1]) + span.column - 1
    end = sum(len(line) for line in lines[: span.end_line - 1]) + span.end_column - 1
    return text[:start] + edit.content + text[end:]


def _run(code: str, text: str, version: str):
    result = lint_text("k.py", text, [rules_by_code()[code]], version)
    assert not result.crashes
    return result.findings


def test_tl203_fix_drops_the_annotation_and_is_unsafe():
    """Two hyperparameters of one kernel: one finding, the second a related location, and
    one fix that drops both annotations."""
    (finding,) = _run("TL203", KERNEL, "3.9")
    assert finding.message.startswith("`SCALE` (only used as a runtime value) and `eps` (only")
    assert [(r.span.line, r.message.split("`")[1]) for r in finding.related] == [(6, "eps")]
    assert finding.fix is not None
    assert finding.fix.applicability is Applicability.UNSAFE
    text = KERNEL
    for edit in sorted(finding.fix.edits, key=lambda e: (e.span.line, e.span.column))[::-1]:
        text = _apply(text, edit)
    assert "def k(x_ptr, n, SCALE, BLOCK: tl.constexpr, eps=1e-5):" in text
    assert _run("TL203", text, "3.9") == []


BLOCK_PTR = """\
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, M, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (M,), (1,), (0,), (BLOCK,), (0,))
    x = tl.load(p, boundary_check=(0,))
    tl.store(p, x, boundary_check=(0,))
"""


def test_tl208_depends_on_the_target_version():
    assert _run("TL208", BLOCK_PTR, "3.3") == []
    on_37 = _run("TL208", BLOCK_PTR, "3.7")
    assert [(f.line, f.severity.value) for f in on_37] == [(7, "warning")]
    (on_39,) = _run("TL208", BLOCK_PTR, "3.9")
    # One finding for the block-pointer API, at its first use; the other uses are related.
    assert (on_39.line, on_39.severity.value) == (7, "error")
    assert "2 more uses of block pointers" in on_39.message
    assert [r.span.line for r in on_39.related] == [8, 9]


def test_tl210_names_the_version_that_added_an_api():
    text = BLOCK_PTR.replace("tl.make_block_ptr", "tl.make_tensor_descriptor")
    (finding,) = _run("TL210", text, "3.3")
    assert "added in 3.4" in finding.message


CHAIN = """\
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, lo, hi, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = (offs < n) and (offs >= lo)
    if pid > lo and pid < hi and n > 0:
        tl.store(x_ptr + offs, 0.0, mask=m)
"""


def test_tl207_severity_follows_the_target():
    on_33 = {(f.line, f.severity.value) for f in _run("TL207", CHAIN, "3.3")}
    assert on_33 == {(9, "warning"), (10, "error")}
    on_39 = {(f.line, f.severity.value) for f in _run("TL207", CHAIN, "3.9")}
    assert on_39 == {(9, "warning")}


def test_tl207_names_the_operator_triton_deprecates():
    """Compiled Triton 3.9 deprecates `and`/`or` on blocks (a warning); `not` compiles
    elementwise, so it is information that names the interpreter, not a deprecation."""
    text = (FIXTURES / "TL207" / "bad_mask_and.py").read_text()
    findings = _run("TL207", text, "3.9")
    found = {f.line: f.message for f in findings}
    assert [(f.line, f.severity.value) for f in findings] == [
        (9, "warning"),
        (11, "warning"),
        (12, "info"),
    ]
    assert "deprecates `and`/`or`" in found[9] and "deprecates `and`/`or`" in found[11]
    assert "deprecat" not in found[12]
    assert "correct when compiled" in found[12] and "wrong under `TRITON_INTERPRET=1`" in found[12]
    assert "`~`" in found[12]
    # `not` compiles elementwise on every tabled release: information on 3.3 too
    assert ("3.3", "info") in {("3.3", f.severity.value) for f in _run("TL207", text, "3.3")}


_NAMED_TOKENS = (
    "grid axis 1 is a size that grows with tokens (`num_tokens`, a length or token count by "
    "its name)"
)


def test_tl209_severity_follows_how_likely_the_axis_passes_65535():
    text = (FIXTURES / "TL209" / "bad_grids.py").read_text()
    found = {
        (f.line, f.severity.value, f.message.split(":")[0]) for f in _run("TL209", text, "3.9")
    }
    assert found == {
        (
            21,
            "warning",
            _NAMED_TOKENS,
        ),
        (21, "info", "grid axis 2 is a batch size (`batch`)"),
        (24, "info", "grid axis 1 is a product of sequences and heads (`batch` x `num_heads`)"),
        (26, "info", "grid axis 1 is a `cdiv` of a token/row count (`seq_len`)"),
        (
            29,
            "warning",
            "grid axis 1 is a product of runtime sizes with a token count (`batch` x `seq_len`)",
        ),
        (33, "info", "grid axis 1 is a product of sequences and heads (`B` x `H`)"),
        (34, "error", "grid axis 1 is 70000"),
        (36, "info", "grid axis 1 is a batch size (`batch`)"),
        # the `else` arm of `if use_short:` and `if num_tokens > 4096:` have no bound
        (
            50,
            "warning",
            _NAMED_TOKENS,
        ),
        (
            52,
            "warning",
            _NAMED_TOKENS,
        ),
    }


def test_tl209_the_leading_dimension_beside_a_row_count_is_a_batch():
    text = (FIXTURES / "TL209" / "bad_leading_dimension.py").read_text()
    found = {
        (f.line, f.severity.value, f.message.split(":")[0]) for f in _run("TL209", text, "3.9")
    }
    assert found == {
        (24, "info", "grid axis 2 is a batch size (`L`)"),
        (
            29,
            "warning",
            "grid axis 2 is a size that grows with tokens (`L`, "
            "a length or token count by its name)",
        ),
    }


def test_tl209_packed_sequences_times_heads_is_information():
    """Round 25 read sequences x heads debatable (65535 needs 2,048 sequences at 32 heads):
    it grows with the number of sequences, not with their tokens, and the note says so."""
    text = (FIXTURES / "TL209" / "bad_varlen_sequences_by_heads.py").read_text()
    (finding,) = _run("TL209", text, "3.9")
    assert (finding.line, finding.severity.value, finding.message.split(":")[0]) == (
        25,
        "info",
        "grid axis 1 is a product of sequences and heads (`len(cu_seqlens)` x `HV`)",
    )
    assert "(info: it grows with the number of sequences, not with their tokens" in finding.message


def test_tl209_warns_only_with_evidence_of_tokens_and_names_it():
    """A warning names why the axis grows with tokens (a flattened view, a tensor's elements,
    a sequence length, a value computed from one); rows of a table, of logits or of a chunk,
    a count per frame and the tokens of a decode step are information with a note."""
    text = (FIXTURES / "TL209" / "bad_token_evidence.py").read_text()
    found = {f.line: (f.severity.value, f.message) for f in _run("TL209", text, "3.9")}
    evidence = {
        21: "(`M`, the rows of `x = x.view(-1, x.shape[-1])`)",
        26: "(`rows` = `positions.numel()`)",
        38: "(`M` = `triton.cdiv(T, 64)`)",
    }
    notes = {
        32: "(info: the rows of `logits`, so each row is a full vocabulary",
        43: "(info: nothing shows these rows grow with tokens",
        48: "(info: nothing shows these rows grow with tokens",
        53: "(info: nothing shows these rows grow with tokens",
        58: "(info: a count within one frame, request or item)",
        63: "(info: in a decode step, one or a few tokens per running request)",
    }
    assert set(found) == set(evidence) | set(notes)
    for line, text_ in evidence.items():
        assert found[line][0] == "warning" and f"grows with tokens {text_}" in found[line][1]
    for line, note in notes.items():
        assert found[line][0] == "info" and note in found[line][1], line


def test_tl209_rows_of_full_vocabulary_logits_are_information():
    """Issue 33: readers split on rows of logits (a completion length, the tokens of gathered
    logits): 65535 rows of a full vocabulary are tens of GB, so those are information with
    the size in the note; activation rows, a token-named length of a 4-D value tensor and the
    prefill tokens of a step stay warnings."""
    text = (FIXTURES / "TL209" / "bad_logit_rows.py").read_text()
    found = {(f.line, f.code, f.severity.value): f.message for f in _run("TL209", text, "3.9")}
    assert set(found) == {
        (21, "TL209", "info"),  # `L = L_ADD_1 - 1` of `logits.shape`
        (25, "TL209", "info"),  # a backward passing `dlogits`, `L` a parameter
        (31, "TL209", "info"),  # axis 0 tiles `vocab_size`
        (37, "TL209", "info"),  # `num_tokens, V = scores.shape`
        (43, "TL209", "warning"),  # rows of `x.view(-1, D)`
        (48, "TL209", "warning"),  # `B, T, H, V = v.shape`: `V` is a value head
        (53, "TL209", "warning"),  # prefill tokens of a step
    }
    note = "65535 rows of full-vocab logits are ~17 GB in bf16 (~34 GB in fp32) at a 128K vocab"
    for (line, _, severity), message in found.items():
        assert (note in message) == (severity == "info"), line
    assert "(info: the rows of `logits`," in found[(21, "TL209", "info")]
    assert "the launch passes `dlogits`" in found[(25, "TL209", "info")]
    assert "tiles the vocabulary `vocab_size`" in found[(31, "TL209", "info")]
    assert "the rows of `scores`, each `V` wide" in found[(37, "TL209", "info")]
    good = (FIXTURES / "TL209" / "good_logit_rows.py").read_text()
    assert _run("TL209", good, "3.9") == []


def test_tl201_size_from_a_tensor_dimension_is_information():
    text = (FIXTURES / "TL201" / "bad_tensor_dimension.py").read_text()
    found = _run("TL201", text, "3.9")
    assert [(f.line, f.severity.value) for f in found] == [(16, "info"), (20, "info"), (24, "info")]
    assert "tensor dimension `x.shape[1]`" in found[0].message
    assert "`x.shape[-1]`" in found[1].message
    assert "`x.size(1)`" in found[2].message


def test_tl203_ranks_per_call_sizes_above_hyperparameters():
    """A per-call size, or a value a launch computes from one, is a warning; a float
    hyperparameter fixed per configuration is information. Each tier is one finding per
    kernel."""
    path = FIXTURES / "TL203" / "bad_per_call_floats_near_dtypes.py"
    found = _run("TL203", path.read_text(encoding="utf-8"), "3.9")
    assert [(f.line, f.severity.value) for f in found] == [
        (17, "info"),  # sm_scale from the head size: fixed per model
        (18, "warning"),  # eps scaled by the row count: changes with every batch
    ]
    # a learning rate from a config dict, a clip value switched by a step count: two values
    assert [r.span.line for r in found[0].related] == [19, 21]
    assert "(info: a hyperparameter" in found[0].message
    assert "info" not in found[1].message
    path = FIXTURES / "TL203" / "bad_layernorm.py"
    found = _run("TL203", path.read_text(encoding="utf-8"), "3.9")
    assert [(f.message.split("`")[1], f.severity.value) for f in found] == [
        ("n_rows", "warning"),
        ("eps", "info"),
    ]
    assert "`unused_scale` (never used)" in found[1].message


def test_tl104_warns_only_with_evidence_and_says_which():
    """A whole-tensor product is a warning only with evidence that workloads reach 2**31
    elements, named in the message; router logits of a few hundred experts are info."""
    text = (FIXTURES / "TL104" / "bad_evidence_tiers.py").read_text()
    findings = _run("TL104", text, "3.9")
    messages = {f.line: f.message for f in findings}
    found = {
        f.line: (f.severity.value, f.message.split("(evidence: ")[-1].split(")")[0])
        for f in findings
    }
    assert found == {
        21: ("warning", "a general GEMM: M, N and K are whatever the caller multiplies"),
        43: (
            "warning",
            "a row index times a row stride of `x`, a full `hidden_size` row per token: batch "
            "x sequence rows of it pass 2**31",
        ),
        59: ("info", found[59][1]),
        82: ("warning", "kernel `state_update` of this file already widens the same product"),
        97: ("warning", "a row index times the row stride of `logits`, a vocabulary row per token"),
        112: ("info", found[112][1]),
    }
    assert "(info: it spans a whole tensor, but nothing in this file shows" in messages[112]
    assert "(info: it spans a whole tensor, but nothing in this file shows" in messages[59]
    aten = (FIXTURES / "TL104" / "bad_aten_override.py").read_text()
    (finding,) = _run("TL104", aten, "3.9")
    assert finding.severity.value == "warning" and "backs an aten operator" in finding.message


def test_tl208_deprecated_is_info_unless_a_later_release_removes_it():
    """A deprecated API every tabled release still accepts works as written (info); one a
    later release removes breaks on upgrade (warning); a removed one is an error."""
    tiers = (FIXTURES / "TL208" / "bad_deprecated_tiers_3_9.py").read_text()
    found = _run("TL208", tiers, "3.9")
    assert [(f.line, f.severity.value) for f in found] == [(13, "info"), (14, "info")]
    assert all("(info: Triton 3.9 still accepts it" in f.message for f in found)
    later = (FIXTURES / "TL208" / "bad_deprecated_removed_later_3_3.py").read_text()
    found = _run("TL208", later, "3.3")
    assert [(f.line, f.severity.value) for f in found] == [(10, "warning"), (12, "info")]
    assert "Triton 3.4 removes it, so this breaks on upgrade" in found[0].message
    assert [(f.line, f.severity.value) for f in _run("TL208", later, "3.4")] == [
        (10, "error"),
        (12, "info"),
    ]


def test_tl103_zero_fill_of_a_log_sum_exp_shift_is_info():
    """A 0 fill that only raises a maximum used as a log-sum-exp shift (`exp(x - m)`,
    `log(s) + m`, a running max carried into `exp(m_prev - m)`) cancels: info. A maximum
    that is also stored, compared or used as a value stays an error."""
    text = (FIXTURES / "TL103" / "bad_lse_shift_tiers.py").read_text()
    found = _run("TL103", text, "3.9")
    assert [(f.line, f.code, f.severity.value) for f in found] == [
        (18, "TL103", "info"),  # logcumsumexp: running max, exp shifts, log(.) + m
        (32, "TL103", "info"),  # logsumexp
        (41, "TL103", "error"),  # the max is also stored
        (51, "TL103", "error"),  # the max is compared
        (62, "TL103", "error"),  # a running max that is stored
        (71, "TL103", "error"),  # the max is the value
        (78, "TL103", "error"),  # exp(m - 1.0): the max is not subtracted
    ]
    assert "(info: the maximum is only the shift of a log-sum-exp, which cancels" in (
        found[0].message
    )
    assert found[1].fix is not None and "-float" in found[1].fix.edits[0].content
    good = (FIXTURES / "TL103" / "good_lse_shift_neutral_fill.py").read_text()
    assert not _run("TL103", good, "3.9")


def test_tl103_relies_on_the_zero_fill_is_info_and_a_wrong_value_is_an_error():
    """A load without `other=` whose raw lanes reach a sum or a dot works on every backend,
    which fills 0 (info); a 0 made non-neutral on the way, or a non-neutral `other=`, is an
    error."""
    text = (FIXTURES / "TL103" / "bad_zero_fill_tiers.py").read_text()
    found = _run("TL103", text, "3.9")
    assert [(f.line, f.severity.value) for f in found] == [
        (12, "info"),  # tl.sum(x * x)
        (21, "info"),  # tl.dot operand masked along K
        (22, "info"),
        (30, "error"),  # x - mean
        (39, "error"),  # 1 - x
        (46, "error"),  # tl.max of signed values
        (53, "error"),  # other=1.0 before tl.sum
        (60, "info"),  # tl.sum(v * w) of two loads
        (61, "info"),
        (70, "info"),  # acc += x * x in a loop, then tl.sum(acc)
    ]
    info = found[0].message
    assert "the language leaves them undefined and does not promise that fill" in info
    assert info.endswith("add `other=0.0` to make it explicit")
    assert "even the 0 the backends fill them with is not neutral" in found[3].message
    assert all(f.fix is not None for f in found[:3])


def test_tl301_pairwise_decay_is_information_where_every_launch_selects_the_guard():
    """`if IS_CAUSAL: cb = tl.where(...)` with every launch passing `IS_CAUSAL=True`: the
    compiled kernel discards the overflow (info); launched both ways it is an error."""
    text = (FIXTURES / "TL301" / "bad_pairwise_decay_launched_causal.py").read_text()
    (finding,) = _run("TL301", text, "3.9")
    assert (finding.line, finding.severity.value) == (18, "info")
    assert "(info: every launch in the project passes the compile-time flag" in finding.message
    both = (FIXTURES / "TL301" / "bad_pairwise_decay.py").read_text()
    found = [(f.line, f.severity.value) for f in _run("TL301", both, "3.9")]
    assert found == [(19, "error"), (30, "error"), (44, "error")]


def test_tl301_is_information_under_a_constexpr_branch_no_launch_takes():
    """`if USE_SOFTCAP:` with the only launch passing False: the ratio in the branch and in
    the helper only called there never run (info); launched with True, the sigmoid ratio is
    an error and the helper, a softcap `tanh(S / x) * x`, a warning."""
    text = (FIXTURES / "TL301" / "bad_softcap_flag_never_set.py").read_text()
    found = [(f.line, f.severity.value) for f in _run("TL301", text, "3.9")]
    assert found == [(13, "info"), (23, "info")]
    assert all("no launch in the project takes" in f.message for f in _run("TL301", text, "3.9"))
    taken = text.replace("USE_SOFTCAP=False", "USE_SOFTCAP=True")
    found = _run("TL301", taken, "3.9")
    assert [(f.line, f.severity.value) for f in found] == [(13, "warning"), (23, "error")]
    assert "(a softcap `tanh(x / c) * c`" in found[0].message
    assert "no launch" not in found[0].message


def test_tl203_is_information_when_another_compile_time_constexpr_carries_the_value():
    """`BATCH` is a factor of `ROWS` and `SEQ` a dimension of the tensor whose `numel()` gives
    `M`, both constexprs the kernel needs at compile time: no compilation of their own (info,
    naming the other); beside a runtime row count `SEQ` stays a warning."""
    path = FIXTURES / "TL203" / "bad_carried_by_another_constexpr.py"
    found = _run("TL203", path.read_text(encoding="utf-8"), "3.9")
    assert [(f.line, f.severity.value) for f in found] == [
        (19, "info"),
        (31, "info"),
        (44, "warning"),
    ]
    assert "compiles once per value of `ROWS`" in found[0].message
    assert "compiles once per value of `M`" in found[1].message
    assert "info" not in found[2].message


def test_tl301_a_helper_another_file_calls_keeps_its_warning(tmp_path):
    """Another file of the project imports the helper and may call it in a live branch: the
    helper's own file no longer says that nothing runs it (the helper, a softcap, is a
    warning)."""
    from triton_lint.run import RunOptions, lint_paths
    from triton_lint.selection import Layer

    package = tmp_path / "attn"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.triton-lint]\n")
    (package / "__init__.py").write_text("")
    text = (FIXTURES / "TL301" / "bad_softcap_flag_never_set.py").read_text()
    (package / "kernels.py").write_text(text)
    options = RunOptions(cli_layer=Layer(select=["TL301"]), jobs=1, cache_dir=None)
    alone = lint_paths([package], options)
    assert [(f.line, f.severity.value) for f in alone.findings] == [(13, "info"), (23, "info")]
    (package / "other.py").write_text(
        "from attn.kernels import apply_softcap\n\n\ndef use(s, c):\n"
        "    return apply_softcap(s, c)\n"
    )
    found = [f for f in lint_paths([package], options).findings if f.path.endswith("kernels.py")]
    assert [(f.line, f.severity.value) for f in found] == [(13, "warning"), (23, "info")]
    assert "no launch in the project takes" not in found[0].message
    assert "(a softcap `tanh(x / c) * c`" in found[0].message
    assert "no launch in the project takes" in found[1].message


def test_tl203_a_size_that_is_an_autotune_key_is_information():
    """The autotuner re-tunes for every value of a key entry whether or not it is constexpr:
    the per-call `M` the tuned kernel reads is info, naming the key; untuned, or a key entry
    the kernel never reads (`B`), it stays a warning."""
    path = FIXTURES / "TL203" / "bad_autotune_keyed_size.py"
    found = _run("TL203", path.read_text(encoding="utf-8"), "3.9")
    assert [(f.line, f.severity.value) for f in found] == [
        (13, "info"),
        (21, "warning"),
        (36, "warning"),
    ]
    assert "also an autotune key" in found[0].message
    assert "info" not in found[1].message


def test_tl203_state_len_from_a_weight_width_and_a_constexpr_is_no_finding():
    """`state_len = width - 1 (+ seqlen - 1)` with `width` from `weight.shape` and `seqlen`
    another constexpr of the launch: nothing; from the activations or a token count: warning."""
    good = FIXTURES / "TL203" / "good_state_len_from_weight_width.py"
    assert _run("TL203", good.read_text(encoding="utf-8"), "3.9") == []
    bad = FIXTURES / "TL203" / "bad_state_len_from_activation_width.py"
    found = _run("TL203", bad.read_text(encoding="utf-8"), "3.9")
    assert [(f.line, f.severity.value) for f in found] == [(17, "warning")]


def test_tl101_a_tile_partial_only_for_some_sizes_is_information():
    """Issue 33: readers split on unmasked loads that overrun only when autotune picks a tile
    wider than the multiple the host asserts, or when a `next_power_of_2` tile meets an extent
    that is not a power of 2, with values that reach only masked-off outputs: information, the
    condition in the message. A reduction of those values, or every configuration failing to
    divide, stays an error; configurations that all divide the asserted multiple leave none."""
    text = (FIXTURES / "TL101" / "bad_partial_tile_some_sizes.py").read_text()
    found = {(f.line, f.code, f.severity.value): f.message for f in _run("TL101", text, "3.9")}
    assert set(found) == {
        (21, "TL101", "info"),  # autotune 64/128/256, `assert M % 128 == 0`
        (37, "TL101", "info"),  # `min(64, next_power_of_2(M))` through a nested `inner(...)`
        (54, "TL101", "error"),  # the same tiles, but `tl.sum` reads the lanes past the end
        (69, "TL101", "error"),  # tiles of 128 and 256 never divide `n % 64 == 0`
        (83, "TL101", "error"),  # a tensor-method reduction (`(...).sum()`) reads the lanes
    }
    assert (
        "only when autotune picks `BLOCK_M=256` and `M` is an odd multiple of 128"
        in (found[(21, "TL101", "info")])
    )
    assert (
        "only when `V` is neither a power of 2 nor a multiple of 64"
        in (found[(37, "TL101", "info")])
    )
    good = (FIXTURES / "TL101" / "good_autotune_tiles_divide.py").read_text()
    assert _run("TL101", good, "3.9") == []


def test_tl203_a_mesh_object_is_needed_and_carries_the_block_count():
    """`tle.distributed_barrier(mesh)` may need `mesh` at compile time (a Triton extension
    language); `NUM_BLOCKS`, which the mesh object holds, is info naming it, and
    `EXPERTS_PER_PROG = ceil_div(num_experts, num_blocks)` of two other constexprs is nothing.
    With `_block_count` computing a number instead, `NUM_BLOCKS` stays a warning."""
    good = FIXTURES / "TL203" / "good_mesh_object_constexpr.py"
    found = _run("TL203", good.read_text(encoding="utf-8"), "3.9")
    assert [(f.line, f.severity.value) for f in found] == [(25, "info")]
    assert "`NUM_BLOCKS` is" in found[0].message and "per value of `mesh`" in found[0].message
    bad = FIXTURES / "TL203" / "bad_block_count_beside_a_size_key.py"
    found = _run("TL203", bad.read_text(encoding="utf-8"), "3.9")
    assert [(f.line, f.severity.value) for f in found] == [(22, "warning")]
    assert found[0].related == ()


def test_tl203_a_dimension_a_constexpr_stride_spans_is_information():
    """`S` with `N == F * S` and `stride_b = qkv.stride(0)` passed as a constexpr: info naming
    the stride; beside the stride of the token axis itself (`qkv.stride(1)`), a warning."""
    path = FIXTURES / "TL203" / "bad_carried_by_a_stride.py"
    found = _run("TL203", path.read_text(encoding="utf-8"), "3.9")
    assert [(f.line, f.severity.value) for f in found] == [(17, "info"), (45, "warning")]
    assert "compiles once per value of `stride_b`" in found[0].message
    assert "info" not in found[1].message
