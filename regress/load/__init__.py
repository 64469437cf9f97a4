"""Layer 1, load: the one loader of bench JSON (results: schema, run names,
repair of cut files), the figures derived from an entry's counters, and the
formatters every table shares. Imports nothing else of regress."""
