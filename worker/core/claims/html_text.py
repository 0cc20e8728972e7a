"""The text a browser shows of an HTML block (rule 7): outside tags, comments, processing
instructions, declarations, CDATA, and ``<script>``, ``<style>``, ``<pre>`` and ``<textarea>``
elements.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Elements whose content is no prose a reader is shown as such (CommonMark's HTML block kind 1).
_RAW_HTML_RE = re.compile(rb"<((?i:script|pre|style|textarea))(?=[\s>/]|$)")
#: What may follow ``<`` in a tag, comment, declaration or processing instruction.
_TAG_START_RE = re.compile(rb"[A-Za-z/!?]")
#: What closes what an HTML block may hold, by its opener (anything else ``<`` opens: ``>``).
_HTML_CLOSERS = ((b"<!--", b"-->"), (b"<?", b"?>"), (b"<![CDATA[", b"]]>"), (b"<!", b">"))


def shown_html(source: bytes, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The stretches of ``source[start:end]`` (an HTML block) a browser shows as text: outside
    tags, comments, processing instructions, declarations, CDATA, and ``<script>``, ``<style>``,
    ``<pre>`` and ``<textarea>`` elements (preformatted or no text: exempt like code). One pass:
    each search starts where the last one ended, and one that finds nothing ends the scan."""
    pos = scan = start
    lowered: bytes | None = None  # the block in lower case, for a raw element's closing tag
    while scan < end:
        lt = source.find(b"<", scan, end)
        if lt < 0:
            break
        if not _TAG_START_RE.match(source, lt + 1, end):  # ``a < b``: text
            scan = lt + 1
            continue
        raw = _RAW_HTML_RE.match(source, lt, end)
        if raw is None:
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
