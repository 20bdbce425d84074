"""The JSON values of a capture file, in every shape a person has one (plans.md 3.1).

cfdot prints one compact value per line (the cfdot reference, section 0), but what reaches
the importer is often what a person pasted: objects pretty-printed by ``jq`` back to back
(one value over many lines), a JSON array of them, a terminal transcript with the shell
prompt and cfdot's deprecation notice between the values, gzip of any of these, a BOM,
Windows line ends. ``values_of`` yields each value with the line it starts on.

A line outside every value that cannot start one (a prompt, a notice) is skipped and
named in ``warnings``; inside a value nothing is skipped, and a value that starts and never
ends (a cut paste) is refused with the line it starts on and what the reader expected.

Memory stays bounded whatever arrives: a line or a value longer than ``VALUE_LIMIT`` is
refused, and a ``Budget`` caps what a capture's files may inflate to in all, so a small
gzip that decompresses to gigabytes is refused once it passes the budget, never held.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from auction.sim.cfdot_fields import CaptureError

#: The longest value (and line) read: a desired LRP's line can pass 128 KiB (routes alone),
#: and no record the BBS keeps comes near this.
VALUE_LIMIT = 64 * 2**20
#: What a capture's files may decompress to in all when the door gives no limit of its own.
CAPTURE_LIMIT = 4 * 2**30

_SPACE = re.compile(r"[ \t\r\n]*")
# A whole string on one line (strings never span lines): its brackets are not structure.
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_DECODER = json.JSONDecoder()
# What may follow an array's "[" on its line: a value, or its end. A prompt such as
# "[user@host ~]$ cfdot cells" opens no array.
_ARRAY_NEXT = set('{["]-0123456789tfn')
_DEEP = "not JSON as cfdot prints it (nested deeper than any BBS record)"


def _mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB"


class Budget:
    """The bytes a capture's files may still decompress to, shared by all of them."""

    def __init__(self, limit: int = CAPTURE_LIMIT) -> None:
        self.limit = limit
        self.left = limit


@dataclass(slots=True)
class Value:
    """One JSON value of a capture and the line it starts on."""

    number: int
    data: Any
    escaped: bool  # its text holds a \\u escape (only one can carry a NUL or a lone surrogate)


def values_of(name: str, content: bytes | IO[bytes] | IO[str], warnings: list[str],
              budget: Budget | None = None) -> Iterator[Value]:
    """Every value of one file (see the module docstring); raises ``CaptureError``."""
    splitter = _Splitter(name, warnings)
    for number, text in _lines(name, content, budget or Budget()):
        yield from splitter.feed(number, text)
    splitter.finish()


def _lines(name: str, content: bytes | IO[bytes] | IO[str], budget: Budget) -> Iterator[tuple[int, str]]:
    """(number, text) of every line, decoded; gzip told by its magic; a BOM dropped."""
    raw: IO[Any] = io.BytesIO(content) if isinstance(content, bytes) else content
    head = raw.read(2)
    if isinstance(head, str):  # a text stream, already decoded: bounded all the same
        text = head + raw.read(budget.left + 1)
        raw, head = io.BytesIO(text.encode("utf-8", "surrogatepass")), b""
    stream: IO[bytes] = io.BufferedReader(_Prefixed(head, raw))
    if head == b"\x1f\x8b":
        stream = gzip.GzipFile(fileobj=stream)  # type: ignore[assignment]
    number = 0
    try:
        while True:
            size = min(VALUE_LIMIT, budget.left) + 1
            chunk = stream.readline(size)
            if not chunk:
                return
            number += 1
            budget.left -= len(chunk)
            if budget.left < 0:
                raise CaptureError(f"{name}:{number}: the capture passes {_mib(budget.limit)} "
                                   "(decompressed), the most one import may hold")
            if len(chunk) == size and not chunk.endswith(b"\n"):
                raise CaptureError(f"{name}:{number}: a line longer than {_mib(VALUE_LIMIT)}: "
                                   "no cfdot record is that long")
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError:
                raise CaptureError(f"{name}:{number}: not UTF-8 text") from None
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]  # a BOM, as Windows editors save UTF-8
            yield number, text
    except (OSError, EOFError, zlib.error) as exc:
        raise CaptureError(f"{name}: not a readable gzip file ({exc})") from None


