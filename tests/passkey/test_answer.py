"""The passkey stop rule and scoring (the hf decoder that follows them: tests/backends/test_hf_generation)."""

from coca_eval.passkey.answer import answer_decided, first_integer, score_output


def test_stop_rule_and_scoring():
    assert not answer_decided(" 1234")
    assert answer_decided(" 12345.")
    assert not answer_decided(" The pass key")
    assert first_integer("key is 012 and 99") == 12 and first_integer("none") is None
    assert score_output(" 54321. Remember", 54321) == {"correct": True, "substring": True}
    assert score_output(" 1 is not 54321", 54321) == {"correct": False, "substring": True}
