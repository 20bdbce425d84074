"""Read models for pages, consumers and the API (reads only; services write)."""
