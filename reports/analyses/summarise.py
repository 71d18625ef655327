"""The numbers quoted in reports/analyses/README.md, read from the committed results (results/*.json).

Usage: python reports/analyses/summarise.py [RESULTS_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def cells(directory: Path, task: str) -> list[dict]:
    return [
        c for path in sorted(directory.glob(f"{task}-*.json")) for c in json.loads(path.read_text())["cells"]
    ]


def _high(norms: list[float]) -> float:
    return float(np.sum(norms[: len(norms) // 4]) / np.sum(norms))


def frequency_rows(directory: Path) -> pd.DataFrame:
    """Per model: mean lowest/highest-quarter shares, and where high frequencies are used most."""
    rows = []
    for cell in cells(directory, "frequencies"):
        shares = pd.DataFrame(cell["detail"]["shares"])  # one row per layer
        high = (shares.q_high + shares.k_high) / 2
        edge = high.iloc[[0, -1]].mean()
        heads = cell["detail"]["heads"]
        head_high = {  # per query head, then per key head: share in the highest quarter
            layer: [_high(row) for row in maps["q"]] + [_high(row) for row in maps["k"]]
            for layer, maps in heads.items()
        }
        rows.append(
            {
                "model": cell["method"],
                "q low": shares.q_low.mean(),
                "k low": shares.k_low.mean(),
                "q high": shares.q_high.mean(),
                "k high": shares.k_high.mean(),
                "high, first+last layer": edge,
                "high, middle layers": high.iloc[1:-1].median(),
                "layer of max high": int(high.idxmax()),
                "k-head high share (chosen layers)": {
                    k: [round(v, 2) for v in vs] for k, vs in head_high.items()
                },
            }
        )
    return pd.DataFrame(rows)


def angle_rows(directory: Path) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": c["method"],
            "anomalous share": c["value"],
            "min layer": min(c["detail"]["share_by_layer"]),
            "max layer": max(c["detail"]["share_by_layer"]),
            "mean tokens affected": float(np.mean(c["detail"]["mean_tokens_affected"])),
            "zero keys": c["detail"]["zero_keys"],
            "triples": c["n"],
        }
        for c in cells(directory, "angles")
    )


def decay_rows(directory: Path) -> pd.DataFrame:
    rows = []
    for cell in cells(directory, "decay"):
        detail = cell["detail"]
        if cell["metric"] == "bound_left":  # model-free: geometry_rows
            continue
        for geometry in detail["geometries"]:
            ones, gauss = np.asarray(geometry["all_ones"]), np.asarray(geometry["gaussian"])
            rows.append(
                {
                    "model": cell["method"],
                    "layers": f"{geometry['layers'][0]}.. ({len(geometry['layers'])})",
                    "all-ones at 1": ones[1],
                    "all-ones at max": ones[-1],
                    "Gaussian max |.|": np.abs(gauss).max(),
                    "RoFormer bound at 1": geometry["roformer"][1],
                    "RoFormer bound at max": geometry["roformer"][-1],
                    "CoCA bound at max": geometry["coca"][-1],
                    "measured logit drop": cell["value"],
                }
            )
    return pd.DataFrame(rows)


def geometry_rows(directory: Path) -> pd.DataFrame:
    """The model-free decay runs: how far each patch keeps RoFormer's bound up, CoCA's under it."""
    rows = []
    for cell in cells(directory, "decay"):
        if cell["metric"] != "bound_left":
            continue
        geometry = cell["detail"]["geometries"][0]
        x = np.asarray(cell["detail"]["distances"])
        roformer, coca = np.asarray(geometry["roformer"]), np.asarray(geometry["coca"])
        rows.append(
            {
                "geometry": cell["method"],
                "length": cell["length"],
                "bound at 0": roformer[0],
                "first distance under half": int(x[np.argmax(roformer < roformer[0] / 2)]),
                "bound at 1024": roformer[np.searchsorted(x, 1024)],
                "bound left at max": cell["value"],
                "CoCA / RoFormer max": float(np.max(coca / roformer)),
                "CoCA / RoFormer mean": float(np.mean(coca / roformer)),
            }
        )
    return pd.DataFrame(rows)


def attention_rows(directory: Path) -> pd.DataFrame:
    rows = []
    for cell in cells(directory, "attention"):
        detail = cell["detail"]
        rows.append(
            {
                "model": cell["method"],
                "length": cell["length"],
                "max logit": cell["value"],
                "median head max": float(np.median(detail["max_logit"])),
                "last-layer near mass": float(np.mean(detail["near_mass"][-1])),
                "mean near mass": float(np.mean(detail["near_mass"])),
                "outliers": len(detail["outliers"]),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results"
    pd.set_option("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 80)
    for title, table in (
        ("frequencies", frequency_rows(directory)),
        ("angles", angle_rows(directory)),
        ("decay", decay_rows(directory)),
        ("decay in closed form (no model)", geometry_rows(directory)),
        ("attention", attention_rows(directory)),
    ):
        print(f"## {title}\n{table.round(3).to_string(index=False)}\n")


if __name__ == "__main__":
    main()
