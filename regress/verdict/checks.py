"""Whether two sides may be compared at all: the runs' fingerprint, the work
each benchmark did, the GPU's clocks."""
import numpy as np

from regress.load import results
from regress.verdict.samples import NotComparable

CLOCK_TOLERANCE = 0.02   # SM clock medians further apart than this: UNRELIABLE
RESULT_TOLERANCE = 1e-6  # relative, for result counters (inertia); integers must match

# Context keys of the fingerprint (results.FINGERPRINT_*), by the scope of
# the entries they matter to. Hard: a difference refuses the comparison
# (exit 3). Soft: a warning.
HARD = results.FINGERPRINT_HARD
SOFT = results.FINGERPRINT_SOFT
# Across hardware (--across-hardware) the machine differs by design, and with
# it the toolchain built for it: these hard keys do not refuse there. The
# machine's own keys are what the mode compares (its title names both
# machines); the toolchain's are warned of, as a soft key is. The keys of the
# work and of how it is measured (fixtures, build type, seed, the L2 flush,
# the GPU's start) still refuse: a fraction of another problem, or of a
# cold-cache time against a warm one, is no comparison of machines.
ACROSS_MACHINE = ("cpu_model", "num_cpus", "cpu_simd", "gpu", "gpu_sm_count")
ACROSS_TOOLCHAIN = ("parbench_cxx_compiler", "parbench_cuda_compiler", "parbench_cuda_architectures",
                    "openblas_config")


def scopes_of(sample):
    sc = {"all", sample.device or "cpu"}
    if sample.library:
        sc.add(sample.library)
    return sc


def fingerprint_check(base_ctx, new_ctx, scopes):
    """(hard, soft): lists of (key, base value, new value) that differ, for the
    keys of the given scopes. A key absent on one side only is soft."""
    hard, soft = [], []
    for table, out in ((HARD, hard), (SOFT, soft)):
        for scope in sorted(scopes):
            for key in table.get(scope, ()):
                a, b = base_ctx.get(key), new_ctx.get(key)
                if a == b:
                    continue
                if a is None or b is None:
                    soft.append((key, a, b))
                else:
                    out.append((key, a, b))
    seen, uniq = set(), []
    for k in soft:
        if k[0] not in seen:
            seen.add(k[0])
            uniq.append(k)
    return hard, uniq


def check_fingerprint(base_run, new_run, samples, warn, across=False):
    """The soft differences, each warned of; NotComparable for a hard one
    (across hardware: not for the machine's keys, and the toolchain's soft)."""
    scopes = set()
    for s in samples:
        scopes |= scopes_of(s)
    hard, soft = fingerprint_check(base_run.context, new_run.context, scopes)
    if across:
        soft += [k for k in hard if k[0] in ACROSS_TOOLCHAIN]
        hard = [k for k in hard if k[0] not in ACROSS_MACHINE + ACROSS_TOOLCHAIN]
    if hard:
        key, a, b = hard[0]
        more = "" if len(hard) == 1 else " (and %s)" % ", ".join(k for k, _, _ in hard[1:])
        raise NotComparable("runs not comparable: %s is %r in BASE and %r in NEW%s" % (key, a, b, more))
    for key, a, b in soft:
        warn("warning: %s differs (BASE %r, NEW %r); compared anyway" % (key, a, b))
    return soft


def _show(values):
    return "%.12g" % values[0] if len(values) == 1 else "/".join("%.12g" % x for x in values)


def work_mismatch(a, b, kinds, notes=None):
    """First counter describing the work that differs: (name, base, new), or
    None. Problem, model and knob counters must be equal; a result counter
    (iterations, inertia) equal when integral, else within RESULT_TOLERANCE,
    unless notes is a list (--results-may-differ): then a fractional result
    that differs is described there and does not count."""
    for k in sorted(set(a.work) & set(b.work)):
        va, vb = sorted(a.work[k]), sorted(b.work[k])
        if va == vb:
            continue
        if kinds.get(k) == "result":
            # Results may differ in their last bits between repetitions
            # (atomic float sums): the medians of the two sides are compared.
            x, y = float(np.median(va)), float(np.median(vb))
            integral = all(float(v).is_integer() for v in va + vb)
            if x == y or (not integral and abs(x - y) <= RESULT_TOLERANCE * max(abs(x), abs(y))):
                continue
            if not integral and notes is not None:
                notes.append("%s %.12g in BASE, %.12g in NEW" % (k, x, y))
                continue
            return k, "%.12g" % x, "%.12g" % y
        return k, _show(va), _show(vb)
    return None


def clock_problem(a, b, across=False):
    """Why a GPU benchmark's two sides ran at different clocks, or None.
    Across hardware the two GPUs' clocks differ by design: only throttling
    on one side counts."""
    if a.device != "gpu":
        return None
    ta = any(t > 0 for t in a.throttled)
    tb = any(t > 0 for t in b.throttled)
    if ta != tb:
        return "throttled on the %s side only" % ("BASE" if ta else "NEW")
    if a.clock and b.clock and not across:
        ca, cb = float(np.median(a.clock)), float(np.median(b.clock))
        if abs(ca - cb) > CLOCK_TOLERANCE * max(ca, cb):
            return "SM clock %.0f MHz in BASE, %.0f MHz in NEW" % (ca, cb)
    return None
