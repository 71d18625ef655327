"""Methods (model x rope patch, methods files), task presets and the --lengths grammar."""

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import format_length, parse_lengths
from coca_eval.methods import build_methods
from coca_eval.models.rope import parse_rope
from coca_eval.ppl.params import make_params
from coca_eval.presets import get_preset, list_presets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("512..32k", [512, 1024, 2048, 4096, 8192, 16384, 32768]),
        ("512,1024,4096", [512, 1024, 4096]),
        ("1k..8k", [1024, 2048, 4096, 8192]),
        ("2k", [2048]),
        ("512, 1k..2k", [512, 1024, 2048]),
        ("1000..3000", [1000, 2000, 3000]),
    ],
)
def test_lengths_grammar(text, expected):
    assert parse_lengths(text) == expected


@pytest.mark.parametrize("text", ["32k..512", "abc", "", "0", "-512", "1.5k", "512..", "..1k", "512,,1k"])
def test_lengths_rejects(text):
    with pytest.raises(CocaEvalError):
        parse_lengths(text)


def test_format_length():
    assert [format_length(n) for n in (512, 1024, 32768, 1000)] == ["512", "1k", "32k", "1000"]


def test_rope_patches_parse_and_label():
    assert parse_rope("none").kind == "none"
    assert parse_rope("dynamic:4").label == "dynamic NTK x4"
    assert parse_rope("linear:2.5").spec == "linear:2.5"
    assert parse_rope("base:500000").label == "theta=500000"
    for bad in ("dynamic", "dynamic:0.5", "foo:2", "linear:-1", "yarn:x"):
        with pytest.raises(CocaEvalError):
            parse_rope(bad)


def test_methods_cross_product_and_file(tmp_path, tiny_llama_dir):
    path = tmp_path / "methods.yaml"
    path.write_text(
        f"methods:\n  - {{model: {tiny_llama_dir}, rope: 'yarn:4', label: Mine, dtype: bfloat16}}\n"
        f"  - {{model: {tiny_llama_dir}, rope: 'ntk:2'}}\n"
    )
    methods = build_methods(["smollm2-135m"], ["none", "dynamic:4"], path, "float32", "hf")
    assert [m.label for m in methods] == [
        "SmolLM2-135M-Instruct (Q4_1)",
        "SmolLM2-135M-Instruct (Q4_1) + dynamic NTK x4",
        "Mine",
        f"{tiny_llama_dir.name} + NTK x2",
    ]
    assert methods[2].dtype == "bfloat16" and methods[3].dtype == "float32"
    with pytest.raises(CocaEvalError, match="share the label"):
        build_methods(["smollm2-135m", "smollm2-135m"], [], None, "float32", "hf")
    path.write_text("methods:\n  - {model: x, colour: red}\n")
    with pytest.raises(CocaEvalError, match="methods file"):
        build_methods([], [], path, "float32", "hf")


def test_presets_are_found_and_valid():
    names = {p.name for p in list_presets()}
    assert {"pg19", "embedded", "pg19-8k"} <= names
    pg19 = get_preset("pg19", task="ppl")
    params = make_params(pg19.params)
    assert (params.num_docs, params.doc_tokens, params.stride, params.dataset) == (100, 32768, 512, "pg19")
    assert params.lengths == (512, 1024, 2048, 4096, 8192, 16384, 32768)
    overridden = make_params({**pg19.params, "stride": 256, "lengths": "1k"})
    assert overridden.stride == 256 and overridden.lengths == (1024,) and overridden.num_docs == 100
    with pytest.raises(CocaEvalError, match="unknown preset"):
        get_preset("nope")


def test_user_preset_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ntask: ppl\nparams: {dataset: embedded, lengths: 1k, doc_tokens: 2048}\n")
    assert make_params(get_preset(str(path), task="ppl").params).doc_tokens == 2048
    path.write_text("task: [\n")
    with pytest.raises(CocaEvalError, match="malformed"):
        get_preset(str(path))


def test_the_default_presets_bring_the_zoo_showcase_rows():
    from coca_eval.cli.options import build_cli_methods

    for preset, task in (("zoo", "ppl"), ("zoo-passkey", "passkey")):
        methods = build_cli_methods((), (), None, "float32", "hf", preset, task)
        assert [m.label for m in methods] == [
            "RoFormer",
            "RoFormer + dynamic NTK",
            "RoFormer + CoCA",
            "RoFormer + dynamic NTK & CoCA",
        ]
        assert [(m.model, m.rope.spec) for m in methods][1] == ("zoo-rope", "dynamic:4")


def test_a_named_model_replaces_the_preset_rows_and_a_preset_without_rows_means_smollm2():
    from coca_eval.cli.options import build_cli_methods

    named = build_cli_methods(("zoo-alibi",), (), None, "float32", "hf", "zoo", "ppl")
    assert [m.model for m in named] == ["zoo-alibi"]
    plain = build_cli_methods((), ("dynamic:2",), None, "float32", "hf", "embedded", "ppl")
    assert [(m.model, m.rope.spec) for m in plain] == [("smollm2-135m", "dynamic:2")]


def test_rope_without_model_under_a_preset_with_rows_is_refused():
    from coca_eval.cli.options import build_cli_methods

    with pytest.raises(CocaEvalError, match="--rope needs --model"):
        build_cli_methods((), ("dynamic:4",), None, "float32", "hf", "zoo", "ppl")
