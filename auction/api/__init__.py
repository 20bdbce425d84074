"""The JSON API under /api/v1/, shaped like Diego's BBS external API."""
