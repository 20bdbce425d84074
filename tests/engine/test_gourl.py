"""The port of Go's ``net/url.Parse`` that decides whether a rootfs is a URL (auction.md 3, bbs.md 1.2).

auction.md 3: the rep's ``MatchRootFS`` answers false when ``url.Parse(rootfs)`` errs.
bbs.md 1.2: the BBS rejects a desired LRP or task whose rootfs ``url.Parse`` rejects
("Invalid field: rootfs"). The tables below are translated, as data, from Go's own
``src/net/url/url_test.go`` (go1.27.3); ``data/go_url_vectors.json`` holds the answers of
the real Go binary for all of them and for a few thousand random rootfs-like strings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auction.engine.gourl import (
    GO_VERSION,
    GoURL,
    GoUserinfo,
    URLError,
    go_quote,
    parse,
    parse_bytes,
    parses,
)

VECTORS = Path(__file__).resolve().parent / "data" / "go_url_vectors.json"


def U(**fields) -> GoURL:  # noqa: N802 - reads like Go's &URL{...} literals
    return GoURL(**fields)


# --- the rootfs cases of auction.md 3 / bbs.md 1.2 --------------------------------------

ROOTFS_REJECTED = [
    ("docker://registry:abc/image", 'parse "docker://registry:abc/image": invalid port ":abc" after host'),
    ("docker:///library/%zz", 'parse "docker:///library/%zz": invalid URL escape "%zz"'),
    ("docker:///library/%4", 'parse "docker:///library/%4": invalid URL escape "%4"'),
    ("docker:///library/%", 'parse "docker:///library/%": invalid URL escape "%"'),
    ("docker://h/x#%zz", 'parse "docker://h/x#%zz": invalid URL escape "%zz"'),
    ("docker://[::1/img", "parse \"docker://[::1/img\": missing ']' in host"),
    ("docker://ho st/x", 'parse "docker://ho st/x": invalid character " " in host name'),
    ("docker:\x7f", 'parse "docker:\\x7f": net/url: invalid control character in URL'),
    ("docker:///a\x00b", 'parse "docker:///a\\x00b": net/url: invalid control character in URL'),
    ("%41:x", 'parse "%41:x": first path segment in URL cannot contain colon'),
    (":foo", 'parse ":foo": missing protocol scheme'),
    ("1abc:cflinuxfs4", 'parse "1abc:cflinuxfs4": first path segment in URL cannot contain colon'),
    ("docker://%41/x", 'parse "docker://%41/x": invalid URL escape "%41"'),
    ("docker://u^@h/x", 'parse "docker://u^@h/x": net/url: invalid userinfo'),
    ("docker://reg[1]/x", 'parse "docker://reg[1]/x": invalid IP-literal'),
    ("docker://[1.2.3.4]/x", 'parse "docker://[1.2.3.4]/x": invalid IP-literal'),
    (
        "docker://[reg]/x",
        'parse "docker://[reg]/x": invalid host: ParseAddr("reg"): unable to parse IP',
    ),
]

ROOTFS_ACCEPTED = [
    ("docker://reg:5000/img", U(scheme="docker", host="reg:5000", path="/img")),
    ("DOCKER:///x", U(scheme="docker", path="/x")),
    ("Preloaded:cflinuxfs4", U(scheme="preloaded", opaque="cflinuxfs4")),
    ("preloaded:cflinuxfs4#frag", U(scheme="preloaded", opaque="cflinuxfs4", fragment="frag")),
    (
        "preloaded+layer:cflinuxfs4?layer=x",
        U(scheme="preloaded+layer", opaque="cflinuxfs4", raw_query="layer=x"),
    ),
    ("preloaded:///x", U(scheme="preloaded", path="/x")),
    ("docker:///library/nginx", U(scheme="docker", path="/library/nginx")),
    ("docker://docker.io/library/nginx:1.25", U(scheme="docker", host="docker.io", path="/library/nginx:1.25")),
    ("cflinuxfs4", U(path="cflinuxfs4")),
    ("", U()),  # empty parses with viaRequest=false
    # validOptionalPort checks digits only, never the range: Go accepts this.
    ("docker://h:99999999999/x", U(scheme="docker", host="h:99999999999", path="/x")),
    # Control bytes are checked only before '#': Go accepts them in the fragment.
    ("docker://h/x#a\x00b\x7f", U(scheme="docker", host="h", path="/x", fragment="a\x00b\x7f")),
    ("docker://h/x#a%20b", U(scheme="docker", host="h", path="/x", fragment="a b")),
    ("docker://h/x#", U(scheme="docker", host="h", path="/x")),
    ("docker:///x?", U(scheme="docker", path="/x", force_query=True)),
    ("docker:///x??", U(scheme="docker", path="/x", raw_query="?")),
    ("preloaded:?", U(scheme="preloaded", force_query=True)),
    # Only http/https get go1.26's strict first-colon rule; other schemes keep the last colon.
    ("docker://a:1:2/x", U(scheme="docker", host="a:1:2", path="/x")),
    ("docker://[::1]:5000/x", U(scheme="docker", host="[::1]:5000", path="/x")),
    ("docker://reg.é/x", U(scheme="docker", host="reg.é", path="/x")),  # raw non-ASCII in a host
    ("docker://reg.%C3%A9/x", U(scheme="docker", host="reg.é", path="/x")),
    ("docker:///%ff", U(scheme="docker", path="/\udcff")),  # non-UTF-8 byte: surrogateescape
    ("*", U(path="*")),
    ("oci:cflinuxfs4:latest", U(scheme="oci", opaque="cflinuxfs4:latest")),
    ("docker://user:p@ss@h/x", U(scheme="docker", user=GoUserinfo("user", "p@ss", True), host="h", path="/x")),
]


@pytest.mark.parametrize("raw,message", ROOTFS_REJECTED)
def test_rootfs_rejected_like_go_auction_md_3_bbs_md_1_2(raw, message):
    """auction.md 3 / bbs.md 1.2: these rootfs strings fail Go's url.Parse, with Go's error text."""
    with pytest.raises(URLError) as err:
        parse(raw)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)
    assert err.value.op == "parse"
    assert parses(raw) is False


@pytest.mark.parametrize("raw,expected", ROOTFS_ACCEPTED)
def test_rootfs_accepted_like_go_auction_md_3_bbs_md_1_2(raw, expected):
    """auction.md 3 / bbs.md 1.2: these parse, with Go's Scheme, Opaque, Host, Path, query, fragment."""
    assert parse(raw) == expected
    assert parses(raw) is True


