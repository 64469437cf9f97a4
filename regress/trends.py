"""Trends of the nightly history: what changed, where, by how much (ci/trends).

    ci/trends --history DIR --out OUTDIR [--machine ID] [--json FILE]
              [--floor [FAMILY/]DEVICE=PCT] [--confirm N] [--all]

For one machine of the history (regress/store/history.py; the only one, or --machine),
every benchmark's series is searched for change points (regress/stats/changepoint.py:
E-Divisive means, a t-test between the segments, the comparator's threshold
max(floor, 2 x the run-to-run noise)). A history is per machine fingerprint; a
driver, toolkit or compiler change starts a new segment of it, and the
detector runs on each segment's runs apart: a change of segment is drawn as
such, never reported as a change of the code.

Floors: decide.DEFAULT_FLOORS for two files ("files": GPU 2%, CPU 10%), by
the benchmark's device (CPU when unknown); --floor overrides them as in
ci/compare. A change with fewer than --confirm runs from it on (its own
included) is tentative; only a confirmed regression fails (exit 1).

Writes OUTDIR/index.html (offline: styles and the table sorter inline, the
charts beside it in OUTDIR/charts/ as PNG and SVG): the machine, runs, dates
and revisions; a summary line; every change, worst first (confirmed
regressions by size, then tentative ones, then improvements), each linking
to its benchmark's chart; one chart per changed benchmark (every benchmark
with --all) and one normalised chart per family. OUTDIR/changes.json (and
--json FILE): every change with its benchmark, family, device and segment,
and the counts; byte-identical when rerun on the same history.

--metric COUNTER follows a counter each run stored (the median over its
repetitions) instead of the time: one that is better lower, such as
joules_per_call, the energy series; "slower" then reads "more of it". Its
changes are reported, not raised as alerts (those follow the time).

Exit status: 0 no confirmed regression; 1 a confirmed regression; 2 bad input
or usage (one line "trends: ...")."""
import argparse
import dataclasses
import json
import os
import sys

from regress import cli
from regress.load import fmt
from regress.load.fmt import commit_range, day, family_stem, short_rev, when
from regress.stats import changepoint
from regress.stats import health
from regress.stats import decide
from regress.stats import series as series_mod
from regress.stats.series import measured
from regress.store import alerts
from regress.store import db
from regress.store import history
from regress.store import ledger as ledger_mod
from regress.store import trends as store
from regress.store.trends import MODE, attach_culprits

TOOL = "trends"
FORMAT = 1
EXIT_OK, EXIT_REGRESSION, EXIT_INPUT = 0, 1, 2


class TrendsError(Exception):
    """Bad input or usage: one line, exit 2."""


def _stderr(line):
    print("%s: %s" % (TOOL, line), file=sys.stderr, flush=True)


@dataclasses.dataclass
class Trends:
    """One machine's trends, as the steps of run() find them."""
    machine: dict               # its row of History.machines(): machine, gpu, cpu, ...
    runs: list                  # History.runs(machine), in series order
    ordinal: dict               # run id -> its place in runs
    series: list                # [stats.series.Series]
    confirm: int
    floors: dict
    multiple: float = changepoint.MULTIPLE
    files: str = None           # where the nightly keeps its A/A ledger and bisection reports
    bounds: list = dataclasses.field(default_factory=list)     # store.run_segments
    changes: list = dataclasses.field(default_factory=list)    # worst first
    alert_rows: list = dataclasses.field(default_factory=list)
    alert_sync: dict = None
    gating: list = dataclasses.field(default_factory=list)     # the confirmed regressions that fail
    summary: dict = None
    aa: tuple = None            # the A/A ledger: (nights, totals)
    health: dict = None         # store.gate_health
    ledger: dict = None         # regress/store/ledger.py


# ------------------------------------------------------------------ helpers

def run_labels(runs):
    """A chart label per run: its day and revision; the time of day where two
    runs would have one label (two nights' jobs on one day), then the run
    number where even that repeats."""
    first = ["%s %s" % (day(r["date"]) or "run %d" % r["id"], short_rev(r["revision"])) for r in runs]
    timed = [("%s %s" % (when(r["date"]).replace(" UTC", ""), short_rev(r["revision"]))
              if first.count(first[i]) > 1 and r["date"] else first[i]) for i, r in enumerate(runs)]
    return [t + (" (run %d)" % r["id"] if timed.count(t) > 1 else "") for t, r in zip(timed, runs)]


def parse_floor(spec):
    try:
        return decide.parse_floor(spec)
    except argparse.ArgumentTypeError as e:
        raise TrendsError(str(e))


# -------------------------------------------------------------------- main

