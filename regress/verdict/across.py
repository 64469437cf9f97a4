"""Two runs of different machines (compare --across-hardware): each entry
read as the fraction of its own run's ceiling of its rate's kind (the copy
bandwidth, the library GEMM: regress/load/ceilings.py), never by its time.

What a side needs (read_ceilings: the Ceiling family in both runs), which
benchmarks can be read so on both sides and which cannot, with the reason
(comparable), a side whose ceiling was measured low (above_ceiling), and
what the document says about the two machines (summary)."""
import math
from collections import Counter

import numpy as np

from regress.load import derived
from regress.load.ceilings import run_ceilings
from regress.verdict.samples import CEILING_ITSELF, NO_RATE, InputError, NotComparable


def read_ceilings(runs):
    """The ceilings of each run ([(what, path, Run)]), in order; InputError,
    one line, when a run measured none: nothing of it reads as a fraction."""
    ceil = [run_ceilings(run) for _, _, run in runs]
    bare = ["%s %s" % (what, path) for (what, path, _), c in zip(runs, ceil) if not c]
    if bare:
        raise InputError("--across-hardware reads each entry against its own run's ceilings, and %s %s none (no "
                         "passed Ceiling entry): run the Ceiling family with the benchmarks on each machine, e.g. "
                         "--benchmark_filter='^(GEMM|Ceiling)/'" % (" and ".join(bare), "has" if len(bare) == 1
                                                                    else "have"))
    return ceil


def _why(a, b):
    """Why a benchmark cannot be read as a fraction on some side, or None:
    the entry's reason (a ceiling, no rate), else the side's (its run
    measured no ceiling of that kind)."""
    why = [(what, s.not_across) for what, s in (("BASE", a), ("NEW", b))
           if s is not None and s.not_across and not s.values]
    for _, reason in why:
        if reason in (CEILING_ITSELF, NO_RATE):
            return reason
    return "%s: %s" % why[0] if why else None


def above_ceiling(a, b):
    """Why a benchmark's fractions cannot carry a verdict, or None: a side
    whose median fraction is above its ceiling by more than measuring the
    same work twice gives (derived.classify_fraction) has a ceiling measured
    low or work that ceiling does not bound, as the report's "Suspicious"
    says of it."""
    for what, s in (("BASE", a), ("NEW", b)):
        f = math.exp(-float(np.median(s.measured())))
        if derived.classify_fraction(f) == "above ceiling":
            return ("%s reaches %.3f of its %s ceiling, beyond the %g%% of measuring the same work twice: a "
                    "ceiling measured low, or work it does not bound (data in a cache), no fraction to compare"
                    % (what, f, s.ceiling[0], 100 * derived.CEILING_NOISE))
    return None


def comparable(a, b):
    """(BASE samples, NEW samples, [(name, reason)]): the benchmarks that
    have no fraction of a ceiling on a side that ran them leave both sides,
    each with the reason. An error entry in NEW stays: it is a verdict
    (ERROR). NotComparable when they were all there was."""
    out, keep_a, keep_b = [], dict(a), dict(b)
    for name in sorted(set(a) | set(b)):
        if b.get(name) is not None and b[name].errors:
            continue
        why = _why(a.get(name), b.get(name))
        if why:
            out.append((name, why))
            keep_a.pop(name, None)
            keep_b.pop(name, None)
    if out and not any(k in keep_b and keep_a[k].measured() and (keep_b[k].measured() or keep_b[k].errors)
                       for k in keep_a):
        raise NotComparable("nothing to compare across hardware: no benchmark has a fraction of a ceiling on both "
                            "sides (%d without one on a side: %s)" % (len(out), counted(out)))
    return keep_a, keep_b, out


def counted(not_comparable):
    """The reasons of [(name, reason)], most frequent first, with counts."""
    c = Counter(reason for _, reason in not_comparable)
    return "; ".join("%d %s" % (n, why) for why, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def summary(base_machine, new_machine, not_comparable):
    """The document's "across_hardware": the two machines and the benchmarks
    left out, each with its reason."""
    return {"base_machine": base_machine, "new_machine": new_machine,
            "not_comparable": [{"name": n, "reason": r} for n, r in not_comparable]}


def warning(not_comparable):
    """The one warning line about the benchmarks left out, or None."""
    if not not_comparable:
        return None
    return "%d benchmarks not comparable across hardware, left out (the JSON lists each): %s" % (
        len(not_comparable), counted(not_comparable))
