"""``python -m coca_eval ...`` runs the ``coca-eval`` command; torchrun launches modules this way
(``torchrun --nproc-per-node 4 -m coca_eval ppl ...``)."""

from coca_eval.cli import run

if __name__ == "__main__":
    run()
