"""A port of the accept/reject logic of Go's ``net/url.Parse`` (auction.md 3, bbs.md 1.2).

Diego's rep answers ``MatchRootFS`` false when ``url.Parse(rootfs)`` errs, and the BBS
rejects a desired LRP or task whose rootfs ``url.Parse`` rejects ("Invalid field:
rootfs"). To agree with Go on every rootfs string this module ports, from the Go
sources of **go1.27.3** (``src/net/url/url.go`` and the part of ``src/net/netip`` that
``parseHost`` calls), everything ``Parse`` does to decide accept/reject and to produce
the scheme, opaque, userinfo, host, path, query and fragment:

* ``Parse``: cut the fragment at the first ``#``; parse the rest; unescape the fragment.
* ``parse`` (``viaRequest=false``): control bytes (``< 0x20`` or ``0x7f``) are rejected
  in the part before ``#`` only, so they are *accepted* inside a fragment; ``*`` alone is
  a path; ``getScheme``; scheme lower-casing; the ``?`` split with ``ForceQuery``; the
  opaque form; "first path segment in URL cannot contain colon"; the ``//`` authority.
* ``parseAuthority`` (userinfo at the last ``@``, ``validUserinfo``), ``parseHost`` with
  the go1.25.2+/go1.26+ rules (see ``_parse_host``), ``validOptionalPort``, ``unescape``
  with the host/zone character rules of ``shouldEscape``, ``setPath``, ``setFragment``.

One GODEBUG matters: ``urlstrictcolons`` (go1.26+) rejects a second colon in an
``http``/``https`` host. Go turns it on only for a main module whose go.mod declares
go >= 1.26; ``strict_colons=True`` (the default here, the newest behaviour) is that, and
``strict_colons=False`` is ``GODEBUG=urlstrictcolons=0``, which is what Diego's own
binaries get (their go.mod declares go 1.23). Rootfs schemes such as ``docker`` and
``preloaded`` are never affected. The bracket rules of go1.25.2 have no GODEBUG.

Go works on bytes; so does this port, on the UTF-8 encoding of the Python ``str``: a
byte ``>= 0x80`` is allowed unescaped in a host, exactly as in Go. Unescaped values
(``%ff`` in a path, say) may not be UTF-8; they are decoded with ``surrogateescape`` so
that ``value.encode("utf-8", "surrogateescape")`` gives Go's bytes back. A ``str`` with a
lone surrogate has no UTF-8 encoding and so no Go counterpart: it fails to parse.

Error messages follow Go's text (``parse "docker://registry:abc/image": invalid port
":abc" after host``), including ``strconv.Quote``'s escaping.

This is a port written from reading Go's code, not a copy of its text; each function
names the Go function it ports.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

GO_VERSION = "go1.27.3"
"""The Go release whose ``net/url`` this module ports."""

# Encoding modes (Go: the ``encoding`` constants of net/url).
_PATH = 1
_PATH_SEGMENT = 2
_HOST = 3
_ZONE = 4
_USER_PASSWORD = 5
_QUERY_COMPONENT = 6
_FRAGMENT = 7

_HEX = frozenset(b"0123456789abcdefABCDEF")
_CTL = re.compile(rb"[\x00-\x1f\x7f]")
_ESCAPED = re.compile(rb"%([0-9A-Fa-f]{2})")
_ESCAPED_OR_PLUS = re.compile(rb"%([0-9A-Fa-f]{2})|\+")


class URLError(ValueError):
    """Go's ``*url.Error``: ``Op``, ``URL`` and the wrapped error's text.

    ``str(error)`` is Go's ``Error()``: ``parse "<url>": <err>``.
    """

    def __init__(self, op: str, url: str, err: str) -> None:
        self.op = op
        self.url = url
        self.err = err
        super().__init__(f"{op} {go_quote(url)}: {err}")


@dataclass(frozen=True, slots=True)
class GoUserinfo:
    """Go's ``url.Userinfo`` (unescaped username and password)."""

    username: str
    password: str = ""
    password_set: bool = False


