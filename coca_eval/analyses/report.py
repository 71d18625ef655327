"""What the report says under the analyses' tables."""

from __future__ import annotations

from coca_eval.results import Run


def protocol_line(run: Run) -> str:
    """One sentence: documents, lengths, and the analysis' own knobs."""
    params = run.config.get("params", {})
    knobs = ", ".join(
        f"{k}={v}"
        for k, v in params.items()
        if v is not None and k not in ("analysis", "dataset", "num_docs", "lengths", "seed", "text_field")
    )
    lengths = ", ".join(str(n) for n in params.get("lengths") or [])
    if "geometry" in params:  # analyze decay --head-dim: no model, no documents
        shape = ", ".join(f"{k}={v:g}" for k, v in params["geometry"].items())
        return f"decay in closed form (no model, no documents) for {shape}; distances up to {lengths} tokens."
    return (
        f"{params.get('analysis', run.config.get('task'))}: {params.get('num_docs')} documents of "
        f"{params.get('dataset')} (seed {params.get('seed')}), first {lengths} tokens"
        + (f"; {knobs}" if knobs else "")
        + "."
    )
