"""The stop rule every backend's greedy decoding follows: EOS, the budget, and a task's decided answer."""

from coca_eval.backends.stopping import StopRule, stop_rule
from coca_eval.passkey.answer import passkey_stop

EOS = {0}


def _digits(tokens):
    """Token t decodes to the character chr(t)."""
    return "".join(chr(t) for t in tokens)


def test_a_bare_budget_stops_at_eos_or_after_that_many_tokens():
    rule = stop_rule(4)
    assert rule == StopRule(4) and not rule.stops_early
    assert rule.cut([65, 66, 0, 67], EOS, _digits) == [65, 66, 0]
    assert rule.cut([65, 66, 67, 68, 69, 70], EOS, _digits) == [65, 66, 67, 68]
    assert rule.first_stop([65, 66], EOS, _digits) is None


def test_the_passkey_rule_stops_once_the_first_integer_is_complete():
    rule = passkey_stop(64)
    tokens = [ord(c) for c in " is 12345. and more"]
    kept = rule.cut(tokens, EOS, _digits)
    assert _digits(kept) == " is 12345."
    assert stop_rule(rule) is rule


def test_without_a_decided_rule_the_text_is_never_decoded():
    def never(tokens):
        raise AssertionError("decoded")

    assert StopRule(3).cut([1, 2, 3, 4], EOS, never) == [1, 2, 3]
