"""Other harnesses' outputs read as ordinary runs (schema coca-eval/3, per-sample records, provenance
naming where they came from), so ``gate`` and ``report`` take them beside this project's own."""
