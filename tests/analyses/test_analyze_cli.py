"""``coca-eval analyze``: the group lists the registered analyses; a model without RoPE is one line."""

import pytest
from planted import plant

from coca_eval.cli import main


def test_group_lists_the_analyses(capsys):
    main(["analyze", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in ("frequencies", "angles", "decay", "attention"))


def test_alibi_model_is_refused_in_one_line(tmp_path, corpus_file, capsys):
    from coca_eval.models.alibi import AlibiLlamaConfig, AlibiLlamaForCausalLM

    alibi = plant(
        tmp_path / "alibi", lambda m: None, config_class=AlibiLlamaConfig, model_class=AlibiLlamaForCausalLM
    )
    args = ["analyze", "angles", "--model", str(alibi), "--dataset", str(corpus_file), "--lengths", "64"]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--output", str(tmp_path / "a.json")])
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line or "Traceback" in line]
    assert exit_info.value.code == 2 and len(errors) == 1  # above it only the loading and progress lines
    assert errors[0].startswith("coca-eval: error: model type 'alibi_llama' applies no rotary position")
    assert errors[0].endswith("the angles analysis has no meaning for it")


def test_tokens_is_the_length_option(tmp_path, corpus_file, tiny_llama_dir):
    import json

    args = ["analyze", "frequencies", "--model", str(tiny_llama_dir), "--dataset", str(corpus_file)]
    main([*args, "--tokens", "48", "--num-docs", "1", "--output", str(tmp_path / "f.json")])
    run = json.loads((tmp_path / "f.json").read_text())
    assert [c["length"] for c in run["cells"]] == [48] and run["config"]["params"]["num_docs"] == 1
