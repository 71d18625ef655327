"""Test hook (on PYTHONPATH only in the torchrun kill test): the rank named by
``COCA_EVAL_TEST_KILL_RANK`` dies by SIGKILL right after journaling its first part, as a node lost
mid-run would, at a point the test can count on."""

import os

if "RANK" in os.environ and os.environ["RANK"] == os.environ.get("COCA_EVAL_TEST_KILL_RANK"):
    import signal

    from coca_eval.journal import Journal

    _record_part = Journal.record_part

    def _record_then_die(self, *args, **kwargs):
        _record_part(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    Journal.record_part = _record_then_die
