"""Model judges for the families a model scores (AA-LCR): which model judges (``--judge``), its identity
in a run, its calls journaled and resumed like answers (:mod:`coca_eval.judging.judges`), and how often
two judges agree on a run's samples (:mod:`coca_eval.judging.agreement`). Families import this package;
it imports no family."""