@dataclass(frozen=True, slots=True)
class GoURL:
    """The fields of Go's ``url.URL`` that ``Parse`` fills (RawPath/RawFragment/OmitHost left out).

    ``opaque`` and ``raw_query`` are as written; ``host``, ``path``, ``fragment`` and the
    userinfo are unescaped (non-UTF-8 bytes as ``surrogateescape`` code points).
    """

    scheme: str = ""
    opaque: str = ""
    user: GoUserinfo | None = None
    host: str = ""
    path: str = ""
    raw_query: str = ""
    force_query: bool = False
    fragment: str = ""


class _Fail(Exception):
    """An error inside the parser; ``Parse`` wraps its text in a :class:`URLError`."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


def _s(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


# --- strconv.Quote ---------------------------------------------------------------------

_QUOTE_NAMED = {
    0x07: "\\a",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
    0x0B: "\\v",
}


def go_quote(s: str | bytes) -> str:
    """Port of ``strconv.Quote`` (``appendQuotedWith``/``appendEscapedRune``).

    Printable runes stay as they are (Python's ``str.isprintable`` is the same rule as
    Go's ``unicode.IsPrint``: categories L, M, N, P, S and the ASCII space; the two may
    differ on code points new in a later Unicode version than Python's); bytes that
    are not valid UTF-8 become ``\\xNN``. A ``str`` is taken as its ``surrogateescape``
    bytes; other lone surrogates are quoted as the three bytes Go would see.
    """
    if isinstance(s, str):
        try:
            raw = s.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = s.encode("utf-8", "surrogatepass")
    else:
        raw = s
    out = ['"']
    for ch in raw.decode("utf-8", "surrogateescape"):
        r = ord(ch)
        if 0xDC80 <= r <= 0xDCFF:  # an undecodable byte
            out.append(f"\\x{r - 0xDC00:02x}")
        elif ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif r in _QUOTE_NAMED:
            out.append(_QUOTE_NAMED[r])
        elif r < 0x20 or r == 0x7F:
            out.append(f"\\x{r:02x}")
        elif r < 0x10000:
            out.append(f"\\u{r:04x}")
        else:
            out.append(f"\\U{r:08x}")
    out.append('"')
    return "".join(out)


# --- escaping rules -------------------------------------------------------------------


def _should_escape(c: int, mode: int) -> bool:
    """Port of ``shouldEscape`` (the rule behind go1.27's generated ``encoding_table``)."""
    if 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A or 0x30 <= c <= 0x39:  # alphanumerics
        return False
    if mode in (_HOST, _ZONE) and c in b"!$&'()*+,;=:[]<>\"":
        # RFC 3986 3.2.2 sub-delims, plus ':' (port), '[' ']' (IPv6), '<' '>' '"'.
        return False
    if c in b"-_.~":  # unreserved marks
        return False
    if c in b"$&+,/:;=?@":  # reserved: allowed unescaped in some components
        if mode == _PATH:
            return c == 0x3F
        if mode == _PATH_SEGMENT:
            return c in b"/;,?"
        if mode == _USER_PASSWORD:
            return c in b"@/?:"
        if mode == _QUERY_COMPONENT:
            return True
        if mode == _FRAGMENT:
            return False
    if mode == _FRAGMENT and c in b"!()*":
        return False
    return True


_HOST_RAW_OK = frozenset(c for c in range(0x80) if not _should_escape(c, _HOST))
_ZONE_RAW_OK = frozenset(c for c in range(0x80) if not _should_escape(c, _ZONE))


def _unhex(c: int) -> int:
    """Port of ``unhex`` (precondition: ``c`` is a hex digit)."""
    if c <= 0x39:
        return c - 0x30
    return (c | 0x20) - 0x61 + 10


def _escape_error(s: bytes) -> _Fail:
    return _Fail("invalid URL escape " + go_quote(s))


def _unescape(s: bytes, mode: int) -> bytes:
    """Port of ``unescape``: validate every ``%XX`` (and, in a host or zone, every raw byte), then decode."""
    host_like = mode == _HOST or mode == _ZONE
    if not host_like and 0x25 not in s and (mode != _QUERY_COMPONENT or 0x2B not in s):
        return s  # nothing to check, nothing to decode
    raw_ok = _HOST_RAW_OK if mode == _HOST else _ZONE_RAW_OK
    n = 0
    i = 0
    ln = len(s)
    while i < ln:
        c = s[i]
        if c == 0x25:  # '%'
            n += 1
            if i + 2 >= ln or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise _escape_error(s[i : i + 3])
            # RFC 3986: a host %-encodes only non-ASCII bytes; RFC 6874 adds "%25".
            if mode == _HOST and _unhex(s[i + 1]) < 8 and s[i : i + 3] != b"%25":
                raise _escape_error(s[i : i + 3])
            if mode == _ZONE:
                # A zone may escape only what a host may hold raw (and, for Windows, ' ').
                v = _unhex(s[i + 1]) << 4 | _unhex(s[i + 2])
                if s[i : i + 3] != b"%25" and v != 0x20 and _should_escape(v, _HOST):
                    raise _escape_error(s[i : i + 3])
            i += 3
        else:
            if host_like and c < 0x80 and c not in raw_ok:
                raise _Fail("invalid character " + go_quote(s[i : i + 1]) + " in host name")
            i += 1
    if mode == _QUERY_COMPONENT:
        return _ESCAPED_OR_PLUS.sub(lambda m: bytes.fromhex(m[1].decode()) if m[1] else b" ", s)
    if n == 0:
        return s
    return _ESCAPED.sub(lambda m: bytes.fromhex(m[1].decode()), s)


# --- net/netip.ParseAddr (only what parseHost needs: accept/reject and Is4) --------------


def _addr_error(inp: bytes, msg: str, at: bytes = b"") -> _Fail:
    """Port of ``netip.parseAddrError.Error``."""
    text = f"ParseAddr({go_quote(inp)}): {msg}"
    if at:
        text += f" (at {go_quote(at)})"
    return _Fail(text)


def _parse_ipv4_fields(inp: bytes, off: int, end: int) -> None:
    """Port of ``netip.parseIPv4Fields`` (dotted decimal, no leading zeros, each <= 255)."""
    s = inp[off:end]
    val = pos = dig_len = 0
    for i, c in enumerate(s):
        if 0x30 <= c <= 0x39:
            if dig_len == 1 and val == 0:
                raise _addr_error(inp, "IPv4 field has octet with leading zero")
            val = val * 10 + c - 0x30
            dig_len += 1
            if val > 255:
                raise _addr_error(inp, "IPv4 field has value >255")
        elif c == 0x2E:
            if i == 0 or i == len(s) - 1 or s[i - 1] == 0x2E:
                raise _addr_error(inp, "IPv4 field must have at least one digit", s[i:])
            if pos == 3:
                raise _addr_error(inp, "IPv4 address too long")
            pos += 1
            val = dig_len = 0
        else:
            raise _addr_error(inp, "unexpected character", s[i:])
    if pos < 3:
        raise _addr_error(inp, "IPv4 address too short")


def _parse_ipv6(inp: bytes) -> None:
    """Port of ``netip.parseIPv6`` (with an optional non-empty ``%zone``)."""
    s = inp
    zone = b""
    k = s.find(b"%")
    if k != -1:
        s, zone = s[:k], s[k + 1 :]
        if not zone:
            raise _addr_error(inp, "zone must be a non-empty string")
    ellipsis = -1
    if len(s) >= 2 and s[0] == 0x3A and s[1] == 0x3A:
        ellipsis = 0
        s = s[2:]
        if not s:
            return  # "::"
    i = 0
    while i < 16:
        off = 0
        acc = 0
        while off < len(s):
            c = s[off]
            if c not in _HEX:
                break
            acc = (acc << 4) + _unhex(c)
            if off > 3:
                raise _addr_error(inp, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(inp, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(inp, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == 0x2E:  # an embedded IPv4 tail
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    inp, "embedded IPv4 address must replace the final 2 fields of the address", s
                )
            if i + 4 > 16:
                raise _addr_error(
                    inp, "too many hex fields to fit an embedded IPv4 at the end of the address", s
                )
            end = len(inp)
            if zone:
                end -= len(zone) + 1
            _parse_ipv4_fields(inp, end - len(s), end)
            s = b""
            i += 4
            break
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != 0x3A:
            raise _addr_error(inp, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(inp, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == 0x3A:
            if ellipsis >= 0:
                raise _addr_error(inp, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(inp, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(inp, "address string too short")
    elif ellipsis >= 0:
        raise _addr_error(inp, "the :: must expand to at least one field of zeros")


def _parse_addr_is4(s: bytes) -> bool:
    """Port of ``netip.ParseAddr``; returns ``Addr.Is4()`` or raises."""
    for c in s:
        if c == 0x2E:
            _parse_ipv4_fields(s, 0, len(s))
            return True
        if c == 0x3A:
            _parse_ipv6(s)
            return False
        if c == 0x25:
            raise _addr_error(s, "missing IPv6 address")
    raise _addr_error(s, "unable to parse IP")


# --- net/url.Parse ----------------------------------------------------------------------


def _valid_optional_port(port: bytes) -> bool:
    """Port of ``validOptionalPort``: empty, or ``:`` then only ASCII digits (no range check)."""
    if not port:
        return True
    return port[0] == 0x3A and all(0x30 <= b <= 0x39 for b in port[1:])


_USERINFO_OK = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._:~!$&'()*+,;=%@"
)


def _valid_userinfo(s: bytes) -> bool:
    """Port of ``validUserinfo`` (any non-ASCII rune fails, so any byte >= 0x80 does)."""
    return all(c in _USERINFO_OK for c in s)


def _invalid_port(colon_port: bytes) -> _Fail:
    return _Fail(f"invalid port {go_quote(colon_port)} after host")


def _parse_host(scheme: bytes, host: bytes, strict_colons: bool) -> bytes:
    """Port of go1.27's ``parseHost(scheme, host)``: ``host[:port]`` without userinfo.

    Newer than go1.25.2/go1.24.8 (CVE-2025-47912): a ``[`` anywhere but first is
    "invalid IP-literal", and the bracketed part must be an IPv6 address by
    ``netip.ParseAddr`` (optionally with an RFC 6874 ``%25`` zone; IPv4 and
    IPv4-in-brackets are rejected, IPv4-mapped IPv6 is not). Newer than go1.26
    (GODEBUG ``urlstrictcolons``, on for a main module declaring go >= 1.26): outside
    brackets an ``http``/``https`` host takes its port after the *first* colon (so
    ``http://a:1:2`` fails); every other scheme keeps the old last-colon rule
    (go.dev/issue/78077: comma-separated host lists such as ``mongodb://h1:1,h2:2``).
    ``strict_colons=False`` is ``GODEBUG=urlstrictcolons=0``, the default of a module
    declaring an older go (Diego's go.mod says go 1.23).
    """
    open_idx = host.rfind(b"[")
    if open_idx > 0:
        raise _Fail("invalid IP-literal")
    if open_idx == 0:
        close_idx = host.rfind(b"]")
        if close_idx < 0:
            raise _Fail("missing ']' in host")
        colon_port = host[close_idx + 1 :]
        if not _valid_optional_port(colon_port):
            raise _invalid_port(colon_port)
        colon_port = _unescape(colon_port, _HOST)
        hostname = host[1:close_idx]
        # RFC 6874: "%25" starts the zone, which may %-encode more than a host may.
        zone_idx = hostname.find(b"%25")
        if zone_idx >= 0:
            unescaped = _unescape(hostname[:zone_idx], _HOST) + _unescape(
                hostname[zone_idx:], _ZONE
            )
        else:
            unescaped = _unescape(hostname, _HOST)
        try:
            is4 = _parse_addr_is4(unescaped)
        except _Fail as e:
            raise _Fail("invalid host: " + e.msg) from None
        if is4:
            raise _Fail("invalid IP-literal")
        return b"[" + unescaped + b"]" + colon_port
    i = host.find(b":")
    if i != -1:
        last = host.rfind(b":")
        if last != i and (not strict_colons or scheme not in (b"http", b"https")):
            i = last  # only http(s), and only under urlstrictcolons, take the first colon
        colon_port = host[i:]
        if not _valid_optional_port(colon_port):
            raise _invalid_port(colon_port)
    return _unescape(host, _HOST)


def _parse_authority(
    scheme: bytes, authority: bytes, strict_colons: bool
) -> tuple[GoUserinfo | None, bytes]:
    """Port of ``parseAuthority``: userinfo ends at the *last* ``@``."""
    i = authority.rfind(b"@")
    host = _parse_host(scheme, authority[i + 1 :] if i >= 0 else authority, strict_colons)
    if i < 0:
        return None, host
    userinfo = authority[:i]
    if not _valid_userinfo(userinfo):
        raise _Fail("net/url: invalid userinfo")
    if 0x3A not in userinfo:
        return GoUserinfo(_s(_unescape(userinfo, _USER_PASSWORD))), host
    username, _, password = userinfo.partition(b":")
    user = GoUserinfo(
        _s(_unescape(username, _USER_PASSWORD)), _s(_unescape(password, _USER_PASSWORD)), True
    )
    return user, host


def _get_scheme(raw: bytes) -> tuple[bytes, bytes]:
    """Port of ``getScheme``: ``[A-Za-z][A-Za-z0-9+.-]*`` before the first ``:``."""
    for i, c in enumerate(raw):
        if 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A:
            continue
        if 0x30 <= c <= 0x39 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == 0x3A:
            if i == 0:
                raise _Fail("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw  # a non-scheme byte before any ':': no scheme
    return b"", raw


def _parse(raw: bytes, strict_colons: bool) -> GoURL:
    """Port of ``parse(rawURL, viaRequest=false)`` (the part of the URL before ``#``)."""
    if _CTL.search(raw):
        raise _Fail("net/url: invalid control character in URL")
    if raw == b"*":
        return GoURL(path="*")
    scheme, rest = _get_scheme(raw)
    scheme = scheme.lower()
    force_query = False
    raw_query = b""
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        force_query = True
        rest = rest[:-1]
    else:
        rest, _, raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if scheme:
            # RFC 3986 rootless path: opaque, nothing more is checked.
            return GoURL(
                scheme=_s(scheme), opaque=_s(rest), raw_query=_s(raw_query), force_query=force_query
            )
        # RFC 3986 3.3: a relative-path reference's first segment has no ':'.
        if 0x3A in rest.partition(b"/")[0]:
            raise _Fail("first path segment in URL cannot contain colon")
    user: GoUserinfo | None = None
    host = b""
    if (scheme or not rest.startswith(b"///")) and rest.startswith(b"//"):
        authority, slash, tail = rest[2:].partition(b"/")
        rest = slash + tail
        user, host = _parse_authority(scheme, authority, strict_colons)
    path = _unescape(rest, _PATH)  # setPath
    return GoURL(
        scheme=_s(scheme), user=user, host=_s(host), path=_s(path),
        raw_query=_s(raw_query), force_query=force_query,
    )  # fmt: skip


def parse_bytes(raw: bytes, *, strict_colons: bool = True) -> GoURL:
    """Port of ``url.Parse`` on a Go string given as bytes (which need not be UTF-8).

    ``strict_colons`` is GODEBUG ``urlstrictcolons`` (see ``_parse_host``).
    """
    head, _, frag = raw.partition(b"#")
    try:
        url = _parse(head, strict_colons)
    except _Fail as e:
        raise URLError("parse", _s(head), e.msg) from None
    if not frag:
        return url
    try:
        fragment = _unescape(frag, _FRAGMENT)  # setFragment
    except _Fail as e:
        raise URLError("parse", _s(raw), e.msg) from None
    return GoURL(
        scheme=url.scheme, opaque=url.opaque, user=url.user, host=url.host, path=url.path,
        raw_query=url.raw_query, force_query=url.force_query, fragment=_s(fragment),
    )  # fmt: skip


def parse(raw: str, *, strict_colons: bool = True) -> GoURL:
    """``url.Parse(raw)`` on the UTF-8 encoding of ``raw``; raises :class:`URLError`.

    A string with a lone surrogate (no UTF-8 encoding, so no Go string) is rejected.
    """
    try:
        data = raw.encode("utf-8")
    except UnicodeEncodeError:
        raise URLError(
            "parse", raw, "string has a lone surrogate, which has no UTF-8 encoding (Python port)"
        ) from None
    return parse_bytes(data, strict_colons=strict_colons)


@functools.lru_cache(maxsize=4096)
def parses(raw: str, *, strict_colons: bool = True) -> bool:
    """Whether Go's ``url.Parse(raw)`` succeeds (cached: called per distinct rootfs)."""
    try:
        parse(raw, strict_colons=strict_colons)
    except URLError:
        return False
    return True