def test_error_url_is_the_part_before_the_fragment_bbs_md_1_2():
    """bbs.md 1.2: Go names the pre-'#' string for a parse error, the whole string for a fragment error."""
    with pytest.raises(URLError) as err:
        parse("docker://x:y/z#frag")
    assert err.value.url == "docker://x:y/z"
    with pytest.raises(URLError) as err:
        parse("docker://x/z#%zz")
    assert err.value.url == "docker://x/z#%zz"


# --- Go's url_test.go: urltests (every input that parses) -------------------------------

GO_URLTESTS = [
    ("http://www.google.com", U(scheme="http", host="www.google.com")),
    ("http://www.google.com/", U(scheme="http", host="www.google.com", path="/")),
    ("http://www.google.com/file%20one%26two", U(scheme="http", host="www.google.com", path="/file one&two")),
    ("http://www.google.com/#file%20one%26two", U(scheme="http", host="www.google.com", path="/", fragment="file one&two")),
    ("ftp://webmaster@www.google.com/", U(scheme="ftp", user=GoUserinfo("webmaster"), host="www.google.com", path="/")),
    ("ftp://john%20doe@www.google.com/", U(scheme="ftp", user=GoUserinfo("john doe"), host="www.google.com", path="/")),
    ("http://www.google.com/?", U(scheme="http", host="www.google.com", path="/", force_query=True)),
    ("http://www.google.com/?foo=bar?", U(scheme="http", host="www.google.com", path="/", raw_query="foo=bar?")),
    ("http://www.google.com/?q=go+language", U(scheme="http", host="www.google.com", path="/", raw_query="q=go+language")),
    ("http://www.google.com/?q=go%20language", U(scheme="http", host="www.google.com", path="/", raw_query="q=go%20language")),
    ("http://www.google.com/a%20b?q=c+d", U(scheme="http", host="www.google.com", path="/a b", raw_query="q=c+d")),
    ("http:www.google.com/?q=go+language", U(scheme="http", opaque="www.google.com/", raw_query="q=go+language")),
    ("http:%2f%2fwww.google.com/?q=go+language", U(scheme="http", opaque="%2f%2fwww.google.com/", raw_query="q=go+language")),
    ("mailto:/webmaster@golang.org", U(scheme="mailto", path="/webmaster@golang.org")),
    ("mailto:webmaster@golang.org", U(scheme="mailto", opaque="webmaster@golang.org")),
    ("/foo?query=http://bad", U(path="/foo", raw_query="query=http://bad")),
    ("//foo", U(host="foo")),
    ("//user@foo/path?a=b", U(user=GoUserinfo("user"), host="foo", path="/path", raw_query="a=b")),
    ("///threeslashes", U(path="///threeslashes")),
    ("http://user:password@google.com", U(scheme="http", user=GoUserinfo("user", "password", True), host="google.com")),
    ("http://j@ne:password@google.com", U(scheme="http", user=GoUserinfo("j@ne", "password", True), host="google.com")),
    ("http://jane:p@ssword@google.com", U(scheme="http", user=GoUserinfo("jane", "p@ssword", True), host="google.com")),
    (
        "http://j@ne:password@google.com/p@th?q=@go",
        U(scheme="http", user=GoUserinfo("j@ne", "password", True), host="google.com", path="/p@th", raw_query="q=@go"),
    ),
    ("http://www.google.com/?q=go+language#foo", U(scheme="http", host="www.google.com", path="/", raw_query="q=go+language", fragment="foo")),
    ("http://www.google.com/?q=go+language#foo&bar", U(scheme="http", host="www.google.com", path="/", raw_query="q=go+language", fragment="foo&bar")),
    ("http://www.google.com/?q=go+language#foo%26bar", U(scheme="http", host="www.google.com", path="/", raw_query="q=go+language", fragment="foo&bar")),
    ("file:///home/adg/rabbits", U(scheme="file", path="/home/adg/rabbits")),
    ("file:///C:/FooBar/Baz.txt", U(scheme="file", path="/C:/FooBar/Baz.txt")),
    ("MaIlTo:webmaster@golang.org", U(scheme="mailto", opaque="webmaster@golang.org")),
    ("a/b/c", U(path="a/b/c")),
    ("http://%3Fam:pa%3Fsword@google.com", U(scheme="http", user=GoUserinfo("?am", "pa?sword", True), host="google.com")),
    ("http://192.168.0.1/", U(scheme="http", host="192.168.0.1", path="/")),
    ("http://192.168.0.1:8080/", U(scheme="http", host="192.168.0.1:8080", path="/")),
    ("http://[fe80::1]/", U(scheme="http", host="[fe80::1]", path="/")),
    ("http://[fe80::1]:8080/", U(scheme="http", host="[fe80::1]:8080", path="/")),
    ("https://[2001:db8::1]:8443/test/path", U(scheme="https", host="[2001:db8::1]:8443", path="/test/path")),
    ("http://[fe80::1%25en0]/", U(scheme="http", host="[fe80::1%en0]", path="/")),
    ("http://[fe80::1%25en0]:8080/", U(scheme="http", host="[fe80::1%en0]:8080", path="/")),
    ("http://[fe80::1%25%65%6e%301-._~]/", U(scheme="http", host="[fe80::1%en01-._~]", path="/")),
    ("http://[fe80::1%25%65%6e%301-._~]:8080/", U(scheme="http", host="[fe80::1%en01-._~]:8080", path="/")),
    ("http://rest.rsc.io/foo%2fbar/baz%2Fquux?alt=media", U(scheme="http", host="rest.rsc.io", path="/foo/bar/baz/quux", raw_query="alt=media")),
    ("mysql://a,b,c/bar", U(scheme="mysql", host="a,b,c", path="/bar")),
    ("scheme://!$&'()*+,;=hello!:1/path", U(scheme="scheme", host="!$&'()*+,;=hello!:1", path="/path")),
    ("http://host/!$&'()*+,;=:@[hello]", U(scheme="http", host="host", path="/!$&'()*+,;=:@[hello]")),
    ("http://example.com/oid/[order_id]", U(scheme="http", host="example.com", path="/oid/[order_id]")),
    ("http://192.168.0.2:8080/foo", U(scheme="http", host="192.168.0.2:8080", path="/foo")),
    ("http://192.168.0.2:/foo", U(scheme="http", host="192.168.0.2:", path="/foo")),
    (
        "http://[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:8080/foo",
        U(scheme="http", host="[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:8080", path="/foo"),
    ),
    (
        "http://[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:/foo",
        U(scheme="http", host="[2b01:e34:ef40:7730:8e70:5aff:fefe:edac]:", path="/foo"),
    ),
    ("http://hello.世界.com/foo", U(scheme="http", host="hello.世界.com", path="/foo")),
    ("http://hello.%e4%b8%96%e7%95%8c.com/foo", U(scheme="http", host="hello.世界.com", path="/foo")),
    ("http://hello.%E4%B8%96%E7%95%8C.com/foo", U(scheme="http", host="hello.世界.com", path="/foo")),
    ("http://example.com//foo", U(scheme="http", host="example.com", path="//foo")),
    ('myscheme://authority<"hi">/foo', U(scheme="myscheme", host='authority<"hi">', path="/foo")),
    (
        "tcp://[2020::2020:20:2020:2020%25Windows%20Loves%20Spaces]:2020",
        U(scheme="tcp", host="[2020::2020:20:2020:2020%Windows Loves Spaces]:2020"),
    ),
    (
        "magnet:?xt=urn:btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a&dn",
        U(scheme="magnet", raw_query="xt=urn:btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a&dn"),
    ),
    ("mailto:?subject=hi", U(scheme="mailto", raw_query="subject=hi")),
    ("postgres://host1:1,host2:2,host3:3", U(scheme="postgres", host="host1:1,host2:2,host3:3")),
    ("postgresql://host1:1,host2:2,host3:3", U(scheme="postgresql", host="host1:1,host2:2,host3:3")),
    (
        "mongodb://user:password@host1:1,host2:2,host3:3",
        U(scheme="mongodb", user=GoUserinfo("user", "password", True), host="host1:1,host2:2,host3:3"),
    ),
    (
        "mongodb+srv://user:password@host1:1,host2:2,host3:3",
        U(scheme="mongodb+srv", user=GoUserinfo("user", "password", True), host="host1:1,host2:2,host3:3"),
    ),
    # stringURLTests' outputs, read back in.
    ("http://www.google.com/search", U(scheme="http", host="www.google.com", path="/search")),
    ("./this:that", U(path="./this:that")),
    ("here/this:that", U(path="here/this:that")),
    ("http://www.google.com/this:that", U(scheme="http", host="www.google.com", path="/this:that")),
    ("this:that", U(scheme="this", opaque="that")),
    # TestRejectControlCharacters: non-ASCII "control" bytes are not rejected.
    ("http://foo.com/ctl\x80", U(scheme="http", host="foo.com", path="/ctl\x80")),
]


