"""Layer 4, store: the history of runs (SQLite, PostgreSQL), its alerts,
what the verdicts read from it (noise) and what ci/trends reads from it and
writes back. Imports the layers below it."""