class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise TrendsError("%s (see ci/trends --help)" % message)


def make_parser():
    p = _Parser(prog="trends", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Change points in one machine's nightly history: a page of what changed, worst "
                            "first, with trend charts, and changes.json.",
                epilog="exit status: 0 no confirmed regression; 1 a confirmed regression; 2 bad input or usage "
                       "(one line \"trends: ...\")")
    p.add_argument("--history", required=True, metavar="DIR", help="the history: a directory (ci/history) or a "
                   "PostgreSQL URL")
    p.add_argument("--files", metavar="DIR", help="where the nightly keeps its A/A ledger and bisection reports "
                   "(default: the history directory; none for a URL)")
    p.add_argument("--out", required=True, metavar="OUTDIR", help="where index.html, changes.json and charts/ go")
    p.add_argument("--machine", type=cli.text, metavar="ID",
                   help="the machine (an id or its start); needed when the history holds several")
    p.add_argument("--json", metavar="FILE", help="also write changes.json here")
    p.add_argument("--floor", action="append", default=[], metavar="[FAMILY/]DEVICE=PCT",
                   help="the smallest change reported, per device or family (default: GPU %g%%%%, CPU %g%%%%)"
                   % (100 * decide.DEFAULT_FLOORS[("gpu", MODE)], 100 * decide.DEFAULT_FLOORS[("cpu", MODE)]))
    p.add_argument("--confirm", type=int, default=changepoint.CONFIRM, metavar="N",
                   help="runs from a change on that confirm it (default: %(default)s)")
    p.add_argument("--metric", metavar="COUNTER", help="follow this counter instead of the time: one that is "
                   "better lower, e.g. joules_per_call (its changes are reported, not raised as alerts)")
    p.add_argument("--all", action="store_true", help="a chart for every benchmark, not only the changed ones")
    p.add_argument("--accepted-through", metavar="DATE", help="the date of the run accepted as the machine's "
                   "baseline (ci/nightly passes it): a regression first measured at or before it was accepted "
                   "with that baseline and no longer fails the job (it stays listed, marked accepted)")
    return p


def prepare_out(out):
    if os.path.exists(out) and not os.path.isdir(out):
        raise TrendsError("--out %s is a file, not a directory" % out)
    charts = os.path.join(out, "charts")
    try:
        os.makedirs(charts, exist_ok=True)
        for n in os.listdir(charts):   # an earlier page's charts: this one draws its own
            if (n.endswith(".png") or n.endswith(".svg")) and not n.startswith("."):
                os.remove(os.path.join(charts, n))
    except OSError as e:
        raise TrendsError("cannot write to %s: %s" % (out, e.strerror or e))
    return charts


def summary_line(summary, one_run):
    def n(k, word, plural=None):
        return "%d %s" % (k, word if k == 1 else (plural or word + "s"))
    if one_run:
        return "One run: no trend yet (%s)." % n(summary["benchmarks"], "benchmark")
    return "%s, %s, %s, out of %s%s." % (
        n(summary["confirmed_regressions"], "confirmed regression"),
        n(summary["tentative_regressions"], "tentative regression"),
        n(summary["improvements"], "improvement"), n(summary["benchmarks"], "benchmark"),
        " (and %s accepted with the baseline)" % n(summary["accepted_regressions"], "regression")
        if summary.get("accepted_regressions") else "")


def run(args, out=print):
    """ci/trends: read the machine's series, find their changes, draw and
    write the page and changes.json, say what changed."""
    t = read_trends(args)
    charts_dir = prepare_out(args.out)
    from plots import trend_charts  # matplotlib: only once the input has been read
    t.bounds = store.run_segments(t.runs)
    t.files = args.files or (None if db.is_url(args.history) else args.history)
    find_changes(t, args)
    gate_health(t, args)
    info = page_info(t, args)
    draw_page(trend_charts, t, args, info, charts_dir)
    write_changes(t, args, info)
    say(t, args, info, out)
    return EXIT_REGRESSION if t.gating else EXIT_OK


def read_trends(args):
    """The settings checked and the machine's runs and series read (TrendsError, one line, when they cannot be)."""
    if args.confirm < 1:
        raise TrendsError("--confirm %d: give 1 or more runs" % args.confirm)
    floors = dict(parse_floor(f) for f in args.floor)
    try:
        h = history.open_history(args.history, log=_stderr)
    except history.HistoryError as e:
        raise TrendsError(str(e))
    with h:
        m = _checked(store.choose_machine, h, args.machine)
        runs = h.runs(m["machine"])
        if not runs:
            raise TrendsError("machine %s has no runs" % m["machine"])
        if args.metric:
            _checked(store.check_metric, args.metric, runs)
        ordinal = {r["id"]: i for i, r in enumerate(runs)}
        series = store.read_series(h, m["machine"], ordinal, floors, args.confirm, changepoint.MULTIPLE, args.metric)
    return Trends(m, runs, ordinal, series, args.confirm, floors)