@pytest.mark.parametrize("raw,expected", GO_URLTESTS)
def test_go_urltests_auction_md_3(raw, expected):
    """auction.md 3: Go's urltests/stringURLTests inputs parse to Go's fields."""
    assert parse(raw) == expected


# --- Go's url_test.go: TestParseErrors, TestRejectControlCharacters, ... ----------------

GO_PARSE_ERRORS = [
    ("http://[::1]", False),
    ("http://[::1]:80", False),
    ("http://[::1]:namedport", True),
    ("http://x:namedport", True),
    ("http://[::1]/", False),
    ("http://[::1]a", True),
    ("http://[::1]%23", True),
    ("http://[::1%25en0]", False),
    ("http://[::1]:", False),
    ("http://x:", False),
    ("http://[::1]:%38%30", True),
    ("http://[::1%25%41]", False),
    ("http://[%10::1]", True),
    ("http://[::1]/%48", False),
    ("http://%41:8080/", True),
    ("mysql://x@y(z:123)/foo", True),
    ("mysql://x@y(1.2.3.4:123)/foo", True),
    (" http://foo.com", True),
    ("ht tp://foo.com", True),
    ("ahttp://foo.com", False),
    ("1http://foo.com", True),
    ("http://[]%20%48%54%54%50%2f%31%2e%31%0a%4d%79%48%65%61%64%65%72%3a%20%31%32%33%0a%0a/", True),
    ("http://a b.com/", True),
    ("cache_object://foo", True),
    ("cache_object:foo", True),
    ("cache_object:foo/bar", True),
    ("cache_object/:foo/bar", False),
    ("http://[192.168.0.1]/", True),
    ("http://[192.168.0.1]:8080/", True),
    ("http://[::ffff:192.168.0.1]/", False),
    ("http://[::ffff:192.168.0.1000]/", True),
    ("http://[::ffff:192.168.0.1]:8080/", False),
    ("http://[::ffff:c0a8:1]/", False),
    ("http://[not-an-ip]/", True),
    ("http://[fe80::1%foo]/", True),
    ("http://[fe80::1", True),
    ("http://fe80::1]/", True),
    ("http://[test.com]/", True),
    ("http://example.com[::1]", True),
    ("http://example.com[::1", True),
    ("http://[::1", True),
    ("http://.[::1]", True),
    ("http:// [::1]", True),
    ("hxxp://mathepqo[.]serveftp(.)com:9059", True),
    # TestRejectControlCharacters
    ("http://foo.com/?foo\nbar", True),
    ("http\r://foo.com/", True),
    ("http://foo\x7f.com/", True),
    # TestInvalidUserPassword
    ("http://user^:passwo^rd@foo.com/", True),
]

