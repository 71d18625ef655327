"""Choosing Table 5 datasets and checking the data root before OpenCompass starts."""

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.opencompass.data_root import check_data
from coca_eval.opencompass.datasets import parse_datasets
from coca_eval.opencompass.task import preset_datasets, resolve_datasets


def test_the_preset_lists_table5_in_the_papers_order():
    names = [d.name for d in parse_datasets("table5", preset_datasets())]
    assert len(names) == 17 and names[:2] == ["COPA", "AX_b"] and names[-3:] == ["MMLU", "CMMLU", "C-Eval"]


def test_names_and_subjects_parse():
    chosen = parse_datasets("copa, ceval:law,MMLU:anatomy,MMLU:virology")
    assert [d.name for d in chosen] == ["COPA", "C-Eval", "MMLU"]
    assert chosen[2].subjects == ("anatomy", "virology")
    with pytest.raises(CocaEvalError, match="unknown OpenCompass dataset 'gsm8k'"):
        parse_datasets("COPA,gsm8k")
    with pytest.raises(CocaEvalError, match="has no subjects"):
        parse_datasets("COPA:x")


def test_data_root_and_files_are_checked(tmp_path):
    with pytest.raises(CocaEvalError, match="data root not found"):
        check_data(parse_datasets("COPA"), tmp_path / "missing")
    with pytest.raises(CocaEvalError, match=r"COPA: data file missing: .*SuperGLUE/COPA/val.jsonl"):
        check_data(parse_datasets("COPA"), tmp_path)
    copa = tmp_path / "data" / "SuperGLUE" / "COPA" / "val.jsonl"
    copa.parent.mkdir(parents=True)
    copa.write_text("{}\n")
    assert [d.name for d in check_data(parse_datasets("COPA"), tmp_path)] == ["COPA"]


def test_a_whole_suite_needs_all_its_subjects(tmp_path):
    for split in ("dev", "test"):
        path = tmp_path / "data" / "mmlu" / split / f"anatomy_{split}.csv"
        path.parent.mkdir(parents=True)
        path.write_text("q,a,b,c,d,A\n")
    with pytest.raises(CocaEvalError, match=r"only 1 of 57 subjects .* \(MMLU:anatomy\)"):
        resolve_datasets("MMLU", tmp_path)
    (mmlu,) = resolve_datasets("MMLU:anatomy", tmp_path)
    assert mmlu.required_files() == ["data/mmlu/dev/anatomy_dev.csv", "data/mmlu/test/anatomy_test.csv"]
    with pytest.raises(CocaEvalError, match="virology_dev.csv"):
        resolve_datasets("MMLU:virology", tmp_path)
