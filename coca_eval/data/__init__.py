"""Documents: the embedded books, PG-19 through `datasets`, and local files."""
