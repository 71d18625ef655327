"""Test hook (on PYTHONPATH only in the torchrun identity tests): the rank named by
``COCA_EVAL_TEST_ARGV_RANK`` gets the options in ``COCA_EVAL_TEST_ARGV`` appended to its command line,
as a rank started by hand with another command would."""

import os
import sys

if "RANK" in os.environ and os.environ["RANK"] == os.environ.get("COCA_EVAL_TEST_ARGV_RANK"):
    sys.argv += os.environ.get("COCA_EVAL_TEST_ARGV", "").split()
