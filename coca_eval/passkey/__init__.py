"""Passkey retrieval at exact token lengths (the paper's Table 2; Mohtashami & Jaggi 2023)."""