# parseRequestURLTests, with the answer of Parse (viaRequest=false), not ParseRequestURI:
# relative references ("foo.html", "../dir/") parse, and "//x@%66%6f%6f.com/..." is an
# authority for Parse, whose host may not %-encode ASCII.
GO_REQUEST_URL_TESTS_VIA_PARSE = [
    ("http://foo.com", True),
    ("http://foo.com/", True),
    ("http://foo.com/path", True),
    ("/", True),
    ("//not.a.user@not.a.host/just/a/path", True),
    ("//not.a.user@%66%6f%6f.com/just/a/path/also", False),
    ("*", True),
    ("http://192.168.0.1/", True),
    ("http://192.168.0.1:8080/", True),
    ("http://[fe80::1]/", True),
    ("http://[fe80::1]:8080/", True),
    ("http://[fe80::1%25en0]/", True),
    ("http://[fe80::1%25en0]:8080/", True),
    ("http://[fe80::1%25%65%6e%301-._~]/", True),
    ("http://[fe80::1%25%65%6e%301-._~]:8080/", True),
    ("foo.html", True),
    ("../dir/", True),
    (" http://foo.com", False),
    ("http://192.168.0.%31/", False),
    ("http://192.168.0.%31:8080/", False),
    ("http://[fe80::%31]/", False),
    ("http://[fe80::%31]:8080/", False),
    ("http://[fe80::%31%25en0]/", False),
    ("http://[fe80::%31%25en0]:8080/", False),
    ("http://[fe80::1%en0]/", False),
    ("http://[fe80::1%en0]:8080/", False),
    ("https://[1:2:3:4:5:6:7:8]", True),
    ("https://[2001:db8::a:b:c:d]", True),
    ("https://[fe80::1%25eth0]", True),
    ("https://[fe80::abc:def%254]", True),
    ("https://[2001:db8::1]/path", True),
    ("https://[fe80::1%25eth0]/path?query=1", True),
    ("https://[::ffff:192.0.2.1]", True),
    ("https://[:1] ", False),
    ("https://[1:2:3:4:5:6:7:8:9]", False),
    ("https://[1::1::1]", False),
    ("https://[1:2:3:]", False),
    ("https://[ffff::127.0.0.4000]", False),
    ("https://[0:0::test.com]:80", False),
    ("https://[2001:db8::test.com]", False),
    ("https://[test.com]", False),
    # TestParseStrictIpv6 shows these parse only with GODEBUG=urlstrictcolons=0.
    ("https://1:2:3:4:5:6:7:8", False),
    ("https://1:2:3:4:5:6:7:8:80", False),
    ("https://example.com:80:", False),
]

