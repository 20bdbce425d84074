"""daphne's websocket compression (dashboard.md L8): what the server sends is deflated at
zlib's level 1, twice as fast as autobahn's default level, and a browser inflates it."""

from __future__ import annotations

import zlib

from autobahn.websocket.compress import PerMessageDeflateOffer, PerMessageDeflateOfferAccept

from diego_web.serve import COMPRESS_LEVEL, MEM_LEVEL, WINDOW_BITS, QuickDeflate


def test_the_server_deflates_at_its_own_level_and_the_stream_inflates() -> None:
    accept = PerMessageDeflateOfferAccept(PerMessageDeflateOffer(), window_bits=WINDOW_BITS,
                                          mem_level=MEM_LEVEL)
    pmce = QuickDeflate.create_from_offer_accept(True, accept)
    snapshot = b"".join(b'<span class="block" data-instance="app-%05d.%d"></span>' % (n // 3, n % 3)
                        for n in range(3000))
    pmce.start_compress_message()
    sent = pmce.compress_message_data(snapshot) + pmce.end_compress_message()
    ours = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, -WINDOW_BITS, MEM_LEVEL)
    assert sent == (ours.compress(snapshot) + ours.flush(zlib.Z_SYNC_FLUSH))[:-4]
    default = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -WINDOW_BITS, MEM_LEVEL)
    assert sent != (default.compress(snapshot) + default.flush(zlib.Z_SYNC_FLUSH))[:-4]
    browser = zlib.decompressobj(-WINDOW_BITS)
    assert browser.decompress(sent + b"\x00\x00\xff\xff") == snapshot


def test_a_slow_accept_is_not_rejected_after_daphnes_5_s() -> None:
    """dashboard.md L8: a socket is accepted after a database and a Redis trip; on a
    loaded machine that passed daphne's 5 s, and the browser logged a reset handshake.
    The server waits 30 s unless its command line says otherwise."""
    from daphne.cli import CommandLineInterface

    from diego_web.serve import daphne_args

    parse = CommandLineInterface().parser.parse_args
    assert parse(["app:application"]).websocket_connect_timeout == 5  # daphne's own
    assert parse(daphne_args(["app:application"])).websocket_connect_timeout == 30
    given = daphne_args(["--websocket_connect_timeout", "7", "app:application"])
    assert parse(given).websocket_connect_timeout == 7
