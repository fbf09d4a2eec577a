"""TL209: a launch grid whose axis 1 or 2 is a runtime size that can exceed 65535."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.host import assignment_before, dimension_axis
from triton_lint.model.kernel import LaunchSite, ModuleModel
from triton_lint.model.logit_rows import logit_rows
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_children, iter_nodes
from triton_lint.rules.base import Rule

_LIMIT = 65535
_BATCH = re.compile(
    r"^(b|bs|bsz|batch|batches|batch_size|num_batch(es)?|n_batch(es)?|num_seqs?|n_seqs?|"
    r"num_reqs|num_requests|nseq|len\(.*\))$",
    re.IGNORECASE,
)
_TOKENS = re.compile(
    r"(seq_?len|seqlen|num_tokens|n_tokens|ntokens|total_tokens|tokens|num_rows|n_rows|"
    r"nrows|^rows$|^m$|^t$|^l$|^s$|n_ctx|numel|n_elements|^total$)",
    re.IGNORECASE,
)
_HEADS = re.compile(r"(head|^h$|^hq$|^hk$|^hv$|^nh$|^n_h$)", re.IGNORECASE)
#: A count inside one block, page or chunk (``num_tokens_in_block``), or a speculative
#: draft's length (``num_draft_tokens``): bounded by its size.
_WITHIN_BLOCK = re.compile(r"_(in|per)_(block|page|chunk|tile)|draft", re.IGNORECASE)
#: Host calls whose result has the size of their argument (``int(n)``, ``math.prod(shape)``);
#: another helper's result (``split_k = decide_splitk(total_tokens, ...)``) is not its
#: arguments' size.
_SAME_SIZE = {"int", "float", "round", "abs", "ceil", "floor", "prod", "tensor", "next_power_of_2"}
_CDIV = {"cdiv", "triton.cdiv", "tl.cdiv"}
#: Offsets of packed sequences: ``len(cu_seqlens) - 1`` is the number of sequences.
_SEQUENCE_OFFSETS = re.compile(r"cu_seqlens|seq_start|seq_offsets|query_start_loc")


def _packed(atom: tuple[str, bool]) -> bool:
    """The atom is the number of packed sequences, ``len(cu_seqlens)`` (see ``_atoms``)."""
    return atom[0].startswith("len(")


class GridAxisLimit(Rule):
    code = "TL209"
    name = "grid-axis-limit"
    category = Category.CORRECTNESS
    severity = Severity.WARNING
    upstream_only = True
    summary = "Launch grid axis 1 or 2 is a runtime size that can exceed CUDA's 65535 limit"
    rationale = """\
CUDA allows 2^31-1 programs on grid axis 0 but only 65535 on axes 1 and 2. A grid such as
`(cdiv(D, BLOCK), num_tokens)` or `(n_blocks, batch * heads)` works in tests and fails in
production with "invalid argument" (or launches nothing on some drivers) once the token
count, or the batch x heads product, grows (FLA's varlen kernels put sequences x heads on
axis 1 and fixed it three times).