# More IPv6 literals, through netip.ParseAddr's branches.
IPV6_LITERALS = [
    ("docker://[::]/x", True),
    ("docker://[::%25z]/x", True),
    ("docker://[::1%25]/x", False),  # empty zone
    ("docker://[%25en0]/x", False),  # zone without address
    ("docker://[1:2:3:4:5:6:7::]/x", True),
    ("docker://[1:2:3:4:5:6:7:8::]/x", False),  # :: must stand for at least one group
    ("docker://[::1:2:3:4:5:6:7:8]/x", False),
    ("docker://[12345::1]/x", False),
    ("docker://[::1.2.3.4]/x", True),
    ("docker://[1:2:3:4:5:6:1.2.3.4]/x", True),
    ("docker://[1:2:3:4:5:1.2.3.4]/x", False),
    ("docker://[::01.2.3.4]/x", False),  # leading zero in an IPv4 octet
    ("docker://[::1.2.3]/x", False),
    ("docker://[::1.2.3.4.5]/x", False),
    ("docker://[::1..3.4]/x", False),
    ("docker://[:::1]/x", False),
    ("docker://[1:]/x", False),
    ("docker://[::g]/x", False),
    ("docker://[::1%25%20x]/x", True),  # a Windows space in the zone
    ("docker://[::1%25%0a]/x", False),  # a newline may not be escaped into the zone
    ("docker://[::1%25a%25b]/x", True),
    ("docker://[::1%25a b]/x", False),
    ("docker://[::1]:/x", True),
    ("docker://[::1]]/x", False),
    ("docker://[::1]x]/x", False),
    ("docker://[::%c3%a91]/x", False),
]

