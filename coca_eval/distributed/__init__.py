"""Splitting a run's units over processes: ``--shard K/N`` jobs merged afterwards (batch schedulers),
or torchrun ranks gathered at the end of every cell (data parallel).

A unit is what a task journals as one part (a document, a sample). :class:`~.partition.Partition`
says which units a process owns; :class:`~.share.Share` is what a task's cell loop asks (own unit
``i``? form the cell from these parts); :mod:`.merge` forms the cells of shard files with each task's
``combine`` hook. Nothing here imports torch until torchrun launched the process.
"""
