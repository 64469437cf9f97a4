"""A whole comparison from loaded runs: two files (read_files, then
decide_files once the run-to-run noise is known), or the paired rounds of
compare --run (compare_rounds; regress/run/rounds.py reads them from the
work folder). Each gives a Comparison."""
from dataclasses import dataclass, field
from typing import Optional

from regress.verdict import across
from regress.verdict.checks import check_fingerprint
from regress.verdict.document import describe_run
from regress.verdict.judge import compare, controls
from regress.verdict.samples import InputError, NotComparable, collect, load_run, merge_rounds, metric_direction, scale
from regress.verdict.sequential import sequential_rows
from regress.verdict.settings import FRACTION_OF_CEILING, Metric


@dataclass
class Comparison:
    """The rows of a comparison and what the document says about it."""
    rows: list                 # Row, one per benchmark
    base: dict                 # describe_run of each side
    new: dict
    warnings: list
    metric: Metric
    pending: Optional[tuple] = None   # sequential, stopped before a look: (next look, undecided names)
    looks: list = field(default_factory=list)   # sequential: the looks
    across: Optional[dict] = None     # --across-hardware: the machines, what is not comparable (across.summary)


def _filtered(a, b, settings):
    """--filter applied to both sides; --noise's coverage noted."""
    if settings.filter:
        a = {k: v for k, v in a.items() if settings.filter.search(k)}
        b = {k: v for k, v in b.items() if settings.filter.search(k)}
        if not a and not b:
            raise InputError("--filter %s matches no benchmark" % settings.filter.pattern)
    if settings.noise_given:
        names = set(a) | set(b)
        known = sum(1 for k in names if k in settings.noise)
        if not known:
            raise InputError("--noise: the file has the run-to-run noise of none of these benchmarks")
        line = "--noise covers %d of %d benchmarks; the other %d use %s" % (
            known, len(names), len(names) - known,
            "the prior for their device and family" if settings.mode == "files" else "the noise their rounds measure")
        # A sequential --run analyses its rounds once per look: one note.
        if known < len(names) and line not in settings.noise_model.describe:
            settings.noise_model.describe.append(line)
    return a, b


def _machine_words(run):
    ctx = run.context
    return "%s, %s cores%s" % (ctx.get("cpu_model") or "an unnamed CPU", ctx.get("num_cpus", "?"),
                               ", " + ctx["gpu"] if ctx.get("gpu") else "")


def check_in_common(a, b, base_run, new_run):
    """NotComparable, one line with the likely cause, when no benchmark is
    measured on both sides: a verdict over nothing is no verdict."""
    if any(k in b and a[k].measured() and (b[k].measured() or b[k].errors) for k in a):
        return  # an error entry in NEW is a verdict (ERROR)
    named = set(a) & set(b)
    if named:
        why = "the %d benchmarks both name were measured on one side at most (unsupported or failed)" % len(named)
    else:
        base_m, new_m = _machine_words(base_run), _machine_words(new_run)
        why = ("different machines (BASE %s; NEW %s), whose thread and size axes differ" % (base_m, new_m)
               if base_m != new_m else "a different selection (--benchmark_filter, --profile or --filter)")
    raise NotComparable("nothing to compare: BASE has %d benchmarks, NEW %d, none measured on both sides: %s"
                        % (len(a), len(b), why))


def _no_metric_warning(a, b, settings, warn):
    n = len({k for side in (a, b) for k, v in side.items() if v.no_metric})
    if not n:
        return []
    line = "%d benchmarks have no %s counter; left out" % (n, settings.metric)
    warn("warning: " + line)
    return [line]


def _kinds(runs):
    return {k: v.get("kind") for run in runs for k, v in run.counter_kinds.items()}


def _one_repetition(side, what, warn):
    counts = [len(s.values) for s in side.values() if s.values]
    if counts and max(counts) < 2:
        line = ("%s has 1 repetition per benchmark: too few to decide (AMBIGUOUS, never a gate); "
                "run with --benchmark_repetitions=10 or more" % what)
        warn("warning: " + line)
        return [line]
    return []


