"""Layer 4, store: the history of runs (SQLite, PostgreSQL), its alerts, and
what the verdicts read from it. Imports the layers below it."""
