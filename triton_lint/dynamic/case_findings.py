"""The findings of one stress case: deduplication, witnesses and related locations (child only).

A finding is keyed by (code, file, line, dedup): later hits only count occurrences. Every finding
carries the witness of its first hit (dims, dtypes, pattern, layout, device, plus what applies of
program id, lane, offsets, argument, ...) and points at the kernel's launch site and the case's
wrapper as related locations.
"""

from __future__ import annotations

import linecache
from typing import Any

from triton_lint.dynamic.backend import Site
from triton_lint.dynamic.codes import CODES
from triton_lint.dynamic.inputs import Combo
from triton_lint.finding import Finding, RelatedLocation, Severity, Span
from triton_lint.stress import Case

WITNESS_KEYS = frozenset(
    {
        "pid",
        "lane",
        "offsets",
        "arg",
        "op",
        "index",
        "output",
        "poison",
        "config",
        "got",
        "expected",
        "side",
        "spread",
        "device",
        "lands",
    }
)


def location(site: Site, message: str) -> RelatedLocation:
    text = linecache.getline(site[0], site[1]).rstrip("\n")
    return RelatedLocation(site[0], Span(site[1], 1, site[1], max(len(text), 0) + 1), message)


class FindingLog:
    """Collects one case's findings (see the module docstring)."""

    def __init__(self, case: Case, device: str) -> None:
        self.case = case
        self.device = device
        self.findings: dict[tuple[Any, ...], Finding] = {}
        #: Codes found while running the current combo (for its stress-matrix cell).
        self.combo_codes: set[str] = set()
        #: Launches of the current combo's first run (related locations of its findings).
        self.main_launches: list[tuple[str, Site]] = []

    def case_site(self) -> Site:
        return (self.case.path, self.case.line, self.case.fn.__name__)

    def related(self, site: Site, launch: Site | None) -> tuple[RelatedLocation, ...]:
        """The launch site of the kernel holding `site` and the case's wrapper, where different."""
        if launch is None:
            by_name = [s for k, s in self.main_launches if k == site[2]]
            launch = (by_name or [s for _k, s in self.main_launches] or [None])[0]
        out: list[RelatedLocation] = []
        seen = {(site[0], site[1])}
        if launch is not None and launch[1] > 0 and (launch[0], launch[1]) not in seen:
            seen.add((launch[0], launch[1]))
            out.append(location(launch, f"kernel launched here (in `{launch[2]}`)"))
        wrapper = self.case_site()
        if (wrapper[0], wrapper[1]) not in seen:
            out.append(location(wrapper, f"stress case `{self.case.name}` (host wrapper)"))
        return tuple(out)

    def has(self, code: str) -> bool:
        return any(k[0] == code for k in self.findings)

    def snapshot(self) -> dict[tuple[Any, ...], int]:
        """Occurrence counts now, to undo what a probe run adds (`restore`)."""
        return {k: f.properties["occurrences"] for k, f in self.findings.items()}

    def restore(self, snap: dict[tuple[Any, ...], int]) -> list[Finding]:
        """Drop findings added since `snap` (and reset counts); return the dropped ones."""
        dropped = [f for k, f in self.findings.items() if k not in snap]
        self.findings = {k: f for k, f in self.findings.items() if k in snap}
        for k, n in snap.items():
            self.findings[k].properties["occurrences"] = n
        return dropped

    def add(
        self,
        code: str,
        site: Site,
        message: str,
        combo: Combo | None,
        props: dict[str, Any],
        dedup: Any = None,
        launch: Site | None = None,
        severity: Severity | None = None,
        column: int | None = None,
    ) -> None:
        self.combo_codes.add(code)
        key = (code, site[0], site[1], dedup)
        if key in self.findings:
            self.findings[key].properties["occurrences"] += 1
            return
        meta = CODES[code]
        text = linecache.getline(site[0], site[1]).rstrip("\n")
        properties = {"case": self.case.name, "occurrences": 1, "device": self.device, **props}
        if combo is not None:
            properties.update(combo.describe())
            # The witness: everything needed to reproduce the finding in one place.
            properties["witness"] = {
                **combo.describe(),
                **{
                    k: v
                    for k, v in properties.items()
                    if k in WITNESS_KEYS and k not in combo.describe() and v is not None
                },
            }
        self.findings[key] = Finding(
            path=site[0],
            span=Span(site[1], column or 1, site[1], max(len(text), 0) + 1),
            code=code,
            name=meta.name,
            severity=severity or meta.severity,
            category=meta.category,
            message=message,
            kernel=site[2] if site[2] not in ("?", "<module>") else None,
            properties=properties,
            related=self.related(site, launch),
        )

    def event(self, ev: dict[str, Any], combo: Combo) -> None:
        """One sanitizer or red-zone event (out of bounds, assert, overflow, autotune)."""
        site = tuple(ev["site"])
        launch = tuple(ev["launch"]) if ev.get("launch") else None
        kind = ev["kind"]
        if kind == "oob":
            props = {
                k: ev.get(k)
                for k in ("op", "arg", "pid", "lane", "offsets", "bad_lanes", "owner_inferred")
            }
            if ev.get("lands"):
                props["lands"] = ev["lands"]
            if ev.get("side") is not None or ev.get("pid") is None:
                props["side"] = ev.get("side")
            self.add(
                "TL901",
                site,
                oob_message(ev, combo),
                combo,
                props,
                dedup=ev["arg"],
                launch=launch,
                column=ev.get("column"),
            )
        elif kind in ("assert", "overflow"):
            code = "TL910" if kind == "overflow" else "TL909"
            where = f"program {tuple(ev['pid'])}, " + (
                f"lane {tuple(ev['lane'])}"
                if self.device == "interpreter"
                else f"thread {tuple(ev['lane'])}"
            )
            msg = f"{ev['message']} in {where} {combo.short()}"
            self.add(code, site, msg, combo, {"pid": ev["pid"], "lane": ev["lane"]}, launch=launch)
        elif kind == "autotune":
            msg = (
                f"autotune config {ev['config']} gives a different output from "
                f"{ev['baseline_config']} "
                f"(output {ev['tensor_index']}, element {ev['element']}) {combo.short()}"
            )
            self.add(
                "TL911",
                site,
                msg,
                combo,
                {"config": ev["config"]},
                dedup=ev["config"],
                launch=launch,
            )


