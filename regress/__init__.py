"""parbench's regression engine: everything that reads, judges and keeps
bench's JSON, and the one place that starts bench. Layers, each a
subpackage, importing only downwards (tests/test_layers.py holds it so):

  load     the one loader of bench JSON (results, document), derived figures,
           the formatters (fmt)
  stats    rank tests (ranks), the decision rule and floors (decide), noise,
           change points, a history series (series)
  verdict  the comparator's decisions as typed records
  store    the history of runs (SQLite, PostgreSQL), alerts, the history's noise
  report   the comparator's console table and Markdown, the pull-request comment
  run      launch (the one module that starts bench), paired rounds, the suite,
           the nightly, bisection and its evidence

On top, one module per command: regress/<tool>.py parses its arguments and
wires the layers (`python -m regress.<tool>`, the ci/<tool> wrapper and the
installed parbench-<tool> run it). regress/cli.py is what every tool shares:
exit codes, the one-line argument parser, run_tool, strict JSON output.

Charts and the report live in plots/, which reads the layers up to store;
a tool imports plots only where it draws, at that moment, so the engine runs
without matplotlib until then.
"""
