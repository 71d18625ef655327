"""The miniature zoo: tiny decoders trained here that differ only in position handling.

A plug-in of coca-eval like any other (``coca_eval.zoo.plugin``, declared in the ``coca_eval.plugins``
entry-point group): it brings the ``zoo`` command, one model preset per trained entry, the ``zoo:``
datasets and the default presets of ``ppl`` and ``passkey``. The core names none of it.
"""