def _checked(step, *args):
    """step(*args), its HistoryError the tool's one line."""
    try:
        return step(*args)
    except history.HistoryError as e:
        raise TrendsError(str(e))


def find_changes(t, args):
    """The changes of every series, worst first, with their culprits, whether
    a baseline accepted them, and their alerts (none for --metric); the
    regressions that fail the job, and the counts."""
    t.changes = series_mod.changes_of(t.series)
    attach_culprits(t.changes, t.files)
    accepted_through = None
    if args.accepted_through is not None:
        accepted_through = series_mod.instant(args.accepted_through)
        if accepted_through is None:
            raise TrendsError("--accepted-through %r: not an ISO date (e.g. 2026-11-23T12:32:06+00:00)"
                              % args.accepted_through)
    series_mod.mark_accepted(t.changes, accepted_through)
    if args.metric:
        for c in t.changes:
            c["alert"] = None
    else:
        try:
            t.alert_rows, t.alert_sync = store.sync_alerts(args.history, t.machine["machine"], t.changes, t.series,
                                                           t.ordinal)
        except alerts.AlertError as e:
            _stderr("alerts not updated: %s" % e)
            t.alert_rows, t.alert_sync = [], None
    t.gating = changepoint.gating(t.changes)
    t.summary = store.summarise(t.series, t.changes, t.gating, t.alert_rows)


def gate_health(t, args):
    """Tonight's alert set into the history directory's ledger (not for
    --metric), then the gate's health figures from the ledgers."""
    t.aa = store.read_aa_ledger(t.files, t.machine["machine"])
    if args.metric or not t.files:
        return
    try:
        store.record_alert_set(t.files, t.machine["machine"], t.runs[-1], store.alerted_now(t.changes, t.alert_rows))
    except OSError as e:
        _stderr("the night's alert set not recorded: %s" % (e.strerror or e))
    t.health = store.gate_health(t.files, t.machine["machine"], *t.aa)
    backfilled = {r["id"] for r in t.runs if (r.get("context") or {}).get("parbench_backfill")}
    t.ledger = ledger_mod.ledger(t.alert_rows, backfilled)


def floors_text(floors):
    """The floors in words: the defaults and any --floor."""
    return "GPU %s, CPU %s (compare's two-file floors)%s" % (
        fmt.pct(decide.DEFAULT_FLOORS[("gpu", MODE)], signed=False, digits=0, missing=""),
        fmt.pct(decide.DEFAULT_FLOORS[("cpu", MODE)], signed=False, digits=0, missing=""),
        "; --floor " + ", ".join("%s%s=%g%%" % (f + "/" if f else "", d, 100 * v)
                                 for (f, d), v in sorted(floors.items(), key=str)) if floors else "")


def page_info(t, args):
    """What the page says of the history: hardware, a description, the summary and its line."""
    m, runs, bounds = t.machine, t.runs, t.bounds
    one_run = len(runs) == 1
    revs = [r["revision"] for r in runs if r["revision"]]
    dates = [r["date"] for r in runs if r["date"]]
    description = "History %s, machine %s (GPU: %s; CPU: %s): %d run%s%s%s; %d segment%s." % (
        args.history, m["machine"], m["gpu"] or "none", m["cpu"] or "not named", len(runs), "" if one_run else "s",
        " from %s to %s" % (when(dates[0]), when(dates[-1])) if len(dates) > 1 else
        (" on %s" % when(dates[0]) if dates else ""),
        ", revisions %s .. %s" % (short_rev(revs[0]), short_rev(revs[-1])) if len(revs) > 1 else
        (", revision %s" % short_rev(revs[0]) if revs else ""), len(bounds) + 1, "" if not bounds else "s")
    if args.metric:
        description += " Series: %s (the median over each run's repetitions), not the time." % args.metric
    return {"hardware": m["gpu"] or m["cpu"] or "unknown hardware", "description": description,
            "summary": t.summary, "summary_line": summary_line(t.summary, one_run), "one_run": one_run}


