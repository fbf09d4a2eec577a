"""Whether a launch's grid size counts rows of full-vocabulary logits: each such row is a whole
vocabulary of scores, so a row count that reaches CUDA's 65535 grid-axis limit implies a
tensor of tens of GB, which callers rarely hold. TL209 reads it to tell such rows apart from
rows of an activation (``x.view(-1, D)``), which reach 65535 in ordinary training batches."""

from __future__ import annotations

import re

import libcst as cst

from triton_lint.model.evaluate import evaluate
from triton_lint.model.host import dimension_axis
from triton_lint.model.kernel import LaunchSite
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_nodes

#: A tensor of logits (``logits``, ``full_logits``, ``dlogits``, ``logits_chunk``).
_LOGITS = re.compile(r"logits", re.IGNORECASE)
#: A name for the vocabulary width of a row of logits. A lone ``V`` is one only beside a
#: row count of at most three dimensions with no heads: FLA's ``B, T, H, V = v.shape`` is a
#: value head, and its grids tile it (``cdiv(V, BV)``).
_VOCAB = re.compile(r"^(vocab|vocab_size|n_vocab|num_vocab|vocab_dim|vocab_width)$", re.I)
_HEADS = re.compile(r"(head|^h[a-z]?$)", re.IGNORECASE)
_CDIV = {"cdiv", "triton.cdiv", "tl.cdiv"}


def logit_rows(site: LaunchSite, label: str) -> str | None:
    """Why the host size ``label`` on a grid axis counts rows of full-vocabulary logits (for a
    message), or None: it is a leading dimension of a tensor named ``*logits*`` (``B, L1, V =
    logits.shape; L = L1 - 1``) or of one whose last dimension is named a vocabulary (``T, V =
    x.shape``), another axis of the grid tiles a vocabulary (``(cdiv(vocab_size, 1024),
    num_tokens)``: every row is a whole vocabulary), or the launch passes a tensor named
    ``*logits*`` and ``label`` is no dimension of another tensor."""
    owner = _dimension_owner(site, label)
    if owner is not None and _LOGITS.search(owner):
        return f"the rows of `{owner}`"
    vocab = _vocabulary_of(site, owner) if owner is not None else None
    if vocab is not None:
        return f"the rows of `{owner}`, each `{vocab}` wide"
    for dim in site.grid_dims or []:
        tiled = _tiled_vocabulary(dim)
        if tiled is not None:
            return f"another grid axis tiles the vocabulary `{tiled}` of each row"
    passed = [a for a in site.args if isinstance(a, cst.Name) and _LOGITS.search(a.value)]
    if passed and owner is None:
        return f"the launch passes `{passed[0].value}`, and no other tensor has these rows"
    return None


def _dimension_owner(site: LaunchSite, label: str) -> str | None:
    """The tensor whose leading (not last) dimension ``label`` is, through plain names,
    ``int(...)`` and a literal offset (``L = L_ADD_1 - 1``)."""
    value: cst.BaseExpression | None = site.host_definitions.get(label)
    for _ in range(4):
        if isinstance(value, cst.Name) and value.value in site.host_definitions:
            value = site.host_definitions[value.value]
        elif isinstance(value, cst.Call) and dotted_name(value.func) == "int" and value.args:
            value = value.args[0].value
        elif (
            isinstance(value, cst.BinaryOperation)
            and isinstance(value.operator, cst.Add | cst.Subtract)
            and isinstance(evaluate(value.right), int)
        ):
            value = value.left
        else:
            break
    if value is None:
        return None
    axis = dimension_axis(value)
    if axis is None or axis == -1:
        return None
    return _tensor_of(value)


def _vocabulary_of(site: LaunchSite, owner: str) -> str | None:
    """A vocabulary name bound to the last dimension of ``owner`` (``T, V = x.shape``)."""
    dims = {
        name: value
        for name, value in site.host_definitions.items()
        if dimension_axis(value) is not None and _tensor_of(value) == owner
    }
    lone_v = len(dims) <= 3 and not any(_HEADS.search(name) for name in dims)
    for name in dims:
        if _VOCAB.match(name) or (name == "V" and lone_v):
            return name
    return None


def _tensor_of(dimension: cst.BaseExpression) -> str | None:
    """``x`` of ``x.shape[i]`` or ``x.size(i)``."""
    tensor = dimension.value if isinstance(dimension, cst.Subscript) else dimension
    if isinstance(tensor, cst.Call):
        tensor = tensor.func
    if isinstance(tensor, cst.Attribute):
        return dotted_name(tensor.value)
    return None


def _tiled_vocabulary(dim: cst.BaseExpression) -> str | None:
    """``cdiv(vocab_size, BLOCK)`` (or ``(vocab_size + B - 1) // B``) on a grid axis."""
    for node in iter_nodes(dim):
        numerator: cst.BaseExpression | None = None
        if isinstance(node, cst.Call) and (dotted_name(node.func) or "") in _CDIV and node.args:
            numerator = node.args[0].value
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide):
            numerator = node.left
        if numerator is None:
            continue
        for name in iter_nodes(numerator):
            if isinstance(name, cst.Name) and _VOCAB.match(name.value):
                return name.value
    return None
