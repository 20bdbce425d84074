"""The live layer: websocket consumers, group names, publishing after commit."""