def draw_page(trend_charts, t, args, info, charts_dir):
    """The charts (a changed benchmark's, every one's with --all; one per
    family) and OUTDIR/index.html."""
    m, series = t.machine, t.series
    machine_label = "machine %s: %s" % (m["machine"], "; ".join(x for x in (m["gpu"], m["cpu"]) if x)
                                        or info["hardware"])
    labels = run_labels(t.runs)
    bench_charts, family_charts = set(), []
    if not info["one_run"]:
        for s in series:
            if (s.changes or args.all) and any(measured(p) for p in s.points):
                trend_charts.draw_benchmark(s, labels, machine_label, charts_dir)
                bench_charts.add(s.stem)
        families = sorted({s.family or "" for s in series}, key=trend_charts.family_key)
        for fam in families:
            mine = [s for s in series if (s.family or "") == fam]
            if trend_charts.draw_family(fam or None, mine, labels, t.bounds, machine_label, charts_dir):
                family_charts.append((fam or "(no family)", family_stem(fam or None)))
    trend_charts.write_page(os.path.join(args.out, "index.html"), info, t.changes, series, family_charts,
                            bench_charts, t.bounds, {"confirm": t.confirm, "multiple": t.multiple,
                                                     "floors_text": floors_text(t.floors), "history": args.history,
                                                     "metric": args.metric}, t.aa, t.alert_rows, t.health,
                            t.ledger)


def write_changes(t, args, info):
    """OUTDIR/changes.json (and --json FILE): every change and the counts, byte-identical when rerun."""
    m, runs = t.machine, t.runs
    revs = [r["revision"] for r in runs if r["revision"]]
    dates = [r["date"] for r in runs if r["date"]]
    keys = ("name", "family", "device", "segment", "floor", "index", "run_id", "revision_before", "revision_after",
            "date", "step", "direction", "p", "threshold", "noise", "runs_after", "status", "accepted", "culprit",
            "alert")
    aa_nights, aa_totals = t.aa
    doc = {"parbench_trends": FORMAT,
           "machine": {"id": m["machine"], "gpu": m["gpu"], "cpu": m["cpu"]},
           "runs": len(runs), "first": dates[0] if dates else None, "last": dates[-1] if dates else None,
           "revisions": [revs[0], revs[-1]] if revs else [],
           "settings": {"accepted_through": args.accepted_through, "confirm": t.confirm, "multiple": t.multiple,
                        "metric": args.metric,
                        "max_pvalue": changepoint.MAX_PVALUE,
                        "floors": {"%s%s" % ("" if f is None else f + "/", d): v
                                   for (f, d), v in sorted(t.floors.items(), key=str)},
                        "default_floors": {d: decide.DEFAULT_FLOORS[(d, MODE)] for d in ("cpu", "gpu")}},
           "summary": dict(t.summary, fails_nightly=bool(t.gating)),
           "summary_line": info["summary_line"],
           "segments": [{"run_id": r["id"], "date": r["date"], "revision": r["revision"], "segment": r["segment"],
                         "changed": ch} for _, r, ch in t.bounds],
           "changes": [{k: c.get(k) for k in keys} for c in t.changes],
           "alerts": [{"id": a["id"], "state": a["state"], "direction": a["direction"], "worst_step": a["worst_step"],
                       "culprit": a["culprit"], "benchmarks": [b["name"] for b in a["benchmarks"]]}
                      for a in t.alert_rows],
           "aa": {"summary": aa_totals, "nights": aa_nights},
           "health": t.health, "ledger": t.ledger}
    text = json.dumps(cli.finite(doc), indent=2, sort_keys=True, allow_nan=False) + "\n"
    for path in [os.path.join(args.out, "changes.json")] + ([args.json] if args.json else []):
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise TrendsError("cannot write %s: %s" % (path, e.strerror or e))


def say(t, args, info, out):
    """The summary line, every change, the alerts raised or closed, and where the page is."""
    out(info["summary_line"])
    for c in t.changes:
        out("  %-9s %-6s %7s  %s  %s  (%s%s)" % (c["status"], c["direction"], fmt.pct(c["step"], digits=1, missing=""),
                                                 commit_range(c),
                                                 c["name"], day(c["date"]), ", accepted" if c["accepted"] else ""))
    sync = t.alert_sync
    if sync and (sync["raised"] or sync["closed"]):
        out("alerts: %d raised (%s), %d detected fixed (%s); ci/alerts --history %s list" % (
            len(sync["raised"]), ", ".join("#%d" % i for i in sync["raised"]) or "-",
            len(sync["closed"]), ", ".join("#%d" % i for i in sync["closed"]) or "-", args.history))
    if t.health:
        for ok, line in health.health_lines(t.health):
            out("health: %s%s" % ("" if ok else "WARNING: ", line))
    out("report: %s" % os.path.join(args.out, "index.html"))


def main(argv=None, out=print):
    try:
        args = make_parser().parse_args(argv)
        return run(args, out)
    except TrendsError as e:
        _stderr(str(e))
        return EXIT_INPUT


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
