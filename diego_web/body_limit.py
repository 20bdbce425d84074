"""Refuse a request body over the upload limit before any of it is read (dashboard.md U5).

daphne (Twisted) reads a whole request body, to memory or a temporary file on its one
event loop, before the application sees the request; Django's own check could only
answer once it had all arrived: a 300 MB upload was refused after 7-14 s, and every
other request waited meanwhile. This request class is daphne's with the limit checked
where Twisted learns the length: a declared ``Content-Length`` over the limit is
answered 413 at once (``Connection: close``, nothing of the body read), and a body
without one (chunked) is counted as it arrives and cut off at the limit the same way.
The words are the Django middleware's (``auction.middleware.too_large_body``), which
still answers for any other server.
"""

from __future__ import annotations

from typing import Any

import daphne.http_protocol
from daphne.http_protocol import WebRequest

from auction.middleware import too_large_body, upload_limit


class LimitedRequest(WebRequest):  # type: ignore[misc]
    refused = False
    received = 0

    def gotLength(self, length: int | None) -> None:  # noqa: N802 - Twisted's name
        if length is not None and length > upload_limit():
            self._refuse(length)
            return
        super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:  # noqa: N802 - Twisted's name
        if self.refused:
            return
        self.received += len(data)
        if self.received > upload_limit():
            self._refuse(None)
            return
        super().handleContentChunk(data)

    def process(self) -> Any:
        if self.refused:
            return None  # answered already; the connection is closing
        return super().process()

    def _refuse(self, length: int | None) -> None:
        self.refused = True
        path = getattr(self.channel, "_path", b"/").split(b"?", 1)[0].decode("latin-1")
        content_type, body = too_large_body(path, length)
        head = (b"HTTP/1.1 413 Request Entity Too Large\r\n"
                b"Content-Type: " + content_type.encode() + b"\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n"
                b"Connection: close\r\n\r\n")
        transport = self.channel.transport
        transport.write(head + body)
        transport.loseConnection()


def install() -> None:
    """daphne's factory names its request class at each connection: ours from now on."""
    daphne.http_protocol.WebRequest = LimitedRequest
