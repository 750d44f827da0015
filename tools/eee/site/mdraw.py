"""A Markdown extension (``markdown_extensions: [eee.site.mdraw]``): blocks of HTML between
``<!-- eee:raw -->`` and ``<!-- /eee:raw -->`` lines go to the output as they are, without
Markdown's HTML parser reading them tag by tag.

The catalogue's results tables are such blocks: a large store has a quarter of a million
rows, and parsing them was most of the build. It is a plain Python-Markdown extension, so
MkDocs and Zensical both run it; without it the same blocks are ordinary raw HTML (the
markers are comments), only slower to build.
"""

from __future__ import annotations

from typing import Any

from markdown import Extension
from markdown.preprocessors import Preprocessor

START = "<!-- eee:raw -->"
END = "<!-- /eee:raw -->"


class RawBlocks(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        if not any(line.startswith(START) for line in lines):
            return lines
        out: list[str] = []
        block: list[str] | None = None
        for line in lines:
            if block is None:
                if line.strip() == START:
                    block = []
                else:
                    out.append(line)
            elif line.strip() == END:
                out += ["", self.md.htmlStash.store("\n".join(block)), ""]
                block = None
            else:
                block.append(line)
        if block is not None:  # no end marker: leave the text as it was
            out += [START, *block]
        return out


class RawBlocksExtension(Extension):
    def extendMarkdown(self, md: Any) -> None:
        # before the HTML block parser (20) and the fenced code blocks (25)
        md.preprocessors.register(RawBlocks(md), "eee_raw", 29)


def makeExtension(**kwargs: Any) -> RawBlocksExtension:
    return RawBlocksExtension(**kwargs)
