"""Layer 2, stats: rank tests and Hodges-Lehmann intervals, thresholds,
run-to-run noise and change points. Imports only regress.load."""
