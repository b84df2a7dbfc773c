"""The fenced code blocks of a Markdown file, as the docs stage (tests/docs) and the README test
of tests/python-package read them. Imports nothing but the standard library.

Every fence must name its language: `sh` (or `bash`, `shell`) and `python` blocks are run by the
docs stage; any other (`text` for output and synopses, `cpp`, `rust`, `toml`, ...) is shown, not
run. An untagged fence is an error, so that no block is left out by accident.

A block the stage must not run has a marker on the line just before its fence, with the reason:

    <!-- docs-stage: skip (the ray stage runs it: it needs a Ray cluster) -->

The reason is printed by the stage. The only reasons allowed are the four of issue 36: the full
test suite (it is CI itself), the GPU, another platform, and Ray, and issue 38's NPU toolchains,
which need their own Pythons and venvs (the deploy stages run them; see SKIP_REASONS).
"""

import dataclasses
import pathlib
import re

RUN = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "python"}
# Each skip reason must start with one of these (what the stage may leave to another stage).
SKIP_REASONS = (
    "the full test suite",
    "GPU",
    "another platform",
    "the ray stage",
    "the deploy stage",
    "the deploy_rknn stage",
)
MARKER = re.compile(r"<!--\s*docs-stage:\s*skip\s*\((.+)\)\s*-->")
FENCE = re.compile(r"^(\s*)```(.*)$")


@dataclasses.dataclass
class Block:
    path: pathlib.Path
    line: int  # of the opening fence, 1-based
    lang: str  # as written after the fence
    text: str
    skip: str | None  # the marker's reason

    @property
    def kind(self) -> str | None:
        """"sh" or "python" for the blocks the stage runs, None for the others."""
        return RUN.get(self.lang)

    def where(self, root: pathlib.Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line}"


def blocks(path: pathlib.Path) -> list[Block]:
    """Every fenced block of `path`, in order. Raises ValueError on an untagged or unclosed fence,
    a marker that is not followed by a fence, or a skip reason that is not allowed."""
    lines = path.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            marker = MARKER.search(lines[i])
            if marker and not (i + 1 < len(lines) and FENCE.match(lines[i + 1])):
                raise ValueError(f"{path}:{i + 1}: a docs-stage marker must be just before a fence")
            i += 1
            continue
        indent, lang = m.group(1), m.group(2).strip()
        if not lang:
            raise ValueError(f"{path}:{i + 1}: a fence without a language (use `text` for output)")
        start = i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{path}:{start + 1}: unclosed fence")
        marker = MARKER.search(lines[start - 1]) if start > 0 else None
        skip = marker.group(1).strip() if marker else None
        if skip is not None and not skip.startswith(SKIP_REASONS):
            raise ValueError(f"{path}:{start + 1}: skip reason {skip!r} is not one of {SKIP_REASONS}")
        out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", skip))
        i += 1
    return out
