"""Recall on shipped bugs: lint the release before and after an upstream kernel fix.

    python bench/recall.py                 # fetch (cached), lint, write docs/recall.md
    python bench/recall.py --no-report     # print the table only

Each case in ``bench/recall.tsv`` names a bug that shipped in a Triton kernel library and was
fixed upstream (the pull request or commit is the reference): the package, the release with the
bug and the first release with the fix, the file, the kernel, and the rule code that should report
it. Cases were collected from the projects' fix history without running the linter, so the count
is not biased towards what it already finds. A line ``## batch: NAME ...`` starts a batch of
cases collected together; the report gives each batch its own table, so cases collected after the
rules were written are measured apart from those the rules were tuned on.

A PyPI package's file is read from the release's wheel with HTTP range requests (a vLLM wheel is
300 MB; the file is a few kB). A package written ``github:OWNER/NAME`` names a repository
instead, and its two "releases" are the commit with the bug and the fixing commit; the file is
read with ``git show`` from a bare mirror under ``$TRITON_LINT_MIRRORS/OWNER+NAME/repo`` (default
``/work/.mirror``). Either way it is kept under ``$TRITON_LINT_CORPUS/recall/`` (default
``/work/.cache/corpus/recall``). It is linted as
``triton-lint`` lints it by default (target Triton 3.9, the default rule set, vendor-fork
directories as configured by default). A case is **caught** when the
buggy release has a finding of the expected code inside the kernel, and the fix **silences**
it when the fixed release has fewer. The fixed release is judged twice: on the lines the fix
inserted or replaced (a finding there means the linter rejects the fix) and over the whole
kernel.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import io
import json
import os
import subprocess
import sys
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triton_lint.config import DEFAULT_FORK_BACKENDS  # noqa: E402
from triton_lint.engine import lint_bytes  # noqa: E402
from triton_lint.finding import Finding, Span  # noqa: E402
from triton_lint.rules import all_rules, rules_by_code  # noqa: E402
from triton_lint.run import is_fork_backend  # noqa: E402

CACHE = Path(os.environ.get("TRITON_LINT_CORPUS", "/work/.cache/corpus")) / "recall"
CASES = ROOT / "bench" / "recall.tsv"
REPORT = ROOT / "docs" / "recall.md"
TARGET_VERSION = "3.9"
INDEX = "https://pypi.org/simple"
MIRRORS = Path(os.environ.get("TRITON_LINT_MIRRORS", "/work/.mirror"))
GIT_PREFIX = "github:"
FIRST_BATCH = "first"


@dataclass(frozen=True)
class Case:
    package: str
    before: str
    after: str
    path: str
    kernel: str
    code: str
    reference: str
    bug: str
    batch: str = FIRST_BATCH


@dataclass(frozen=True)
class Outcome:
    case: Case
    before: int | None  # findings of the expected code in the kernel; None: file or kernel absent
    after: int | None
    others: tuple[str, ...]  # other codes reported in the buggy kernel
    loud: int = 0  # of ``before``, those at error or warning severity (not ranked info)
    on_fix: int = 0  # findings of the code in the fixed release on lines the fix changed
    on_fix_loud: int = 0  # of ``on_fix``, those at error or warning severity

    @property
    def caught(self) -> bool:
        return bool(self.before)

    @property
    def silenced(self) -> bool:
        return self.caught and self.after is not None and self.after < (self.before or 0)


def load_cases(path: Path = CASES) -> list[Case]:
    """The cases, each tagged with the batch whose ``## batch: NAME ...`` line precedes it."""
    cases, batch = [], FIRST_BATCH
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle, delimiter="\t"):
            if row and row[0].startswith("## batch:"):
                batch = row[0].removeprefix("## batch:").split(",")[0].strip()
            elif row and row[0][:1] != "#":
                cases.append(Case(*row, batch=batch))
    return cases


