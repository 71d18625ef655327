"""RULER's thirteen synthetic long-context tasks on exact-length prompts (tasks, prompts, scoring)."""
