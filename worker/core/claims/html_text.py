"""The text a browser shows of an HTML block (rule 7): outside tags, comments, processing
instructions, declarations, CDATA, and ``<script>``, ``<style>``, ``<pre>`` and ``<textarea>``
elements.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Elements whose content is no prose a reader is shown as such (CommonMark's HTML block kind 1).
_RAW_HTML_RE = re.compile(rb"<((?i:script|pre|style|textarea))(?=[\s>/]|$)")
#: ``<`` and what may follow it in a tag, comment, declaration or processing instruction (the
#: search skips a ``<`` followed by anything else, ``a < b``, in C).
_TAG_START_RE = re.compile(rb"<[A-Za-z/!?]")
#: What closes what an HTML block may hold, by its opener (anything else ``<`` opens: ``>``).
_HTML_CLOSERS = ((b"<!--", b"-->"), (b"<?", b"?>"), (b"<![CDATA[", b"]]>"), (b"<!", b">"))


def shown_html(source: bytes, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The stretches of ``source[start:end]`` (an HTML block) a browser shows as text: outside
    tags, comments, processing instructions, declarations, CDATA, and ``<script>``, ``<style>``,
    ``<pre>`` and ``<textarea>`` elements (preformatted or no text: exempt like code). One pass:
    each search starts where the last one ended, and one that finds nothing ends the scan."""
    pos = scan = start
    lowered: bytes | None = None  # the block in lower case, for a raw element's closing tag
    search = _TAG_START_RE.search
    while scan < end:
        tag = search(source, scan, end)
        if tag is None:
            break
        lt = tag.start()
        second = source[lt + 1]
        # Only ``<!`` and ``<?`` open a construct with a closer of its own, and only ``<`` and
        # a letter a raw element: a tag (most of them) is closed by ``>``.
        raw = None if second in b"/!?" else _RAW_HTML_RE.match(source, lt, end)
        if raw is None:
            closer = b">"
            if second in b"!?":
                closer = next((c for o, c in _HTML_CLOSERS if source.startswith(o, lt)), b">")
            found = source.find(closer, lt + 1, end)
            if found < 0 and closer == b">":  # no tag closes after here: the rest is text
                break
            after = found + len(closer)
        else:
            if lowered is None:
                lowered = source[start:end].lower()
            found = lowered.find(b"</" + raw.group(1).lower(), lt + 1 - start)
            gt = lowered.find(b">", found) if found >= 0 else -1
            after = start + gt + 1 if gt >= 0 else -1
            found = after
        yield pos, lt
        if found < 0:  # an unclosed comment or raw element hides the rest
            return
        pos = scan = after
    if pos < end:
        yield pos, end