@dataclass
class Files:
    """Two files read, their samples paired by name: what the run-to-run
    noise is looked up for (--history, regress/store/noise.py) before the
    verdicts (decide_files)."""
    base_path: str
    new_path: str
    base_run: object        # results.Run
    new_run: object
    base: dict              # {name: Sample}
    new: dict
    metric: Metric
    soft: list              # soft fingerprint differences: (key, base value, new value)
    not_comparable: list = field(default_factory=list)   # across hardware: (name, why it has no fraction)

    def measured(self):
        """The benchmarks measured on both sides."""
        return sorted(k for k in self.base if k in self.new and self.base[k].values and self.new[k].values)


def read_files(base_path, new_path, settings, warn):
    """Two files: entries paired by run name, every repetition a value."""
    base = load_run(base_path, "BASE")
    new = load_run(new_path, "NEW")
    if settings.across:
        # Each side against its own run's ceilings: a fraction, higher is better.
        metric = Metric(FRACTION_OF_CEILING, True, "")
        ceil = across.read_ceilings([("BASE", base_path, base), ("NEW", new_path, new)])
    else:
        metric = metric_direction([base, new], settings.metric)
        ceil = [None, None]
    a = collect(base, settings.metric, metric.higher_better, ceil=ceil[0])
    b = collect(new, settings.metric, metric.higher_better, ceil=ceil[1])
    scale(b, settings.scale_new)
    a, b = _filtered(a, b, settings)
    lost = []
    if settings.across:
        a, b, lost = across.comparable(a, b)
    check_in_common(a, b, base, new)
    soft = check_fingerprint(base, new, [a[k] for k in a if k in b], warn, settings.across)
    return Files(base_path, new_path, base, new, a, b, metric, soft, lost)


def decide_files(files, settings, warn):
    """The Comparison of two files read (read_files)."""
    if not settings.history and not settings.noise_given:
        settings.noise_model.describe.append(
            "run-to-run noise from the prior per device and family (regress/stats/noise.py); --history DIR gives "
            "this machine's own")
    a, b = files.base, files.new
    warnings = ["%s differs (BASE %r, NEW %r)" % s for s in files.soft]
    for what, run, path in (("BASE", files.base_run, files.base_path), ("NEW", files.new_run, files.new_path)):
        warnings += ["%s %s: %s" % (what, path, w) for w in run.warnings]
    warnings += _one_repetition(a, "BASE", warn) + _one_repetition(b, "NEW", warn)
    warnings += _no_metric_warning(a, b, settings, warn)
    summary = None
    if settings.across:
        summary = across.summary(_machine_words(files.base_run), _machine_words(files.new_run), files.not_comparable)
        line = across.warning(files.not_comparable)
        if line:
            warn("warning: " + line)
            warnings.append(line)
    rows = compare(a, b, settings, files.metric, _kinds((files.base_run, files.new_run)))
    controls(rows)
    return Comparison(rows, describe_run(files.base_run, files.base_path), describe_run(files.new_run, files.new_path),
                      warnings, files.metric, across=summary)


def compare_rounds(runs, described, settings, warn, looks, done, duet_names=()):
    """Paired rounds, loaded ({"base": [Run per round], "new": [...]}) and
    described ((BASE, NEW): what the document says of each side): a fixed
    comparison decides once over all of them; with looks, a sequential one
    decides look by look over the `done` rounds. duet_names: the benchmarks
    whose rounds ran in duet (regress/run/duet.py); each row says which way
    its rounds ran."""
    metric = metric_direction(runs["base"] + runs["new"], settings.metric)
    a = merge_rounds([collect(run, settings.metric, metric.higher_better, group=True) for run in runs["base"]])
    b = merge_rounds([collect(run, settings.metric, metric.higher_better, group=True) for run in runs["new"]])
    scale(b, settings.scale_new)
    a, b = _filtered(a, b, settings)
    check_in_common(a, b, runs["base"][0], runs["new"][0])
    soft = check_fingerprint(runs["base"][0], runs["new"][0], [a[k] for k in a if k in b], warn)
    warnings = ["%s differs (BASE %r, NEW %r)" % s for s in soft]
    kinds = _kinds(runs["base"][:1] + runs["new"][:1])
    warnings += _no_metric_warning(a, b, settings, warn)
    pending = None
    if looks:
        rows, pending = sequential_rows(a, b, settings, metric, kinds, looks, done)
    else:
        rows = compare(a, b, settings, metric, kinds)
    for row in rows:
        if row.n_base is not None:
            row.round_mode = "duet" if row.name in duet_names else "interleaved"
    controls(rows)
    return Comparison(rows, described[0], described[1], warnings, metric, pending, list(looks or []))
