"""RULER's parameters: task groups, what enters the identity, and refusals before any model loads."""

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.ruler.params import check_methods, make_ruler_params
from coca_eval.ruler.tasks import RULER_GROUPS


def test_the_group_expands_and_names_keep_their_order():
    assert make_ruler_params({}).tasks == RULER_GROUPS["ruler"]
    assert make_ruler_params({"tasks": "vt,niah_single_1,vt"}).tasks == ("vt", "niah_single_1")
    assert make_ruler_params({"tasks": ["ruler"]}).tasks == RULER_GROUPS["ruler"]


def test_the_threshold_changes_no_cell():
    assert make_ruler_params({"threshold": 50}).identity() == make_ruler_params({}).identity()
    assert "threshold" not in make_ruler_params({}).identity()


def test_files_enter_the_identity_by_content(tmp_path):
    text = tmp_path / "essays.txt"
    text.write_text("One sentence. Another one.", encoding="utf-8")
    first = make_ruler_params({"haystack": str(text)}).identity()["haystack"]
    text.write_text("Other sentences entirely, and longer.", encoding="utf-8")
    assert (
        first.startswith("local:")
        and make_ruler_params({"haystack": str(text)}).identity()["haystack"] != first
    )


def test_the_longest_sequence_is_n_or_holds_the_longest_answer_past_it():
    params = make_ruler_params({"tasks": "vt,cwe", "lengths": "1k,2k"})
    assert params.longest_sequence() == 2048  # RULER's N: prompt and answer inside it
    assert [params.prompt_length(2048, t) for t in ("vt", "cwe")] == [2048 - 30, 2048 - 120]
    prompt_only = make_ruler_params({"tasks": "vt,cwe", "lengths": "1k,2k", "length_counts": "prompt"})
    assert prompt_only.longest_sequence() == 2048 + 120
    assert prompt_only.prompt_length(2048, "cwe") == 2048


def test_length_counts_is_in_the_identity_only_as_rulers_meaning():
    """Runs made before the option counted the prompt alone and recorded nothing: ``prompt`` keeps
    their identity (their journals resume), RULER's meaning keys its cells apart."""
    assert make_ruler_params({}).identity()["length_counts"] == "prompt+answer"
    assert "length_counts" not in make_ruler_params({"length_counts": "prompt"}).identity()
    with pytest.raises(CocaEvalError, match="--length-counts must be one of prompt\\+answer, prompt"):
        make_ruler_params({"length_counts": "answer"})


def test_vllm_with_dynamic_rope_is_refused_before_loading():
    params = make_ruler_params({"tasks": "niah_single_1,vt"})
    check_methods(params, [make_method("zoo-rope", "dynamic:2", None, "float32", "hf")])
    with pytest.raises(CocaEvalError, match="holds dynamic rope"):
        check_methods(params, [make_method("zoo-rope", "dynamic:2", None, "float32", "vllm")])


def test_a_haystack_without_text_is_refused_before_loading(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    params = make_ruler_params({"tasks": "niah_single_2", "haystack": str(empty)})
    with pytest.raises(CocaEvalError, match="has no text"):
        check_methods(params, [make_method("zoo-rope", "none", None, "float32", "hf")])
