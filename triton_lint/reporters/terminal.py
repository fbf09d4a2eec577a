"""What the text report looks like where it lands: full or concise, in colour or not.

The full format (source snippets) is for people: it is the default when the report goes to a
terminal, in CI logs (``CI`` set, as every CI service does) and under pre-commit (``PRE_COMMIT``
set; pre-commit shows a hook's output only when it fails). Anywhere else, the report is read
by another program (``| grep``, ``| wc -l``, an editor's problem matcher, a script), which
expects one finding a line, so it stays concise. Both formats start each finding with the same
``path:line:col: CODE message`` line, so ``grep`` works on either.

Colour follows https://no-color.org and https://force-color.org: ``--color always|never``
wins, then a non-empty ``NO_COLOR`` turns it off, then a non-empty ``FORCE_COLOR`` turns it on,
else a terminal (but ``TERM=dumb``) gets colour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from triton_lint.config import OUTPUT_FORMATS

#: `--output-format` / config key `output-format`: the style of `--format text`.
TEXT_FORMATS = OUTPUT_FORMATS
#: `--color`.
COLOR_CHOICES = ("auto", "always", "never")

_OFF = ("", "0", "false", "no")

#: SGR codes of the roles the full format paints.
_ROLES = {
    "error": "1;31",
    "warning": "1;33",
    "info": "1;36",
    "path": "1",
    "gutter": "1;34",
    "primary-error": "1;31",
    "primary-warning": "1;33",
    "primary-info": "1;36",
    "secondary": "1;34",
    "help": "1;36",
    "note": "1",
    "removed": "31",
    "added": "32",
}


def _set(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() not in _OFF


def default_text_format(to_terminal: bool, environ: Mapping[str, str]) -> str:
    """The text style when neither `--output-format` nor the config chose one."""
    if to_terminal or _set(environ, "CI") or _set(environ, "PRE_COMMIT"):
        return "full"
    return "concise"


def use_colour(choice: str, to_terminal: bool, environ: Mapping[str, str]) -> bool:
    """Whether to paint the report (see the module docstring for the order)."""
    if choice != "auto":
        return choice == "always"
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    return to_terminal and environ.get("TERM") != "dumb"


@dataclass(frozen=True)
class Palette:
    """Paints text by role with ANSI escapes, or leaves it as it is."""

    enabled: bool = False

    def __call__(self, text: str, role: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{_ROLES[role]}m{text}\x1b[0m"
