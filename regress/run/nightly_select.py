"""What a night runs, read from bench's roles and run names, never from
variant names: the repetitions a comparison needs, the suite's exclusions
(select_exclusions) and the A/A subset (aa_subset)."""
import os
import re
import statistics

from regress.load import results
from regress.run import launch

# A block sweep of three or more sizes spanning this factor or more (64 to
# 1024 threads) explores tuning; the night guards its middle size. Narrower
# sweeps (tile shapes, 128 to 512) are the working range and run whole.
WIDE_SWEEP = 16
# The A/A subset (aa_subset), run with the suite's profile and arguments so
# that its names are the suite's and its run-to-run noise serves the baseline
# comparison (--noise): the suite's most stable fast instances on this
# machine's device.
AA_SIZE = 6            # instances: a noise figure for several variants, few enough for 8+ quick rounds
AA_MAX_SECONDS = 0.01  # per iteration at most: a round of the subset takes about a second
# The role survey runs one smoke instance of each variant, once: seconds.
SURVEY_ARGS = ["--profile=smoke", "--benchmark_min_time=0.001", "--benchmark_repetitions=1", "--no-progress"]
SURVEY_TIMEOUT = 300.0  # seconds: a hung instance must not hold the night


def repetitions_needed(instances, alpha=0.05):
    """The repetitions per side that let a two-file comparison of this many
    instances decide at all: the exact Mann-Whitney test's smallest p must
    pass Holm's first step (alpha / instances)."""
    from regress.stats import ranks  # numpy, loaded by the nights that size a suite
    return ranks.sizes_for(alpha / max(1, instances), "mw") or 64


def with_repetitions(timing, needed):
    """The suite's timing arguments with at least `needed` repetitions."""
    out, have = [], None
    for a in timing:
        if a.startswith("--benchmark_repetitions="):
            have = int(a.split("=", 1)[1])
            a = "--benchmark_repetitions=%d" % max(have, needed)
        out.append(a)
    if have is None:
        out.append("--benchmark_repetitions=%d" % needed)
    return out, have


def variant_of(name):
    """Family/Variant of a run name."""
    return "/".join(name.split("/")[:2])


def survey_roles(bench, workdir, variants=None):
    """{Family/Variant: role} as bench reports it, from one smoke instance of
    each variant (of `variants` when given) run once: seconds. A variant
    whose instance wrote no entry has no role here, and is kept in the
    suite."""
    first = {}
    for n in launch.list_tests(bench, SURVEY_ARGS):
        if variants is None or variant_of(n) in variants:
            first.setdefault(variant_of(n), n)
    if not first:
        return {}
    out = os.path.join(workdir, "roles.json")
    launch.run(bench, SURVEY_ARGS + ["--benchmark_filter=" + launch.exact_filter(sorted(first.values()))], out,
               os.path.join(workdir, "roles.log"), timeout=SURVEY_TIMEOUT)
    try:
        run_ = results.load(out)
    except results.LoadError:
        return {}
    return {"%s/%s" % (e.run.family, e.run.variant): e.role for e in run_.entries if e.role}


def select_exclusions(names, roles):
    """A Python regular expression of the instances (of `names`, what the
    suite's arguments select) that a night leaves out: the instances of
    variants whose role is baseline but those a speedup chart divides by
    (speedup_baselines), instances with a ranks argument (they need a
    launcher, mpirun), and every size but the middle one of a wide block
    sweep (three or more sizes, the largest at least WIDE_SWEEP times the
    smallest). None when nothing is left out."""
    parts = baseline_exclusions(names, roles)
    blocks = {}
    for n in names:
        try:
            rn = results.parse_run_name(n)
        except ValueError:
            continue
        if "ranks" in rn.args:
            parts.append("/ranks:")
        if "block" in rn.args:
            blocks.setdefault(variant_of(n), set()).add(rn.args["block"])
    for v, sizes in sorted(blocks.items()):
        numeric = sorted(int(b) for b in sizes if b.isdigit())
        if len(numeric) == len(sizes) >= 3 and numeric[-1] >= WIDE_SWEEP * numeric[0]:
            middle = numeric[len(numeric) // 2]
            drop = [str(b) for b in numeric if b != middle]
            parts.append("^%s/.*/block:(?:%s)(?:/|$)" % (re.escape(v), "|".join(drop)))
    parts = list(dict.fromkeys(parts))
    return "|".join(parts) if parts else None


def speedup_baselines(names, roles):
    """The baseline instances of `names` that a speedup chart divides by: a
    threaded variant's speedup (threads, no ranks) is over its family's
    baseline at the same problem, one thread (plots/report_charts.py)."""
    parsed = {}
    for n in names:
        try:
            parsed[n] = results.parse_run_name(n)
        except ValueError:
            continue
    threaded = {(rn.family, rn.problem()) for n, rn in parsed.items()
                if roles.get(variant_of(n)) == "variant" and "threads" in rn.args and "ranks" not in rn.args}
    return {n for n, rn in parsed.items()
            if roles.get(variant_of(n)) == "baseline" and rn.args.get("threads", "1") == "1"
            and "ranks" not in rn.args and (rn.family, rn.problem()) in threaded}


def baseline_exclusions(names, roles):
    """The parts of select_exclusions that leave out the baselines, the
    serial references the others are checked against (some take seconds a
    run on the large problems): a baseline variant whole, or, where a speedup
    chart divides by some of its instances, its other instances by name."""
    kept = speedup_baselines(names, roles)
    parts = []
    for v in sorted(v for v, role in roles.items() if role == "baseline"):
        mine = [n for n in names if variant_of(n) == v]
        if not any(n in kept for n in mine):
            parts.append("^%s/" % re.escape(v))
            continue
        drop = [n for n in mine if n not in kept]
        if drop:
            parts.append("^(?:%s)$" % "|".join(re.escape(n) for n in drop))
    return parts


def aa_subset(run_, device, size=AA_SIZE):
    """The A/A instances: passed, role variant, on `device`, at most
    AA_MAX_SECONDS per iteration, the `size` with the smallest spread of the
    suite's repetitions (coefficient of variation), one per variant first."""
    times = {}
    for e in run_.entries:
        if e.aggregate or e.disposition != "passed" or e.role != "variant" or e.device != device:
            continue
        t = e.seconds()
        if t is not None and t > 0:
            times.setdefault(e.run_name, []).append(t)
    spread = []
    for name, ts in times.items():
        if len(ts) < 2 or statistics.median(ts) > AA_MAX_SECONDS:
            continue
        spread.append((statistics.pstdev(ts) / statistics.mean(ts), name))
    spread.sort()
    chosen, seen = [], set()
    for cv, name in spread:            # the most stable of each variant first
        if variant_of(name) not in seen:
            seen.add(variant_of(name))
            chosen.append(name)
    for cv, name in spread:            # then the most stable of the rest
        if name not in chosen:
            chosen.append(name)
    return sorted(chosen[:size])


def aa_choice(run_, gpu):
    """The A/A subset on this host's device (the GPU's where there is one);
    a suite that ran none there (a CPU-only filter on a GPU host) checks the
    comparator on the other device's instances instead."""
    first, other = ("gpu", "cpu") if gpu else ("cpu", "gpu")
    return aa_subset(run_, first) or aa_subset(run_, other)
