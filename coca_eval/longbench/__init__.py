"""LongBench (``coca-eval longbench``): v1 runs by LongBench's own protocol or at exact lengths (data,
tasks, prompts, runner); v2 so far has its scoring only. Scores equal LongBench's own (``scoring``,
``averages``, ``scoring_v2``)."""
