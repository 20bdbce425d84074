"""daphne, with the websockets compressed (permessage-deflate, RFC 7692).

``python -m diego_web.serve`` takes daphne's own arguments. Two differences: database
connections are kept for 60 s (``DJANGO_CONN_MAX_AGE``, see settings), and the
websocket factory accepts a browser's permessage-deflate offer (dashboard.md L8). A
page's regions are markup that repeats itself (one ``<span>`` per instance): the first
snapshot of a 1,500-block grid is ~800 KB as text and ~27 KB deflated, for ~3-4 ms of
CPU. On loopback that is a cost, not a gain; over a room's Wi-Fi, 200 screens opening
that grid take ~5 MB instead of ~160 MB, and every later frame shrinks the same way.

Daphne builds its factory inside ``Server.run`` and offers no setting for this, so the
factory is configured as it is assigned.
"""

from __future__ import annotations

import os
import sys
import zlib
from typing import Any

from autobahn.websocket.compress import (
    PERMESSAGE_COMPRESSION_EXTENSION,
    PerMessageDeflate,
    PerMessageDeflateOffer,
    PerMessageDeflateOfferAccept,
)
from daphne.cli import CommandLineInterface
from daphne.server import Server

# A 8 KB window and memLevel 6 hold ~64 KB of compressor state per socket (zlib's
# defaults hold 256 KB) and deflate a grid snapshot within 4 % of the defaults' size.
WINDOW_BITS = 13
MEM_LEVEL = 6


# zlib's level 1, not its default 6: a big grid's snapshot deflates in half the time for a
# third more bytes (docs/performance.md). When a room's screens open that grid at once the
# web process's CPU is what runs short; a few KB more per screen is nothing on any network.
COMPRESS_LEVEL = 1


class QuickDeflate(PerMessageDeflate):
    """autobahn's permessage-deflate, compressing what the server sends at COMPRESS_LEVEL
    (autobahn always uses zlib's default level)."""

    def start_compress_message(self) -> None:
        if self._is_server and (self._compressor is None or self.server_no_context_takeover):
            self._compressor = zlib.compressobj(
                COMPRESS_LEVEL, zlib.DEFLATED, -self.server_max_window_bits, self.mem_level)
            return
        super().start_compress_message()


def accept_deflate(offers: list[Any]) -> PerMessageDeflateOfferAccept | None:
    """The first permessage-deflate offer, accepted with our window; else none (plain)."""
    for offer in offers:
        if isinstance(offer, PerMessageDeflateOffer):
            limit = offer.request_max_window_bits
            bits = WINDOW_BITS if not limit else min(WINDOW_BITS, limit)
            return PerMessageDeflateOfferAccept(offer, window_bits=bits, mem_level=MEM_LEVEL)
    return None


class CompressingServer(Server):
    @property
    def ws_factory(self) -> Any:
        return self._ws_factory

    @ws_factory.setter
    def ws_factory(self, factory: Any) -> None:
        factory.setProtocolOptions(perMessageCompressionAccept=accept_deflate)
        self._ws_factory = factory


class CompressingCLI(CommandLineInterface):
    server_class = CompressingServer


# daphne rejects a websocket its application has not accepted within 5 s. A socket is
# accepted once its groups are joined (auction/live/consumers.py), a trip to the database
# and one to Redis; a room of pages opening at once, or a loaded machine, took longer, and
# the browser logged a reset handshake and reconnected. Given unless the command says.
CONNECT_TIMEOUT_S = 30


def daphne_args(argv: list[str]) -> list[str]:
    if any(a.startswith("--websocket_connect_timeout") for a in argv):
        return argv
    return ["--websocket_connect_timeout", str(CONNECT_TIMEOUT_S), *argv]


# The coalescer renders in a thread while the event loop carries frames to sockets. With
# CPython's 5 ms switch interval, each of the loop's many short I/O steps (a frame is a
# few Redis replies, then a socket write) waited up to 5 ms for the interpreter while a
# render ran, and a frame that was in Redis took tens of milliseconds to reach its page.
# 0.5 ms hands the loop the interpreter at once for a little more switching overhead in
# renders.
SWITCH_INTERVAL_S = 0.0005


def main(argv: list[str] | None = None) -> None:
    # Before Django reads its settings (see DATABASES there).
    os.environ.setdefault("DJANGO_CONN_MAX_AGE", "60")
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    PERMESSAGE_COMPRESSION_EXTENSION[PerMessageDeflate.EXTENSION_NAME]["PMCE"] = QuickDeflate
    from diego_web import body_limit  # reads the settings: after the line above

    body_limit.install()
    CompressingCLI().run(daphne_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
