"""parbench's regression engine: everything that reads, judges and keeps
bench's JSON, and the one module that starts bench.

  results          the one loader of bench JSON (schema, run names, repair)
  derived          figures computed from an entry's counters
  fmt              the time formatter every table shares
  check_run        the CI gate on one run (ci/check-run)
  close_truncated  a repaired copy of a run cut off mid-write (ci/close-truncated)
  upgrade          stamps files written before schema 1 (ci/upgrade-json)
  stats            the comparator's rank tests and Hodges-Lehmann estimates
  compare          the comparator: verdicts per benchmark (ci/compare)
  rounds           the comparator's paired rounds (compare --run), resumable
  launch           the one module that starts bench: listing, one run, limits
  run_suite        the crash-safe suite runner (ci/run-suite)
  history          the SQLite history of nightly runs (ci/history)
  changepoint      E-Divisive change points of a series
  trends           change points of a machine's history (ci/trends)
  nightly          the nightly job (ci/nightly)
  ptx_diff         PTX snapshots and their kernel-by-kernel comparison (ci/ptx-diff)
  gemm_tune        the GEMM tuning table generator (ci/tune-gemm)

Charts and the report live in plots/, which imports the loader from here;
regress imports plots only where a command draws (compare --plot, the trends
page), at that moment, so the engine runs without matplotlib until then.
Run the tools through ci/python (it puts the repository on PYTHONPATH).
"""
