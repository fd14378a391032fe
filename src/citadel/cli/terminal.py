"""Printing untrusted text (questions, answers from the request log) to a terminal.

A question is whatever a client sent. Printed raw, an ESC sequence could recolour or clear
the screen, set the window title, hide the lines above it (CR) or, on some terminals, write
to the clipboard; bidirectional overrides can reorder what is shown. Such characters are
printed as visible escapes instead (`\\x1b`, `\\r`, `\\u202e`): the text stays readable and
cannot act.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 controls (tab and newline included: a record is one line), DEL, C1 controls, the Unicode
# line/paragraph separators and the bidirectional embedding, override and isolate controls.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return {9: "\\t", 10: "\\n", 13: "\\r"}.get(code) or (
        f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str) -> str:
    """`text` with every control character shown as an escape."""
    return _UNSAFE.sub(_escape, text)


def json_line(data: Any, indent: int | None = None) -> str:
    """JSON with every non-ASCII character escaped (`\\u009b` is a CSI to some terminals)."""
    return json.dumps(data, ensure_ascii=True, indent=indent,
                      separators=None if indent else (",", ":"))
