"""Latency of the language server: from an edit to the diagnostics of that edit.

Usage: python bench/lsp_latency.py [FILE ...] [--edits N] [--write]

Starts ``triton-lint server`` over stdio with pygls's client (the ``[lsp]`` extra), opens a
1,000-line kernel file assembled from the bundled bad fixtures and each FILE given, then edits
one line at a time and times each edit until the server publishes diagnostics for that
version: with no debounce (the lint itself) and with the default debounce (what an editor
waits). A burst of ten edits 50 ms apart measures the wait after the last keystroke.
Prints a Markdown table; ``--write`` also writes it to ``docs/lsp-latency.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from triton_lint.lsp.server import ServerOptions

REPO = Path(__file__).resolve().parent.parent
LINES = 1000


def kernel_file(directory: Path) -> Path:
    """A kernel file of at least ``LINES`` lines: the bundled bad fixtures (but the syntax
    error's), one after another."""
    parts: list[str] = []
    for path in sorted((REPO / "fixtures").glob("TL[1-9]*/bad*.py")):
        parts.append(f"# --- {path.relative_to(REPO)}\n{path.read_text(encoding='utf-8')}\n")
        if sum(part.count("\n") for part in parts) >= LINES:
            break
    target = directory / "kernels_1000.py"
    target.write_text("".join(parts), encoding="utf-8")
    return target


class Client(LanguageClient):
    def __init__(self) -> None:
        super().__init__("bench", "1")
        self.arrived: dict[tuple[str, int | None], tuple[float, int]] = {}


async def run(path: Path, debounce_ms: int, edits: int) -> dict[str, list[float]]:
    client = Client()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        client.arrived[(params.uri, params.version)] = (
            time.perf_counter(),
            len(params.diagnostics),
        )

    await client.start_io(sys.executable, "-m", "triton_lint", "server")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"debounceMs": debounce_ms},
        )
    )
    client.initialized(types.InitializedParams())
    await asyncio.sleep(1.0)  # the worker process starts and imports
    uri = path.resolve().as_uri()
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)

    async def wait(version: int) -> tuple[float, int]:
        while (uri, version) not in client.arrived:
            await asyncio.sleep(0.001)
        return client.arrived[(uri, version)]

    def send(version: int, new_text: str) -> float:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )
        return time.perf_counter()

    times: dict[str, list[float]] = {"open": [], "edit": [], "burst": []}
    start = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )
    arrived, count = await wait(1)
    times["open"].append(arrived - start)
    times["findings"] = [count]
    version = 1
    blank = [i for i, line in enumerate(lines) if not line.strip()]
    for n in range(edits):  # a comment typed on a blank line, then removed
        version += 1
        edited = list(lines)
        edited[blank[n % len(blank)]] = f"# edit {n}\n"
        sent = send(version, "".join(edited))
        arrived, _ = await wait(version)
        times["edit"].append(arrived - sent)
    for _ in range(3):  # ten keystrokes 50 ms apart; the wait after the last
        for key in range(10):
            version += 1
            edited = list(lines)
            edited[blank[0]] = "# " + "x" * (key + 1) + "\n"
            sent = send(version, "".join(edited))
            await asyncio.sleep(0.05)
        sent = send(version + 1, text)
        version += 1
        arrived, _ = await wait(version)
        times["burst"].append(arrived - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--write", action="store_true", help="also write docs/lsp-latency.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        files = [kernel_file(Path(directory)), *args.files]
        rows = [
            f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
            "",
            "| file | lines | findings | debounce | open (s) | edit median (s) | edit p90 (s) "
            "| edit max (s) | after a burst (s) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        print("\n".join(rows))
        for path in files:
            lines = path.read_text(encoding="utf-8").count("\n")
            label = path.name if path == files[0] else "/".join(path.parts[-4:])
            for debounce in (0, round(ServerOptions().debounce_s * 1000)):
                times = asyncio.run(run(path, debounce, args.edits))
                edit = sorted(times["edit"])
                rows.append(
                    f"| {label} | {lines} | {times['findings'][0]} | {debounce} ms "
                    f"| {times['open'][0]:.3f} | {statistics.median(edit):.3f} "
                    f"| {edit[int(0.9 * (len(edit) - 1))]:.3f} | {edit[-1]:.3f} "
                    f"| {statistics.median(times['burst']):.3f} |"
                )
                print(rows[-1])
    if args.write:
        header = [
            "# Language server latency",
            "",
            "Generated by `python bench/lsp_latency.py --write`: from an edit to the diagnostics",
            "of that edit, over stdio, one line edited at a time (20 edits); *after a burst*: the",
            "wait after the last of ten edits 50 ms apart. `kernels_1000.py` is the bundled bad",
            "fixtures in one file; the others are kernel files of the libraries `bench/corpus.py`",
            "reads.",
            "",
        ]
        (REPO / "docs" / "lsp-latency.md").write_text("\n".join([*header, *rows, ""]))


if __name__ == "__main__":
    main()
