"""Versioned prompt files for language-model generators, shipped as package data.

A prompt file `<version>.md` holds a `## system` and a `## user` section; `{{name}}`
placeholders are filled by `Prompt.render`. The file name is the version recorded in each
trace: a change in wording is a new file (`grounded-v2.md`), never an edit of an old one, so
a logged version always names the exact text that was sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

_VERSION = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_SECTION = re.compile(r"^## (system|user)\s*$", re.M)
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
# In a file's comment: the order in which the reply's JSON fields are asked for (a server's
# JSON-schema mode generates them in this order; a small model copies a quote better before
# it writes the answer than after).
_FIELDS = re.compile(r"^\s*Reply fields:\s*([a-z ,]+?)\.?\s*$", re.M | re.I)
DEFAULT_FIELDS = ("answer", "citations", "confidence")


class PromptError(ValueError):
    """A prompt version that does not exist or a file that is malformed."""


@dataclass(frozen=True)
class Prompt:
    version: str
    system: str
    user: str
    fields: tuple[str, ...] = DEFAULT_FIELDS

    def render(self, **values: str) -> list[dict[str, str]]:
        """Chat messages with every `{{name}}` replaced; an unknown name is an error."""
        def fill(template: str) -> str:
            def sub(m: re.Match[str]) -> str:
                if m.group(1) not in values:
                    raise PromptError(f"prompt {self.version} needs a value for {m.group(1)}")
                return values[m.group(1)]

            # One pass: text inside values (context, question) is never re-scanned.
            return _PLACEHOLDER.sub(sub, template)

        return [{"role": "system", "content": fill(self.system)},
                {"role": "user", "content": fill(self.user)}]


def load_prompt(version: str) -> Prompt:
    if not _VERSION.match(version):
        raise PromptError(f"invalid prompt version {version!r}")
    path = resources.files(__name__) / f"{version}.md"
    if not path.is_file():
        raise PromptError(f"no prompt file {version}.md in citadel/answering/prompts")
    return parse_prompt(version, path.read_text(encoding="utf-8"))


def parse_prompt(version: str, text: str) -> Prompt:
    comments = " ".join(re.findall(r"<!--(.*?)-->", text, flags=re.S))
    fields = DEFAULT_FIELDS
    if m := _FIELDS.search(comments):
        fields = tuple(f for f in re.split(r"[\s,]+", m.group(1).lower()) if f)
        if sorted(fields) != sorted(DEFAULT_FIELDS):
            raise PromptError(f"prompt {version}: 'Reply fields' must order "
                              f"{', '.join(DEFAULT_FIELDS)}")
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)  # file comments are not sent
    parts = _SECTION.split(text)
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if set(sections) != {"system", "user"} or not all(sections.values()):
        raise PromptError(f"prompt {version} needs non-empty '## system' and '## user' sections")
    return Prompt(version=version, system=sections["system"], user=sections["user"],
                  fields=fields)
