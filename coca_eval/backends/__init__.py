"""Backends turn token windows into log-probabilities (and later, generations)."""
