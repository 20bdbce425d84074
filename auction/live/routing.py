from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from auction.live.consumers import LiveConsumer


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any other websocket path is refused at the handshake (a 403), never a 500: the
    router alone raises for a path it does not know (dashboard.md U5)."""

    async def connect(self) -> None:
        await self.close()


websocket_urlpatterns = [
    path("ws/live/", LiveConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
