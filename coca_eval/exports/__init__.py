"""A results file sent where researchers already look: an experiment tracker (W&B, Trackio) or a Hub
dataset repository in lm-evaluation-harness's layout. The libraries do the sending; they are optional
extras (``pip install coca-eval[export]``) and are imported only by the command that needs one."""
