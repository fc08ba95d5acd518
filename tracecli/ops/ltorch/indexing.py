"""Indexing and data-movement ltorch symbols: getitem, gather, split, stack, ..."""