class _Prefixed(io.RawIOBase):
    """A byte stream with the bytes already read for sniffing put back in front."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        return n


def _incomplete(exc: json.JSONDecodeError, text: str) -> bool:
    """Whether the decoder stopped only because the text ended (more lines may finish it)."""
    return exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")


class _Splitter:
    """The values of one file's lines, fed one line at a time."""

    def __init__(self, name: str, warnings: list[str]) -> None:
        self.name = name
        self.warnings = warnings
        self.array = 0  # the line a top-level array opened on; 0 outside one
        self.after = ""  # in an array: "" at its start, "value" after an element, "comma"
        self.parts: list[str] = []  # the lines of a value still open
        self.start = 0
        self.depth = 0
        self.size = 0
        self.cut = False  # a string ended with its line: the decoder will say what is wrong

    def _fail(self, number: int, why: str) -> CaptureError:
        return CaptureError(f"{self.name}:{number}: {why}")

    def _open(self, number: int, text: str) -> None:
        if not self.parts:
            self.start, self.depth, self.size, self.cut = number, 0, 0, False
        self.parts.append(text)
        self.size += len(text)
        if self.size > VALUE_LIMIT:
            raise self._fail(self.start, f"a JSON value starts here and passes {_mib(VALUE_LIMIT)}: "
                             "no cfdot record is that long")
        bare = _STRING.sub("", text) if '"' in text else text
        if '"' in bare:  # a string its line does not close
            self.cut = True
        self.depth += bare.count("{") + bare.count("[") - bare.count("}") - bare.count("]")

    def feed(self, number: int, text: str) -> Iterator[Value]:
        pos = 0
        after_value = False
        if self.parts:
            self._open(number, text)
            if self.depth > 0 and not self.cut:
                return
            joined = "".join(self.parts)
            try:
                data, end = _DECODER.raw_decode(joined)
            except json.JSONDecodeError as exc:
                if _incomplete(exc, joined):
                    return
                raise self._fail(self.start + joined.count("\n", 0, exc.pos),
                                 f"not JSON ({exc.msg})") from None
            except RecursionError:
                raise self._fail(self.start, _DEEP) from None
            self.parts = []
            pos = len(text) - (len(joined) - end)
            if pos < 0:  # the value closed on an earlier line: what follows it is not JSON
                raise self._fail(self.start + joined.count("\n", 0, end), "not JSON after a value")
            yield Value(self.start, data, "\\u" in joined[:end])
            after_value = True
            if self.array:
                self.after = "value"
        while True:
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if pos == len(text):
                return
            ch = text[pos]
            if self.array:
                if self.after == "value":
                    if ch not in ",]":
                        raise self._fail(number, f"expected ',' or ']' in the array that opens on "
                                         f"line {self.array}")
                    self.after = "comma"
                    if ch == "]":
                        self.array, self.after = 0, ""
                    pos += 1
                    continue
                if ch == "]" and self.after == "":
                    self.array = 0
                    pos += 1
                    continue
            elif ch == "[":
                rest = text[pos + 1:].lstrip()
                if not rest or rest[0] in _ARRAY_NEXT:
                    self.array, self.after = number, ""
                    pos += 1
                    after_value = True
                    continue
                ch = ""  # a prompt in brackets: not JSON
            if not self.array and ch not in ('{', '"'):
                try:
                    _DECODER.raw_decode(text.rstrip(), pos)  # a bare scalar is a value too
                except (json.JSONDecodeError, RecursionError):
                    if after_value:
                        raise self._fail(number, "not JSON after a value") from None
                    # A prompt, cfdot's deprecation notice: outside every value, skipped.
                    shown = text.strip()
                    shown = shown if len(shown) <= 80 else shown[:77] + "..."
                    self.warnings.append(f"{self.name}:{number}: skipped, not JSON: {shown}")
                    return
            try:
                data, end = _DECODER.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                if _incomplete(exc, text):
                    self._open(number, text[pos:])
                    return
                raise self._fail(number, f"not JSON ({exc.msg})") from None
            except RecursionError:
                raise self._fail(number, _DEEP) from None
            yield Value(number, data, "\\u" in text[pos:end])
            pos, after_value = end, True
            if self.array:
                self.after = "value"

    def finish(self) -> None:
        if self.parts:
            joined = "".join(self.parts)
            try:
                _DECODER.raw_decode(joined)
                expected = "more"
            except json.JSONDecodeError as exc:
                expected = exc.msg
            except RecursionError:
                expected = "its end"
            raise self._fail(self.start, f"a JSON value starts here and does not end ({expected} at "
                             "the end of the file): cut short? Capture or paste it whole")
        if self.array:
            raise self._fail(self.array, "the array that opens here does not end (expected ']' at "
                             "the end of the file): cut short? Capture or paste it whole")
