"""Error messages as HTTP clients see them: what to do, without the server's filesystem.

Not-ready reasons are written for the operator at a terminal (`no active knowledge base in
/srv/citadel/.citadel: ...`). Over HTTP the same words go to whoever can reach the port, so the
knowledge-base folder becomes `CITADEL_HOME`, any other absolute path `<path>`, and
credentials in a URL (`postgresql://user:secret@db`) are dropped. The full reason stays in the
server's own log.
"""

from __future__ import annotations

import re
from pathlib import Path

# An absolute POSIX path not inside a URL (there a `/` follows a word character or `:`).
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])/(?:[^\s'\"`/:;,()\[\]]+/?)+")
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s'\"]+@")


def public_message(message: str, home: Path) -> str:
    """`message` with the home folder named `CITADEL_HOME` and other absolute paths hidden."""
    for form in sorted({str(home.expanduser().resolve()), str(home.expanduser())}, key=len,
                       reverse=True):
        if form not in {".", ""}:
            message = message.replace(form, "CITADEL_HOME")
    message = _URL_CREDENTIALS.sub("", message)
    return _ABSOLUTE_PATH.sub("<path>", message)