ALL_VALIDITY_CASES = GO_PARSE_ERRORS + GO_REQUEST_URL_TESTS_VIA_PARSE + IPV6_LITERALS


@pytest.mark.parametrize("raw,want_err", GO_PARSE_ERRORS)
def test_go_parse_errors_table_bbs_md_1_2(raw, want_err):
    """bbs.md 1.2: Go's TestParseErrors (and control-character, userinfo) verdicts."""
    assert parses(raw) is (not want_err)


@pytest.mark.parametrize("raw,valid", GO_REQUEST_URL_TESTS_VIA_PARSE)
def test_go_request_url_table_through_parse_bbs_md_1_2(raw, valid):
    """bbs.md 1.2: Go's parseRequestURLTests inputs, as url.Parse (viaRequest=false) judges them."""
    assert parses(raw) is valid


@pytest.mark.parametrize("raw,valid", IPV6_LITERALS)
def test_bracketed_hosts_must_be_ipv6_auction_md_3(raw, valid):
    """auction.md 3: go1.25.2+ requires an IPv6 address (netip.ParseAddr) inside brackets."""
    assert parses(raw) is valid


def test_control_characters_and_non_ascii_bbs_md_1_2():
    """bbs.md 1.2: ASCII CTLs are rejected before '#'; bytes >= 0x80 are not (Go: TestRejectControlCharacters)."""
    for raw in ("http://foo.com/?foo\nbar", "http\r://foo.com/", "http://foo\x7f.com/"):
        with pytest.raises(URLError, match="net/url: invalid control character in URL"):
            parse(raw)
    assert parse_bytes(b"http://foo.com/ctl\x80").path == "/ctl\udc80"
    assert parse("http://foo.com/ctl\x80").path == "/ctl\x80"  # U+0080 is two bytes >= 0x80
    assert parse("docker://h/x#\n").fragment == "\n"


# (input, parses under go1.26+'s urlstrictcolons, parses with GODEBUG=urlstrictcolons=0)
STRICT_COLONS = [
    ("http://a:1:2/x", False, True),
    ("HTTPS://a:1:2/x", False, True),
    ("http://a:1/x", True, True),
    ("docker://a:1:2/x", True, True),
    ("//a:1:2/x", True, True),
    ("http://::/x", False, True),
    ("http://[::1]:80/x", True, True),
]


@pytest.mark.parametrize("raw,strict_ok,lax_ok", STRICT_COLONS)
def test_strict_colons_only_for_http_auction_md_3(raw, strict_ok, lax_ok):
    """auction.md 3: go1.26+ takes an http(s) port after the first colon; others keep the last."""
    assert parses(raw) is strict_ok
    assert parses(raw, strict_colons=False) is lax_ok


def test_strict_colon_error_text_auction_md_3():
    """auction.md 3: under urlstrictcolons everything after the first colon is the "port"."""
    with pytest.raises(URLError, match='invalid port ":1:2" after host'):
        parse("http://a:1:2/x")


