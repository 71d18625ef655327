"""HELMET's model-development categories at exact lengths (``coca-eval helmet``, in progress): its
scorers (:mod:`coca_eval.helmet.scoring`) so far."""
