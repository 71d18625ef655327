"""Artificial Analysis' long-context reasoning set (AA-LCR) on the generation base, scored by a judge."""
