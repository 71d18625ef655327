"""BABILong on an OpenAI-compatible server: both sources (generated samples at exact N, and prepared
rows in the hub sets' layout, 0k included) answer as the hf backend answers the same prompts
(the server decodes greedily with the same model), and score the same."""

from __future__ import annotations

import json
from pathlib import Path

from test_gate_cli import invoke

from tests.backends.fake_completions import FakeServer

PREPARED = Path(__file__).parent / "data" / "prepared"


def test_openai_answers_equal_hf(capsys, served_model, tiny_llama_bos_dir, tmp_path):
    runs = {
        "generate": ["--tasks", "qa1,qa2", "--lengths", "1500"],
        "babilong": [
            "--tasks",
            "qa1,qa8",
            "--lengths",
            "0k,1k",
            "--source",
            "babilong",
            "--data",
            str(PREPARED),
        ],
    }
    for source, args in runs.items():
        common = ["--model", str(tiny_llama_bos_dir), *args, "--samples", "2"]
        with FakeServer(served_model, "tiny") as url:
            served = invoke(capsys, "babilong", *common, "--backend", "openai", "--base-url", url,
                            "--output", str(tmp_path / f"{source}-api.json"))  # fmt: skip
        local = invoke(capsys, "babilong", *common, "--output", str(tmp_path / f"{source}-hf.json"))
        assert served.returncode == 0 and local.returncode == 0, served.stderr[-2000:] + local.stderr[-2000:]
        api = json.loads((tmp_path / f"{source}-api.json").read_text())["cells"]
        hf = json.loads((tmp_path / f"{source}-hf.json").read_text())["cells"]
        assert len(api) == 2 if source == "generate" else len(api) == 4
        assert [c["detail"]["samples"] for c in api] == [c["detail"]["samples"] for c in hf], source
        assert [c["value"] for c in api] == [c["value"] for c in hf] and all(c["status"] == "ok" for c in api)
        assert any(s["output"] for c in api for s in c["detail"]["samples"]), source