ERROR_MESSAGES = [
    ("http://[::1]a", 'parse "http://[::1]a": invalid port "a" after host'),
    ("http://[fe80::1%foo]/", 'parse "http://[fe80::1%foo]/": invalid URL escape "%fo"'),
    (
        "https://[1::1::1]",
        'parse "https://[1::1::1]": invalid host: ParseAddr("1::1::1"): multiple :: in address (at ":1")',
    ),
    (
        "https://[ffff::127.0.0.4000]",
        'parse "https://[ffff::127.0.0.4000]": invalid host: ParseAddr("ffff::127.0.0.4000"): IPv4 field has value >255',
    ),
    ("http://[%10::1]", 'parse "http://[%10::1]": invalid URL escape "%10"'),
    ("docker://[::1%25%0a]/x", 'parse "docker://[::1%25%0a]/x": invalid URL escape "%0a"'),
    ("docker://é[::1]/x", 'parse "docker://é[::1]/x": invalid IP-literal'),
    (
        "docker://[::%c3%a91]/x",
        'parse "docker://[::%c3%a91]/x": invalid host: ParseAddr("::é1"): each colon-separated field must have at least one digit (at "é1")',
    ),
    (
        "docker://[1::%c3]/x",
        'parse "docker://[1::%c3]/x": invalid host: ParseAddr("1::\\xc3"): each colon-separated field must have at least one digit (at "\\xc3")',
    ),
    (
        "docker://[1%c3]/x",
        'parse "docker://[1%c3]/x": invalid host: ParseAddr("1\\xc3"): unable to parse IP',
    ),
    ("docker://\u00a0%zz/x", 'parse "docker://\\u00a0%zz/x": invalid URL escape "%zz"'),
    ("docker://h/x#%zz\n", 'parse "docker://h/x#%zz\\n": invalid URL escape "%zz"'),
    ("docker://h/%x\u00e9", 'parse "docker://h/%x\u00e9": invalid URL escape "%x\\xc3"'),
]


@pytest.mark.parametrize("raw,message", ERROR_MESSAGES)
def test_error_messages_follow_go_bbs_md_1_2(raw, message):
    """bbs.md 1.2: Go's error text for netip failures, escapes, and strconv.Quote's escaping."""
    with pytest.raises(URLError) as err:
        parse(raw)
    assert str(err.value) == message


def test_go_quote_matches_strconv_quote():
    """Error texts quote like Go's strconv.Quote."""
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("\x00\x07\t\n\x7f") == '"\\x00\\a\\t\\n\\x7f"'
    assert go_quote("é世\U0001f600") == '"é世\U0001f600"'
    assert go_quote("\u00a0\u200b\U000e0001") == '"\\u00a0\\u200b\\U000e0001"'
    assert go_quote(b"\xff\xe4\xb8") == '"\\xff\\xe4\\xb8"'


# --- strings Python has and Go has not ---------------------------------------------------


def test_lone_surrogates_fail_to_parse_bbs_md_1_2():
    """bbs.md 1.2: a str with a lone surrogate has no UTF-8 (so no Go) form: it is rejected."""
    for raw in ("docker:///x\ud800", "\udfff", "preloaded:cflinuxfs4#\udc80"):
        assert parses(raw) is False
        with pytest.raises(URLError, match="lone surrogate"):
            parse(raw)


_ROOTFS_ALPHABET = st.sampled_from(
    list("abcxyzAZ019:/?#%[]@ .+-_~!$&'()*,;=<>\"\\^`{|}")
    + ["\x00", "\t", "\n", "\x1f", "\x7f", "é", "世", "\u00a0", "\U0001f600", "%25", "%e4", "%zz", "::", "//"]
)
_PREFIXES = st.sampled_from(["", "docker://", "docker:///", "preloaded:", "DOCKER:", "http://", "https://", "//", "1a:", ":"])


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_parses_is_total_on_any_text_auction_md_3(raw):
    """auction.md 3: parses() returns a bool for any text; parse() raises only URLError."""
    ok = parses(raw)
    assert type(ok) is bool
    try:
        parse(raw)
    except URLError:
        assert ok is False
    else:
        assert ok is True


@settings(max_examples=400, deadline=None)
@given(_PREFIXES, st.lists(_ROOTFS_ALPHABET, max_size=20).map("".join))
def test_parses_is_total_on_rootfs_like_text_auction_md_3(prefix, body):
    """auction.md 3: rootfs-shaped strings too (brackets, escapes, CTLs, non-ASCII)."""
    raw = prefix + body
    ok = parses(raw)
    assert type(ok) is bool
    try:
        parsed = parse(raw)
    except URLError as err:
        assert ok is False
        assert str(err).startswith("parse ")
    else:
        assert ok is True
        assert parsed.scheme == parsed.scheme.lower()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1), st.text(), st.text())
