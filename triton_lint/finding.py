"""The one finding model shared by static rules, dynamic checks and every reporter."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    """How bad a finding is; the values are the JSON/SARIF-facing names."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Category(str, enum.Enum):
    """The audit categories findings are grouped by in reports."""

    CORRECTNESS = "correctness"
    MEMORY_SAFETY = "memory-safety"
    NUMERICS = "numerics"
    PERFORMANCE = "performance"
    BEST_PRACTICE = "best-practice"


@dataclass(frozen=True)
class Span:
    """A source range: 1-based lines and columns, end column exclusive (as ruff and SARIF)."""

    line: int
    column: int
    end_line: int
    end_column: int


class Applicability(str, enum.Enum):
    """Whether a fix can be applied without review (`--fix`) or needs `--unsafe-fixes`."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the text in ``span`` (1-based, end exclusive) with ``content``."""

    span: Span
    content: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "location": {"row": self.span.line, "column": self.span.column},
            "end_location": {"row": self.span.end_line, "column": self.span.end_column},
        }


@dataclass(frozen=True)
class Fix:
    """A suggested change; edits of one fix never overlap and are applied together."""

    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability.value,
            "message": self.message,
            "edits": [edit.to_dict() for edit in self.edits],
        }


@dataclass(frozen=True)
class RelatedLocation:
    """Another place that explains a finding (a dynamic finding's launch site or wrapper)."""

    path: str
    span: Span
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "message": self.message,
        }


@dataclass
class Finding:
    """One reported problem, static or dynamic.

    `kernel` names the enclosing `@triton.jit` function when there is one; reporters use it
    for grouping and for fingerprints that survive unrelated edits. `properties` carries
    machine-readable extras (e.g. a dynamic witness under ``properties["witness"]``: program
    id, lane, offset). `related` points at other places that explain it (launch site, wrapper).
    """

    path: str
    span: Span
    code: str
    name: str
    severity: Severity
    category: Category
    message: str
    kernel: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    fix: Fix | None = None
    related: tuple[RelatedLocation, ...] = ()

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.span.line, self.span.column, self.code)

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract: keys other tools rely on; extend, never rename."""
        data: dict[str, Any] = {
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "category": self.category.value,
            "message": self.message,
            "kernel": self.kernel,
        }
        if self.properties:
            data["properties"] = self.properties
        if self.fix is not None:
            data["fix"] = self.fix.to_dict()
        if self.related:
            data["related"] = [location.to_dict() for location in self.related]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """The finding `to_dict` wrote (the results cache stores findings this way)."""
        fix = data.get("fix")
        return cls(
            path=data["path"],
            span=_span(data),
            code=data["code"],
            name=data["name"],
            severity=Severity(data["severity"]),
            category=Category(data["category"]),
            message=data["message"],
            kernel=data["kernel"],
            properties=data.get("properties", {}),
            fix=None
            if fix is None
            else Fix(
                Applicability(fix["applicability"]),
                fix["message"],
                tuple(
                    Edit(
                        Span(
                            edit["location"]["row"],
                            edit["location"]["column"],
                            edit["end_location"]["row"],
                            edit["end_location"]["column"],
                        ),
                        edit["content"],
                    )
                    for edit in fix["edits"]
                ),
            ),
            related=tuple(
                RelatedLocation(location["path"], _span(location), location["message"])
                for location in data.get("related", ())
            ),
        )


def _span(data: dict[str, Any]) -> Span:
    return Span(data["line"], data["column"], data["end_line"], data["end_column"])