Warnings need evidence that the axis grows with the tokens of a batch, and the message names
it: a sequence, completion or token length by name (`seq_len`, `T`, `L`, `num_tokens`), a
value computed from one or from a tensor's elements (`M = cdiv(T, BS)`, `rows =
positions.numel()`), or the first dimension of an activation or of a flattened view (`M, N =
x.view(-1, D).shape`, `gate_up.size(0)`), alone or in a product. Information, with a note
saying why: rows of full-vocabulary logits (a leading dimension of a tensor named `logits`, or
of one whose rows are `vocab_size` wide, a grid whose other axis tiles the vocabulary, or a
token count beside a `logits` argument: 65535 rows at a 128K vocab are ~17 GB in bf16, so
readers split on these, rounds 19-28), rows with no evidence of tokens (rows of a request
table, of a chunk's regions), a count per frame or request
(`tokens_per_frame`), tokens in a function that decodes (one or a few per running request),
a `cdiv` of a token count alone, a batch alone, and sequences times heads (`B * H`, or
`N * HV` with `N = len(cu_seqlens) - 1` packed sequences): those grow with the number of
sequences, not with their tokens, and reach 65535 only past 2,048 sequences at 32 heads,
which the corpus triage read as debatable (rounds 7-25). A one-letter first dimension beside a row
count (`L` of `L, M, D = qp.shape`) batches those rows and counts as a batch. The prefill
tokens of a step (`rows = positions.numel()`) stay a warning: the scheduler's token budget
is a setting (it reaches the context length when chunked prefill is off, and long-context
models raise it), and a row of positions or metadata is small, so nothing bounds the rows
the way a vocabulary of logits does.

Sizes are read through the launching function's assignments (`N = B if cu_seqlens is None
else len(cu_seqlens) - 1` is the packed count), and grids through tuples, lambdas and `def
grid(meta)` functions in the launching function, around it or at module level
(`meta["n_rows"]` is the kernel argument of that name). Literals, small constexpr-bounded
values, counts inside one block, page or chunk (`num_tokens_in_block`), a speculative draft's
length (`num_draft_tokens`) and what a helper computes from a size (`split_k =
decide_splitk(total_tokens, heads)` is not the token count) are left alone, and so is a size
that a host condition holding at the launch bounds by a literal within the limit (`if T <=
4096:`, or `use_short = T <= 512` then `if use_short:`; not in the `else` arm)."""
    fix = """\
Put the large dimension on axis 0 (`grid = (num_tokens, cdiv(D, BLOCK))` and swap
`tl.program_id(0)`/`(1)` in the kernel), or loop over it inside the kernel."""
    bad = """\
import torch
import triton
import triton.language as tl


@triton.jit
def add_bias(x_ptr, b_ptr, D, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = tl.program_id(1).to(tl.int64)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D)
    tl.store(x_ptr + row * D + cols, x + tl.load(b_ptr + cols, mask=cols < D), mask=cols < D)


def launch(x: torch.Tensor, b: torch.Tensor) -> None:
    num_tokens, D = x.shape
    add_bias[(triton.cdiv(D, 256), num_tokens)](x, b, D, BLOCK=256)  # <- TL209
"""
    good = """\
import torch
import triton
import triton.language as tl


@triton.jit
def add_bias(x_ptr, b_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * D + cols, mask=cols < D)
    tl.store(x_ptr + row * D + cols, x + tl.load(b_ptr + cols, mask=cols < D), mask=cols < D)


def launch(x: torch.Tensor, b: torch.Tensor) -> None:
    num_tokens, D = x.shape
    add_bias[(num_tokens, triton.cdiv(D, 256))](x, b, D, BLOCK=256)
"""

    def check(self, module: ModuleModel) -> Iterator[Finding]:
        seen: set[int] = set()
        for site in module.launches:
            kernel = module.kernels_by_name[site.kernel_name]
            dims = site.grid_dims or []
            for axis, dim in enumerate(dims[1:3], start=1):
                if id(dim) in seen:
                    continue  # one grid shared by several launches
                seen.add(id(dim))
                verdict = _classify(module, site, dim)
                if verdict is None:
                    continue
                severity, why, note = verdict
                yield self.finding(
                    kernel,
                    dim,
                    f"grid axis {axis} is {why}: CUDA limits axes 1 and 2 to 65535 programs"
                    f"{note}; put this dimension on axis 0 or loop over it in the kernel",
                    top=site.grid_top or site.top,
                    severity=severity,
                )


def _classify(
    module: ModuleModel, site: LaunchSite, dim: cst.BaseExpression
) -> tuple[Severity, str, str] | None:
    """Severity, what the axis is, and the note an information finding carries."""
    value = module.evaluate_at(site, dim)
    if value is not UNKNOWN:
        if isinstance(value, int) and value > _LIMIT:
            return Severity.ERROR, f"{value}", ""
        return None
    atoms: list[tuple[str, bool]] = []  # (label, divided)
    _atoms(dim, False, atoms, _definitions(site))
    bounded = _bounded_names(site)
    atoms = [a for a in atoms if not _WITHIN_BLOCK.search(a[0]) and a[0] not in bounded]
    leading = _leading_dimensions(site)
    tokens = [
        a for a in atoms if _TOKENS.search(a[0]) and not _BATCH.match(a[0]) and a[0] not in leading
    ]
    batch = [a for a in atoms if _BATCH.match(a[0]) or a[0] in leading]
    heads = [a for a in atoms if _HEADS.search(a[0]) and "dim" not in a[0].lower()]
    evidence = {a[0]: _token_evidence(module, site, a[0]) for a in tokens}
    undivided_tokens = [a for a in tokens if not a[1]]
    logits = next(filter(None, (logit_rows(site, a[0]) for a in tokens)), None)
    if undivided_tokens:
        label = undivided_tokens[0][0]
        if evidence[label] is not None and logits is not None:
            return Severity.INFO, f"a row count of logits (`{label}`)", _logits_note(logits)
        if evidence[label] is not None:
            return (
                Severity.WARNING,
                f"a size that grows with tokens (`{label}`{evidence[label]})",
                "",
            )
        return Severity.INFO, f"a runtime count (`{label}`)", _not_tokens(site, label)
    if (
        len(batch) + len(heads) + len(tokens) >= 2
        and (batch or tokens)
        and any(not a[1] for a in batch + heads)
    ):
        names = " x ".join(f"`{a[0]}`" for a in batch + heads + tokens)
        if any(evidence[a[0]] is not None for a in tokens) and logits is not None:
            return (
                Severity.INFO,
                f"a product with a row count of logits ({names})",
                (_logits_note(logits)),
            )
        if any(evidence[a[0]] is not None for a in tokens):
            return Severity.WARNING, f"a product of runtime sizes with a token count ({names})", ""
        if tokens:
            return Severity.INFO, f"a product of runtime sizes ({names})", _not_tokens(site, "")
        # A batch or the packed sequences times heads passes 65535 only past ~2,000
        # sequences at 32 heads: it grows with requests, not with their tokens.
        return Severity.INFO, f"a product of sequences and heads ({names})", _SEQUENCES
    if tokens:
        return Severity.INFO, f"a `cdiv` of a token/row count (`{tokens[0][0]}`)", ""
    packed = [a for a in batch if _packed(a) and not a[1]]
    if packed:
        return Severity.INFO, f"the number of packed sequences (`{packed[0][0]} - 1`)", _SEQUENCES
    if batch and not batch[0][1]:
        return Severity.INFO, f"a batch size (`{batch[0][0]}`)", ""
    return None


#: Names that say a count of tokens themselves: a sequence or completion length, the tokens
#: of a step, the elements of a tensor.
_SAYS_TOKENS = re.compile(
    r"(seq_?len|seqlen|tokens|n_ctx|numel|n_elements|^t$|^l$|^s$)", re.IGNORECASE
)
#: Tensors whose rows are tokens: activations and per-token inputs.
_ACTIVATION = re.compile(
    r"(hidden|gate_up|^x$|^inp(ut)?s?$|^act|token|position|input_ids|^q(uery)?$)", re.IGNORECASE
)
#: A count inside one frame, request or item (`tokens_per_frame`).
_PER_UNIT = re.compile(r"_per_", re.IGNORECASE)
_SEQUENCES = (
    " (info: it grows with the number of sequences, not with their tokens: 65535 takes that "
    "many sequences, or 2,048 at 32 heads)"
)


def _logits_note(why: str) -> str:
    """The note of rows of full-vocabulary logits: 65535 of them at a 128K vocabulary are
    65535 x 131072 elements, ~17 GB in bf16 and ~34 GB in fp32."""
    return (
        f" (info: {why}, so each row is a full vocabulary: 65535 rows of full-vocab logits "
        "are ~17 GB in bf16 (~34 GB in fp32) at a 128K vocab, more than callers hold)"
    )


def _token_evidence(module: ModuleModel, site: LaunchSite, label: str) -> str | None:
    """Why ``label`` grows with the tokens of a batch (for the message), or None: a
    sequence length or token count by name (``seq_len``, ``T``, ``L``, ``num_tokens``), a
    value computed from one or from a tensor's elements (``M = cdiv(T, BS)``, ``rows =
    positions.numel()``), or the first dimension of an activation or of a flattened view
    (``M, N = x.view(-1, D).shape``). A count per frame or request, and a count in a
    function that decodes (one or a few tokens per running request), are not."""
    if _PER_UNIT.search(label) or _decodes(site):
        return None
    if _SAYS_TOKENS.search(label):
        return ", a length or token count by its name"
    value = _alias(site, site.host_definitions.get(label))
    if value is None:
        return None
    code = (site.module or module).module.code_for_node
    if any(
        _method(n) == "numel" or (isinstance(n, cst.Name) and _SAYS_TOKENS.search(n.value))
        for n in iter_nodes(value)
    ):
        text = code(value)
        return f" = `{text}`" if len(text) <= 60 else f" = `{text[:57]}...`"
    owner = _first_dimension_of(value)
    if owner is None:
        return None
    name = dotted_name(owner) or ""
    reshaped = (
        assignment_before(site.function, site.call, name)
        if site.function is not None and isinstance(owner, cst.Name)
        else None
    )
    if _flattens(reshaped):
        return f", the rows of `{name} = {code(reshaped)}`"
    if _ACTIVATION.search(name.rsplit(".", 1)[-1]):
        return f", the rows of `{name}`"
    return None


def _not_tokens(site: LaunchSite, label: str) -> str:
    """The note of a row count with no evidence that it counts tokens."""
    if _PER_UNIT.search(label):
        return " (info: a count within one frame, request or item)"
    if _decodes(site):
        return " (info: in a decode step, one or a few tokens per running request)"
    return (
        " (info: nothing shows these rows grow with tokens, as `x.view(-1, D)` or a sequence "
        "length would; requests, pages or rows of logits rarely reach 65535)"
    )


def _decodes(site: LaunchSite) -> bool:
    return site.function is not None and "decode" in site.function.name.value.lower()


def _alias(site: LaunchSite, value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """What a size stands for through plain names and ``int(...)`` (``rows = int(n)``)."""
    for _ in range(3):
        if isinstance(value, cst.Name) and value.value in site.host_definitions:
            value = site.host_definitions[value.value]
        elif isinstance(value, cst.Call) and dotted_name(value.func) == "int" and value.args:
            value = value.args[0].value
        else:
            break
    return value


def _method(node: cst.CSTNode) -> str | None:
    """``m`` of a call ``obj.m(...)``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None


def _flattens(value: cst.BaseExpression | None) -> bool:
    """``x.view(-1, D)``, ``x.reshape(B * T, D)`` or ``x.flatten(0, 1)``: leading dimensions
    merged into the rows."""
    method = _method(value) if value is not None else None
    if method == "flatten":
        return True
    if method not in ("view", "reshape") or not value.args:
        return False
    first = value.args[0].value
    if isinstance(first, cst.Tuple | cst.List) and first.elements:
        first = first.elements[0].value
    return evaluate(first) == -1 or (
        isinstance(first, cst.BinaryOperation) and isinstance(first.operator, cst.Multiply)
    )


def _first_dimension_of(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The tensor ``x`` of ``x.shape[0]`` or ``x.size(0)``."""
    if dimension_axis(value) != 0:
        return None
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Attribute):
        return value.value.value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.value
    return None


def _definitions(site: LaunchSite) -> dict[str, cst.BaseExpression]:
    """The host values of names at the launch: a single assignment, or for a name assigned
    in each branch of an ``if`` (``N = B`` / ``N = len(cu_seqlens) - 1``) its values as one
    conditional expression, so that the packed count among them is seen."""
    merged = dict(site.host_definitions)
    for name, values in site.host_alternatives.items():
        if name not in merged and values:
            either = values[-1]
            for value in reversed(values[:-1]):
                either = cst.IfExp(test=cst.Name(name), body=value, orelse=either)
            merged[name] = either
    return merged


def _leading_dimensions(site: LaunchSite) -> set[str]:
    """One-letter names bound to the first dimension of a tensor whose later dimension has a
    token/row name too (``L, M, D = qp.shape``): the rows are ``M``, and ``L`` batches them
    (a flattened batch x heads), so it counts as a batch."""
    dims: dict[str, tuple[str, object]] = {}
    for name, value in site.host_definitions.items():
        axis = dimension_axis(value)
        if isinstance(axis, int):
            owner = value.value if isinstance(value, cst.Subscript) else value.func
            if isinstance(owner, cst.Attribute):
                dims[name] = (dotted_name(owner.value) or "", axis)
    rows = {
        (owner, axis)
        for name, (owner, axis) in dims.items()
        if _TOKENS.search(name) and not _BATCH.match(name) and isinstance(axis, int) and axis > 0
    }
    return {
        name
        for name, (owner, axis) in dims.items()
        if len(name) == 1
        and axis == 0
        and _TOKENS.search(name)
        and any(row_owner == owner and owner for row_owner, _ in rows)
    }


def _bounded_names(site: LaunchSite) -> set[str]:
    """Host names a condition that holds at the launch bounds by a literal within the limit:
    ``if T <= 4096:``, or ``use_short = T <= 512`` then ``if use_short:``."""
    bounded: set[str] = set()
    pending = list(site.holding_tests())
    while pending:
        test = pending.pop()
        if isinstance(test, cst.Name) and test.value in site.host_definitions:
            pending.append(site.host_definitions[test.value])
        elif isinstance(test, cst.Name) and test.value in site.host_alternatives:
            # `use_short = T <= 4096`, and `use_short = False` on some path: only the
            # comparison can make it true
            true = [v for v in site.host_alternatives[test.value] if evaluate(v) is not False]
            pending.extend(true[:1] if len(true) == 1 else [])
        elif isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            pending.extend((test.left, test.right))
        elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
            if isinstance(operator, cst.LessThan | cst.LessThanEqual):
                name, limit = test.left, right
            elif isinstance(operator, cst.GreaterThan | cst.GreaterThanEqual):
                name, limit = right, test.left
            else:
                continue
            value = evaluate(limit)
            if isinstance(name, cst.Name) and isinstance(value, int) and value <= _LIMIT:
                bounded.add(name.value)
    return bounded


def _atoms(
    node: cst.CSTNode,
    divided: bool,
    out: list[tuple[str, bool]],
    definitions: dict[str, cst.BaseExpression],
    depth: int = 3,
) -> None:
    """The named sizes ``node`` multiplies, each marked when it is divided (``cdiv(T, B)``);
    a name that says nothing (``N``) is read through the host function's assignment."""
    if isinstance(node, cst.Name):
        value = definitions.get(node.value)
        if value is not None and depth > 0 and not _named_size(node.value):
            _atoms(value, divided, out, definitions, depth - 1)
        else:
            # `batch = B if cu_seqlens is None else len(cu_seqlens) - 1`: the packed count
            inner: list[tuple[str, bool]] = []
            if value is not None and depth > 0 and _BATCH.match(node.value):
                _atoms(value, divided, inner, definitions, depth - 1)
            packed = [a for a in inner if _packed(a)]
            out.append(packed[0] if packed else (node.value, divided))
        return
    if isinstance(node, cst.Attribute):
        out.append((node.attr.value, divided))
        return
    if isinstance(node, cst.Subscript):
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and isinstance(
                element.slice.value, cst.SimpleString
            ):
                key = element.slice.value.evaluated_value
                if isinstance(key, str) and _named_size(key):
                    out.append((key, divided))  # META["n_rows"]: the kernel argument
                return  # META["BLOCK_M"]: a config value
        return  # x.shape[0]: unknown name
    if isinstance(node, cst.Call):
        name = dotted_name(node.func) or ""
        if name in _CDIV or name.endswith(".cdiv"):
            if node.args:
                _atoms(node.args[0].value, True, out, definitions, depth)
            return
        if name in ("min", "max"):
            return  # clamped
        if name == "len":
            # `len(cu_seqlens) - 1` counts sequences; other lengths count elements of
            # something this rule cannot name.
            offsets = dotted_name(node.args[0].value) if node.args else None
            if offsets is not None and _SEQUENCE_OFFSETS.search(offsets):
                out.append((f"len({offsets})", divided))
            return
        if name.rsplit(".", 1)[-1] in _SAME_SIZE:
            for arg in node.args:
                _atoms(arg.value, divided, out, definitions, depth)
        return
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.FloorDivide | cst.Divide | cst.RightShift):
            _atoms(node.left, True, out, definitions, depth)
            return
        if isinstance(node.operator, cst.Modulo):
            return
        _atoms(node.left, divided, out, definitions, depth)
        _atoms(node.right, divided, out, definitions, depth)
        return
    if isinstance(node, cst.IfExp):  # the values, not the test
        arms: list[list[tuple[str, bool]]] = [[], []]
        _atoms(node.body, divided, arms[0], definitions, depth)
        _atoms(node.orelse, divided, arms[1], definitions, depth)
        packed = [arm for arm in arms if any(_packed(a) for a in arm)]
        out.extend(packed[0] if packed else arms[0] + arms[1])  # the packed count, if any
        return
    for child in iter_children(node):
        if isinstance(child, cst.BaseExpression):
            _atoms(child, divided, out, definitions, depth)


def _named_size(name: str) -> bool:
    return bool(_TOKENS.search(name) or _BATCH.match(name) or _HEADS.search(name))