def test_any_surrogate_means_rejected_bbs_md_1_2(surrogates, before, after):
    """bbs.md 1.2: any lone surrogate anywhere makes parses() False and parse() raise URLError."""
    raw = before + surrogates + after
    assert parses(raw) is False
    with pytest.raises(URLError):
        parse(raw)


def test_parses_is_cached_auction_md_3():
    """auction.md 3: the hot path is cached per distinct rootfs string."""
    assert parses.cache_info().maxsize == 4096
    parses.cache_clear()
    parses("docker:///cached")
    parses("docker:///cached")
    assert parses.cache_info().hits >= 1


# --- ground truth from the real Go -------------------------------------------------------


TABLE_ROWS = (
    ROOTFS_REJECTED + ROOTFS_ACCEPTED + GO_URLTESTS + ALL_VALIDITY_CASES + STRICT_COLONS + ERROR_MESSAGES
)


def _vectors() -> dict:
    return json.loads(VECTORS.read_text(encoding="utf-8"))


def test_every_table_input_has_a_go_vector():
    """The fixture covers every literal input of this file."""
    data = _vectors()
    have = {v[0] for v in data["vectors"]}
    tables = [r for r, *_ in TABLE_ROWS]
    assert [r for r in tables if r not in have] == []


def _as_vector(raw: str, strict_colons: bool = True) -> list:
    """The port's answer in the fixture's vector form."""
    try:
        u = parse(raw, strict_colons=strict_colons)
    except URLError as e:
        return [raw, str(e)]
    user = None
    if u.user is not None:
        user = [u.user.username, u.user.password if u.user.password_set else None]
    return [
        raw, None, u.scheme, u.opaque, u.host, u.path, u.raw_query, int(u.force_query), u.fragment, user,
    ]  # fmt: skip


def test_port_matches_go_1_27_3_vectors_auction_md_3_bbs_md_1_2():
    """auction.md 3 / bbs.md 1.2: the port agrees with ``go version go1.27.3 linux/amd64``.

    Every vector is what Go's url.Parse returned (program in a module declaring go 1.27):
    the exact error text, or Scheme, Opaque, Host, Path, RawQuery, ForceQuery, Fragment and
    the Userinfo. Inputs: every literal of this file plus random rootfs-like strings.
    """
    data = _vectors()
    assert data["go_version"] == GO_VERSION == "go1.27.3"
    assert len(data["vectors"]) > 2000
    mismatches = [(vec, got) for vec in data["vectors"] if (got := _as_vector(vec[0])) != vec]
    assert mismatches == []


def test_port_matches_go_with_urlstrictcolons_0_auction_md_3():
    """auction.md 3: ``strict_colons=False`` is go1.27.3 run with ``GODEBUG=urlstrictcolons=0``.

    That is also the default for a main module whose go.mod declares go < 1.26, as Diego's
    (go 1.23) does; only http(s) hosts with more than one colon are affected.
    """
    data = _vectors()
    lax = data["differs_with_GODEBUG_urlstrictcolons=0"]
    assert lax
    for vec in data["vectors"]:
        want = [vec[0], *lax[vec[0]]] if vec[0] in lax else vec
        assert _as_vector(vec[0], strict_colons=False) == want
    for raw in lax:
        head = raw.split("#", 1)[0]
        assert head.lower().startswith(("http://", "https://")) and head.count(":") >= 3, raw


def test_go_1_19_differences_are_the_newer_host_rules():
    """Debian bookworm's ``go1.19.8`` differs from go1.27.3 only through the newer parseHost rules.

    go1.25.2 (CVE-2025-47912): brackets must start the host and hold an IPv6 address;
    go1.26 (urlstrictcolons): an http(s) host may hold one colon only. go1.19.8 never
    rejects what go1.27.3 accepts. The port follows go1.27.3.
    """
    data = _vectors()
    newest = {vec[0]: vec for vec in data["vectors"]}
    differs = data["differs_in_go1.19.8"]
    assert differs
    for raw, old_tail in differs.items():
        head = raw.split("#", 1)[0]
        assert "[" in head or (
            head.lower().startswith(("http:", "https:")) and head.count(":") >= 3
        ), raw
        assert newest[raw][1] is not None or old_tail[0] is None, raw  # 1.27 is never laxer
    assert "docker://reg[1]/x" in differs  # go1.19.8 accepted it; go1.27.3 rejects it
    assert "https://[1::1::1]" in differs
