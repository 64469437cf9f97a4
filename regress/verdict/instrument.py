"""The instruction counts beside the time's verdicts (compare --instrument):
a cross-check that qualifies a verdict, never one that decides alone.

  time SLOWER, instructions within their noise
      AMBIGUOUS: "environment suspect": the same work took longer, which
      the machine (a neighbour, a clock, the memory) explains as well as the
      code. AMBIGUOUS does not fail the comparison: a real regression of
      memory behaviour with the same instructions (a loop interchange, a
      stride) passes the gate this way, and the row's reason is what says
      so. The rule is the issue's choice for machines whose neighbours move
      the time more often than code that keeps its instructions does.
  time SAME or AMBIGUOUS, instructions beyond their noise
      the verdict stays, led by "instructions +x%": the code does more (or
      less) work per call than the time could show on this machine.
"""
from regress.load import fmt
from regress.verdict.rows import WITH_STATISTICS

_pct = fmt.pct


def apply(rows, changes):
    """Adds each row's instruction change (regress/run/instructions.py
    changes()) and applies the rules above; the number of rows whose
    instructions moved."""
    moved = 0
    for row in rows:
        c = changes.get(row.name)
        if c is None or row.n_base is None:
            continue
        row.instructions = c
        if c["moved"]:
            moved += 1
        if row.verdict == "SLOWER" and not c["moved"]:
            row.verdict = "AMBIGUOUS"
            row.prefix_reason("environment suspect: time %s but instructions %s, within their noise (threshold %s)"
                              % (_pct(row.change), _pct(c["change"]), _pct(c["threshold"], False)),
                              WITH_STATISTICS)
        elif row.verdict in ("SAME", "AMBIGUOUS") and c["moved"]:
            row.prefix_reason("instructions %s" % _pct(c["change"]), WITH_STATISTICS)
    return moved
