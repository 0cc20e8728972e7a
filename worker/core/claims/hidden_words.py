"""Rule 5's hidden words, on the parsed structure of a field (contract §3.5).

Words next to hidden citations only are never published, and a sentence that lost a citation
keeps its words only where its visible sources support it. Both read the field as rule 7 does
(``worker.core.claims.markdown``, CommonMark + GFM tables, following cmark-gfm), never as raw
lines:

- **Regions**: every character of the field belongs to one region. A prose block, a heading or
  a table row (``markdown.blocks``) is a region; what no such block covers is read from the
  parser's code blocks, where each line is a region (in code the sentence is the line), and
  otherwise as runs of lines between blank lines (an HTML block or comment, a link reference
  definition, an image-only paragraph: one region each, so a wrapped comment or title cannot
  keep its first line).
- **Sentences** (the finest, rule 5): in a prose block or heading, one ends at every
  terminator (``.!?‽。！？`` with its closing quotes or brackets) followed by whitespace, a
  ``<br>``, a backslash hard break or the block's end, whatever abbreviation, quotation or
  parenthesis surrounds it; after ``。！？``, or a terminator with a closing quote, at once; and
  never at a line break inside the block, a ``:`` or a table cell's pipe. A table row, a code
  line and any other region is one sentence. Citation tokens right after a terminator belong to
  the sentence it ends.
- **Groups**: citation tokens with whitespace only between them, inside one region (a group
  never crosses a block boundary; a container's markers between two lines of one paragraph are
  whitespace).

``word_spans`` gives what to replace; ``hidden_only_group`` says whether a unit's text carries a
group whose ids are all hidden. Linear: one parse, one pass over the terminators and one over
the tokens per region, with bisection to find a token's sentence.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, NamedTuple

import pyromark

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.tokens import HiddenTokens, hidden_tokens
from worker.core.claims.markdown import BLOCK_STARTS, blocks, mask

__all__ = ["Region", "hidden_only_group", "regions", "sentences_of", "word_spans"]

#: A group of citation tokens: tokens with nothing but whitespace between them.
GROUP_RE = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]+\](?:\s*\[(?:OBS|DOC|EVT)-[0-9]+\])*")
_TOKEN_RE = re.compile(r"\[(OBS|DOC|EVT)-([0-9]+)\]")
_KINDS = {k.value: k for k in EvidenceKind}
#: Where a finest sentence ends (see the module docstring): the end of the match.
_FINE_END_RE = re.compile(
    r"[.!?。！？‽][\"'”’»)\]*_」』）】》〉]*(?=\s|$|<[bB][rR][\s/>]|\\\n)"
    r"|[.!?‽][\"'”’»」』]+"
    r"|[。！？][\"'”’»)\]*_」』）】》〉]*"
)
_BLANKS = " \t\n\r\f\v"
#: The parser's events with source ranges (the same reader as ``markdown.blocks``).
_events = pyromark.Markdown(options=pyromark.Options.ENABLE_TABLES).events_with_range
#: A line's leading markers kept when its words go: indentation, quote, list and heading marks.
_LINE_MARKS_RE = re.compile(r"[ \t]*(?:(?:>|[-*+]|[0-9]{1,9}[.)]|#{1,6})[ \t]*)*")


class Region(NamedTuple):
    """A stretch of a field that sentences and groups never cross."""

    #: ``[start, end)`` in the field.
    start: int
    end: int
    #: A prose block or heading: split into sentences at terminators. Otherwise one sentence.
    prose: bool
    #: A table row: its words are its cells (kept as a row when replaced).
    row: bool = False
    #: The block's content segments (prose): what lies between them is container markup.
    segments: tuple[tuple[int, int], ...] = ()


def regions(text: str, wanted: Callable[[str], bool] | None = None) -> list[Region]:
    """Every region of ``text``, in order (see the module docstring); with ``wanted``, only
    what lies outside the blocks in stretches it wants is cut into regions (the blocks are
    cheap, the rest needs the parser's code blocks). The parser is asked for code blocks only
    where such a stretch holds a ``[`` (a token to place). One line that opens no block and
    holds no code span or image is one paragraph (most claim texts): no parser."""
    if (
        text
        and text[0] not in BLOCK_STARTS
        and "\n" not in text
        and "\r" not in text
        and "`" not in text
        and "![" not in text
    ):
        return [Region(0, len(text), True, False, ((0, len(text)),))]
    found: list[Region] = []
    for block in blocks(text):
        segments = tuple(block.segments)
        if not segments:
            continue
        start, end = segments[0][0], segments[-1][1]
        found.append(Region(start, end, not block.row, block.row, segments))
    found.sort()
    gaps: list[tuple[int, int]] = []
    at = 0
    for region in found:
        if region.start > at:
            gaps.append((at, region.start))
        at = max(at, region.end)
    if at < len(text):
        gaps.append((at, len(text)))
    if wanted is not None:
        gaps = [(s, e) for s, e in gaps if wanted(text[s:e])]
    code = _code_ranges(text) if any("[" in text[s:e] for s, e in gaps) else []
    out = found
    for gap_start, gap_end in gaps:
        # Only the code blocks that may meet the gap (each meets few gaps: linear).
        k = max(bisect_right(code, (gap_start, -1)) - 1, 0)
        inside = []
        while k < len(code) and code[k][0] < gap_end:
            inside.append(code[k])
            k += 1
        out.extend(_gap_regions(text, gap_start, gap_end, inside))
    out.sort()
    return out


def _code_ranges(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each code block the parser reads (str offsets)."""
    ranges: list[tuple[int, int]] = []
    raw: bytes | None = None if text.isascii() else text.encode()
    event: Any
    for event, span in _events(text, merge_text=True):
        start_of = event.get("Start") if event.__class__ is dict else None
        if start_of.__class__ is dict and "CodeBlock" in start_of:
            start, end = span["start"], span["end"]
            if raw is not None:
                start, end = len(raw[:start].decode()), len(raw[:end].decode())
            ranges.append((start, end))
    return ranges


def _gap_regions(
    text: str, start: int, end: int, code: Sequence[tuple[int, int]]
) -> Iterator[Region]:
    """The regions of ``text[start:end]``, which no prose block, heading or row covers: a code
    line each inside a code block, else runs of lines between blank lines."""
    run_start = -1
    at = start
    code_starts = [s for s, _ in code] if code else []
    while at < end:
        newline = text.find("\n", at, end)
        line_end = end if newline < 0 else newline
        line = text[at:line_end]
        k = bisect_right(code_starts, at) - 1
        in_code = k >= 0 and at < code[k][1]
        if in_code or not line.strip():
            if run_start >= 0:
                yield Region(run_start, at, False)
                run_start = -1
            if in_code and line.strip():
                yield Region(at, line_end, False)
        elif run_start < 0:
            run_start = at
        at = line_end + 1
    if run_start >= 0:
        yield Region(run_start, end, False)


def _region_text(text: str, region: Region) -> str:
    """The region's text with container markup between its segments blanked (same length)."""
    if region.prose and len(region.segments) > 1:
        return mask(text, list(region.segments))
    return text[region.start : region.end]


def _groups(body: str) -> Iterator[tuple[int, int, list[CitationRef]]]:
    for group in GROUP_RE.finditer(body):
        yield group.start(), group.end(), _refs(group.group())


def _refs(group: str) -> list[CitationRef]:
    return [CitationRef(_KINDS[kind], int(ident)) for kind, ident in _TOKEN_RE.findall(group)]


def hidden_only_group(text: str, hidden: Collection[CitationRef]) -> bool:
    """Whether ``text`` carries a group of citation tokens every one of whose ids is hidden
    (rule 5: the words of such a sentence are never published, even when another group of the
    sentence cites a visible source). Groups never cross a block boundary."""
    if "[" not in text:
        return False
    # Never a copy per unit: a draft may hide a thousand ids and have fifty thousand units.
    held = hidden if isinstance(hidden, set | frozenset) else set(hidden)
    if "\n" not in text and "\r" not in text:  # one line: one block, or a row's cells
        return any(set(refs) <= held for _, _, refs in _groups(text))
    for region in regions(text):
        body = _region_text(text, region)
        if "[" in body and any(set(refs) <= held for _, _, refs in _groups(body)):
            return True
    return False


#: Decides whether a sentence that lost a citation keeps its words: its text without the
#: hidden tokens, and the visible refs it still cites (rule 6b's ``supported``).
Keeps = Callable[[str, tuple[CitationRef, ...]], bool]


def word_spans(
    text: str,
    hidden: Collection[CitationRef],
    words: str,
    keeps: Keeps | None = None,
    judged: Sequence[tuple[int, int]] = (),
    *,
    marks: HiddenTokens | None = None,
) -> list[tuple[int, int, str]]:
    """What rule 5 replaces in ``text``: each sentence that carries a group whose ids are all
    ``hidden``, and (with ``keeps``) each other sentence carrying a hidden token that ``keeps``
    does not keep — unless it lies inside a ``judged`` span (sorted; a claim unit whose support
    was decided) — as ``(start, end, words)`` in order, not overlapping. A table row keeps its
    pipes; a line keeps its leading markers. Only regions that hold a hidden token are read.
    ``marks``: ``hidden``'s tokens (``hidden_tokens``) where the caller made them once for many
    strings."""
    marks = marks if marks is not None else hidden_tokens(hidden)
    if not marks.may_hold(text) or (keeps is None and not _may_replace(text, hidden, marks)):
        return []
    judged_starts = [s for s, _ in judged]
    spans: list[tuple[int, int, str]] = []
    # A region's marks depend on its text alone, a sentence's keeping on its text alone: a
    # draft that repeats them (a heading per section) reads each once.
    marked_of: dict[tuple[str, bool], list[tuple[int, int, bool]]] = {}
    kept_of: dict[str, bool] = {}
    for region in regions(text, marks.may_hold):
        body = _region_text(text, region)
        marked = marked_of.get((body, region.prose))
        if marked is None:
            marked = marked_of[body, region.prose] = _marked(body, region.prose, hidden, marks)
        for s, e, replace in marked:
            if not replace:
                if keeps is None or _inside(judged, judged_starts, body, region.start, s, e):
                    continue
                sentence = body[s:e]
                kept = kept_of.get(sentence)
                if kept is None:
                    kept = kept_of[sentence] = keeps(*_without_hidden(sentence, hidden))
                if kept:
                    continue
            spans.append(_replacement(text, region, region.start + s, region.start + e, words))
    return _merged(spans)


def _marked(
    body: str, prose: bool, hidden: Collection[CitationRef], marks: HiddenTokens
) -> list[tuple[int, int, bool]]:
    """The sentences of a region's ``body`` that carry a hidden token, in order, as ``(start,
    end, replace)``: ``replace`` where a group of the sentence is hidden-only, else it lost a
    citation (whether it keeps its words is decided by ``word_spans``)."""
    if not marks.may_hold(body):
        return []
    sentences: list[tuple[int, int]] | None = None
    starts: list[int] = []
    marked: dict[int, bool] = {}  # sentence index -> replace
    for group in GROUP_RE.finditer(body):
        if not marks.may_hold(group.group()):  # most groups cite visible sources only
            continue
        g_start = group.start()
        refs = _refs(group.group())
        hit = [r in hidden for r in refs]
        if not any(hit):
            continue
        if sentences is None:
            sentences = _sentences(body) if prose else [(0, len(body))]
            starts = [s for s, _ in sentences]
        k = _sentence_of(starts, body, g_start)
        if all(hit):
            marked[k] = True
        elif k not in marked:
            marked[k] = False  # lost a citation: supported or not, decided by the caller
    if sentences is None:
        return []
    return [(*sentences[k], replace) for k, replace in sorted(marked.items())]


def _may_replace(text: str, hidden: Collection[CitationRef], marks: HiddenTokens) -> bool:
    """Whether some group of ``text`` may be hidden-only (``False`` is sure): a group of the raw
    text that holds no line break lies inside one region, so unless one is hidden-only, or one
    spans a line break (and may part into groups of two regions), none is."""
    for group in GROUP_RE.finditer(text):
        found = group.group()
        if not marks.may_hold(found):
            continue
        if "\n" in found or "\r" in found or all(r in hidden for r in _refs(found)):
            return True
    return False


def _inside(  # noqa: PLR0917 -- a sentence of a region, and the spans to look in
    spans: Sequence[tuple[int, int]],
    starts: Sequence[int],
    body: str,
    origin: int,
    start: int,
    end: int,
) -> bool:
    """Whether the sentence ``body[start:end]`` (blanks aside; ``origin``: the body's offset in
    the text) lies inside one of ``spans``."""
    if not spans:
        return False
    while start < end and body[start] in _BLANKS:
        start += 1
    while end > start and body[end - 1] in _BLANKS:
        end -= 1
    k = bisect_right(starts, origin + start) - 1
    return k >= 0 and spans[k][1] >= origin + end


def sentences_of(text: str, region: Region) -> list[tuple[int, int]]:
    """The finest sentences of ``region`` of ``text``, ``[start, end)`` in ``text`` (a row, a
    code line or any other region is one)."""
    if not region.prose:
        return [(region.start, region.end)]
    body = _region_text(text, region)
    return [(region.start + s, region.start + e) for s, e in _sentences(body)]


def _sentences(body: str) -> list[tuple[int, int]]:
    """The finest sentences of a prose block's text, ``[start, end)``, covering it."""
    out: list[tuple[int, int]] = []
    start = 0
    for match in _FINE_END_RE.finditer(body):
        end = match.end()
        out.append((start, end))
        start = end
    if start < len(body) or not out:
        out.append((start, len(body)))
    return out


def _sentence_of(starts: Sequence[int], body: str, at: int) -> int:
    """The sentence a group starting at ``at`` belongs to: the one it is in, or the one before
    when only whitespace stands between that one's terminator and the group."""
    k = bisect_right(starts, at) - 1
    if k > 0 and not body[starts[k] : at].strip(_BLANKS):
        return k - 1
    return k


def _without_hidden(
    sentence: str, hidden: Collection[CitationRef]
) -> tuple[str, tuple[CitationRef, ...]]:
    """The sentence's text without its hidden tokens, and its other refs in order."""
    visible: dict[CitationRef, None] = {}

    def cut(match: re.Match[str]) -> str:
        ref = CitationRef(_KINDS[match.group(1)], int(match.group(2)))
        if ref in hidden:
            return ""
        visible[ref] = None
        return match.group()

    return _TOKEN_RE.sub(cut, sentence), tuple(visible)


def _replacement(
    text: str, region: Region, start: int, end: int, words: str
) -> tuple[int, int, str]:
    """The span to replace for a sentence ``[start, end)`` of ``region``: blanks and leading
    markers kept outside; a row's pipes kept (``| words |``)."""
    if region.row:
        return region.start, region.end, f"| {words} |" if words else "|  |"
    line_start = text.rfind("\n", 0, start) + 1
    if not region.prose and start == line_start:
        marks = _LINE_MARKS_RE.match(text, start)
        if marks is not None:
            start = marks.end()
    while start < end and text[start] in _BLANKS:
        start += 1
    while end > start and text[end - 1] in _BLANKS:
        end -= 1
    return start, end, words


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` sorted, overlapping ones joined (one replacement each)."""
    spans.sort()
    out: list[tuple[int, int, str]] = []
    for start, end, words in spans:
        if out and start < out[-1][1]:
            prev = out.pop()
            out.append((prev[0], max(end, prev[1]), prev[2]))
        else:
            out.append((start, end, words))
    return out
