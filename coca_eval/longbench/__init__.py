"""LongBench v1 and v2 (``coca-eval longbench``, in progress): so far their scoring, equal to LongBench's
own (``scoring``, ``averages``, ``scoring_v2``)."""
