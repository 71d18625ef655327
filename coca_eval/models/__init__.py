"""Model presets, rope patches and (later) the CoCA architectures."""