def _wheel_url(package: str, version: str) -> str:
    """The URL of one wheel of ``package==version`` (a pure one if there is one), from
    PyPI's JSON simple index."""
    request = urllib.request.Request(
        f"{INDEX}/{package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response)["files"]
    stem = package.replace("-", "_").lower()
    wheels = [
        f["url"]
        for f in files
        if f["filename"].endswith(".whl")
        and f["filename"].split("-")[0].lower() == stem
        and f["filename"].split("-")[1] == version
        and ("none-any" in f["filename"] or "x86_64" in f["filename"])
    ]
    if not wheels:
        raise SystemExit(f"no wheel for {package}=={version} on {INDEX}")
    return sorted(wheels, key=lambda url: "none-any" not in url)[0]


class _RemoteFile(io.RawIOBase):
    """A read-only, seekable view of a file served over HTTP with range requests, so that
    ``zipfile`` reads one member of a 300 MB wheel without downloading it."""

    _BLOCK = 1 << 18

    def __init__(self, url: str) -> None:
        self.url = url
        self.position = 0
        self.blocks: dict[int, bytes] = {}
        request = urllib.request.Request(url, headers={"Range": "bytes=0-0"})
        with urllib.request.urlopen(request, timeout=60) as response:
            self.size = int(response.headers["Content-Range"].rsplit("/", 1)[1])

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = base + offset
        return self.position

    def _block(self, index: int) -> bytes:
        if index not in self.blocks:
            start = index * self._BLOCK
            end = min(start + self._BLOCK, self.size) - 1
            headers = {"Range": f"bytes={start}-{end}"}
            request = urllib.request.Request(self.url, headers=headers)
            with urllib.request.urlopen(request, timeout=120) as response:
                self.blocks[index] = response.read()
        return self.blocks[index]

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.size - self.position
        size = max(0, min(size, self.size - self.position))
        out = bytearray()
        while len(out) < size:
            index, within = divmod(self.position + len(out), self._BLOCK)
            out += self._block(index)[within : within + size - len(out)]
        self.position += len(out)
        return bytes(out)


def _git_member(repository: str, commit: str, path: str) -> bytes | None:
    """``path`` at ``commit`` of a GitHub repository's local bare mirror (None when the
    commit has no such file)."""
    mirror = MIRRORS / repository.replace("/", "+") / "repo"
    if not mirror.is_dir():
        raise SystemExit(f"no mirror of {repository} at {mirror} (set TRITON_LINT_MIRRORS)")
    known = subprocess.run(
        ["git", f"--git-dir={mirror}", "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
    )
    if known.returncode != 0:
        raise SystemExit(f"{repository}'s mirror has no commit {commit}: fetch it again")
    shown = subprocess.run(
        ["git", f"--git-dir={mirror}", "show", f"{commit}:{path}"], capture_output=True
    )
    return shown.stdout if shown.returncode == 0 else None


def _wheel_member(package: str, version: str, path: str) -> bytes | None:
    with zipfile.ZipFile(_RemoteFile(_wheel_url(package, version))) as archive:
        try:
            return archive.read(path)
        except KeyError:
            return None


def read_member(package: str, version: str, path: str, cache: Path) -> bytes | None:
    """The bytes of ``path`` in release ``version`` of ``package`` (None when it has no such
    file): from the PyPI wheel, or from a commit of a ``github:`` package; read once, then
    kept under ``cache``."""
    local = cache / f"{package.replace('/', '+')}-{version}" / path
    missing = local.with_name(local.name + ".missing")
    if local.exists():
        return local.read_bytes()
    if missing.exists():
        return None
    local.parent.mkdir(parents=True, exist_ok=True)
    if package.startswith(GIT_PREFIX):
        data = _git_member(package.removeprefix(GIT_PREFIX), version, path)
    else:
        data = _wheel_member(package, version, path)
    if data is None:
        missing.touch()
        return None
    local.write_bytes(data)
    return data


@dataclass(frozen=True)
class _Count:
    hits: int | None  # findings of the case's code in the kernel; None: file or kernel absent
    others: tuple[str, ...] = ()  # other codes reported in the kernel
    loud: int = 0  # of ``hits``, those at error or warning severity
    lines: tuple[tuple[int, int, bool], ...] = ()  # (first, last line, loud) of each hit


def _count(case: Case, version: str, cache: Path) -> _Count:
    """The findings of the case's code inside its kernel in one release."""
    data = read_member(case.package, version, case.path, cache)
    if data is None:
        return _Count(None)
    fork = is_fork_backend(case.path, DEFAULT_FORK_BACKENDS)
    rules = [r for r in all_rules() if r.default_enabled and not (fork and r.upstream_only)]
    result = lint_bytes(case.path, data, rules, TARGET_VERSION)
    if result.model is None or case.kernel not in result.model.kernels_by_name:
        return _Count(None)
    in_kernel = [f for f in result.findings if f.kernel == case.kernel]
    hits = [
        (span, f.severity.value in ("error", "warning"))
        for f in in_kernel
        if f.code == case.code
        for span in _occurrences(f)
    ]
    return _Count(
        hits=len(hits),
        others=tuple(sorted({f.code for f in in_kernel} - {case.code})),
        loud=sum(1 for _, loud in hits if loud),
        lines=tuple((span.line, span.end_line, loud) for span, loud in hits),
    )


def _occurrences(finding: Finding) -> list[Span]:
    """Where the finding reports its problem: its own span and, for a rule that groups the
    occurrences of one root cause (TL203's parameters of a kernel), its related locations."""
    spans = [finding.span]
    if rules_by_code()[finding.code].groups_occurrences:
        spans += [r.span for r in finding.related if r.path == finding.path]
    return spans


def changed_lines(before: bytes, after: bytes) -> set[int]:
    """Lines (1-based) of ``after`` that the fix inserted or replaced."""
    old = before.decode("utf-8", "replace").splitlines()
    new = after.decode("utf-8", "replace").splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return {
        line + 1
        for tag, _, _, start, end in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for line in range(start, end)
    }


def evaluate(case: Case, cache: Path) -> Outcome:
    before = _count(case, case.before, cache)
    after = _count(case, case.after, cache)
    old = read_member(case.package, case.before, case.path, cache)
    new = read_member(case.package, case.after, case.path, cache)
    changed = changed_lines(old, new) if old is not None and new is not None else set()
    on_fix = [loud for first, last, loud in after.lines if any(first <= n <= last for n in changed)]
    return Outcome(
        case, before.hits, after.hits, before.others, before.loud, len(on_fix), sum(on_fix)
    )


def _cell(count: int | None) -> str:
    return "kernel not found" if count is None else str(count)


def _code_table(outcomes: list[Outcome]) -> list[str]:
    """Per code: cases, caught, caught at error/warning, silenced by the fix, fixed
    versions without a finding of the code on the lines the fix changed, and fixed versions
    without one anywhere in the kernel."""
    covered = [o for o in outcomes if o.case.code != "-"]
    lines = [
        "| code | cases | caught | caught as error/warning | fix silences it "
        "| fixed lines clean | fixed kernel clean |",
        "|---|---|---|---|---|---|---|",
    ]

    def row(label: str, mine: list[Outcome], shares: bool) -> str:
        def cell(count: int) -> str:
            return f"{count} ({100 * count / len(mine):.0f}%)" if shares and mine else str(count)

        clean = sum(o.after == 0 for o in mine)
        lines_clean = sum(o.after is not None and not o.on_fix for o in mine)
        return (
            f"| {label} | {len(mine)} | {cell(sum(o.caught for o in mine))} | "
            f"{cell(sum(bool(o.loud) for o in mine))} | {sum(o.silenced for o in mine)} | "
            f"{cell(lines_clean)} | {cell(clean)} |"
        )

    for code in sorted({o.case.code for o in covered}):
        lines.append(row(code, [o for o in covered if o.case.code == code], shares=False))
    lines.append(row("**all**", covered, shares=True))
    return lines


def report(outcomes: list[Outcome]) -> str:
    covered = [o for o in outcomes if o.case.code != "-"]
    batches = list(dict.fromkeys(o.case.batch for o in outcomes))
    lines = [
        "# Recall on shipped bugs",
        "",
        "Generated by `python bench/recall.py` from the cases in `bench/recall.tsv`: bugs that",
        "shipped in a Triton kernel library and were fixed upstream. Each case lints the file in",
        "the release (or commit) with the bug and in the first one with the fix (default rules,",
        "target Triton 3.9) and counts the findings of the expected code inside the kernel.",
        "Cases were collected from the projects' fix history without running the linter. A rule",
        "may rank a finding `info` (TL104 below its whole-tensor tier, TL201, TL209): such a",
        "finding is shown and counts as caught; the next column counts the cases caught at error",
        "or warning severity. The fixed lines are clean when the fixed release has no finding of",
        "the code on a line the fix inserted or replaced (the linter accepts the fix); the fixed",
        "kernel is clean when it has none anywhere in the kernel (a kernel often has other",
        "products or loads of the same kind that the fix left alone).",
        "",
    ]
    for batch in batches:
        mine = [o for o in outcomes if o.case.batch == batch]
        lines += [f"## Batch: {batch} ({len(mine)} cases)", "", *_code_table(mine), ""]
    if len(batches) > 1:
        lines += ["## All batches", "", *_code_table(outcomes), ""]
    left = [o for o in covered if o.on_fix]
    if left:
        loud = sum(o.on_fix_loud for o in left)
        lines += [
            f"{len(left)} fixed versions keep a finding on a line the fix changed "
            f"({sum(o.on_fix for o in left)} findings, {loud} of them errors or warnings); "
            'the cases are the ones with a number in the table\'s "after, on fixed lines" '
            "column.",
            "",
        ]
    lines += [
        f"{len(outcomes) - len(covered)} more cases are bugs no rule covers (wrong offsets,",
        "wrong mask logic, host-side mistakes); they are listed last with code `-`, with the",
        "codes the linter does report in their kernel.",
        "",
        "| case | batch | code | before | after | after, on fixed lines "
        "| other codes in the kernel | bug |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in covered + [o for o in outcomes if o.case.code == "-"]:
        c = o.case
        name = f"{c.package} {c.before} → {c.after} `{c.path}` `{c.kernel}` ({c.reference})"
        lines.append(
            f"| {name} | {c.batch} | {c.code} | {_cell(o.before)} | {_cell(o.after)} | "
            f"{o.on_fix} | {', '.join(o.others) or '-'} | {c.bug} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--no-report", action="store_true", help="do not write docs/recall.md")
    args = parser.parse_args()
    outcomes = [evaluate(case, args.cache) for case in load_cases()]
    text = report(outcomes)
    if not args.no_report:
        REPORT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
