"""The base every exact-length generation family stands on (passkey, RULER, HELMET, BABILong, and a
plug-in's): the cell runner over tasks and lengths (:mod:`.runner`, :mod:`.cells`), model preparation
and exact-length prompt assembly from token segments (:mod:`.assembly`, :mod:`.segments`,
:mod:`.draws`, :mod:`.haystacks`, :mod:`.values`), the shared parameters (:mod:`.params`), per-sample
records and their contradiction check (:mod:`.records`), effective lengths at a threshold and at a
bar relative to the model itself (:mod:`.effective`, :mod:`.relative`), the paired gate test
(:mod:`.gate`), intervals and heat maps (:mod:`.report`, :mod:`.heatmaps`), ``--dump-prompts``
(:mod:`.dump`), and the hooks a family read like BABILong gets in one object (:mod:`.family`).

A family keeps only what is its own: tasks, prompts, data formats, scoring, presets and wording.
"""
