"""Pages: thin, each renders a selector's read model. One module per page."""