def oob_message(ev: dict[str, Any], combo: Combo) -> str:
    """The TL901 message: the interpreter knows program and lane, red zones know the side."""
    shape = ev.get("arg_shape")
    what = f"`{ev['arg']}` (shape {tuple(shape) if shape else '?'}, {ev.get('arg_dtype')})"
    if ev.get("pid") is not None:
        return (
            f"out-of-bounds {ev['op']} of {what} in program {tuple(ev['pid'])}, lane "
            f"{tuple(ev['lane'])}: element offset(s) {ev['offsets']} outside the tensor"
            + (f" ({ev['lands']})" if ev.get("lands") else "")
            + f"; {ev['bad_lanes']} lane(s) masked off {combo.short()}"
        )
    if ev.get("descriptor"):
        return (
            f"tensor descriptor for {what} reaches past its storage: {ev['lands']} {combo.short()}"
        )
    if ev["op"] == "store":
        side = "before its first element" if ev["side"] == "before" else "past its end"
        return (
            f"out-of-bounds store into {what}: elements {ev['first']}..{ev['last']} "
            f"({ev['bad_lanes']} element(s) {side}) changed the red zone {combo.short()}"
        )
    return (
        f"out-of-bounds load of {what}: the output changes when the red zones around it hold "
        f"other bytes, so the kernel reads outside the tensor {combo.short()}"
    )
