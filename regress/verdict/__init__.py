"""Layer 3, verdict: the comparator's decisions as typed records (a row per
benchmark, its verdict and reasons), with no rendering. Imports regress.load
and regress.stats."""
