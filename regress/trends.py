"""Trends of the nightly history: what changed, where, by how much (ci/trends).

    ci/trends --history DIR --out OUTDIR [--machine ID] [--json FILE]
              [--floor [FAMILY/]DEVICE=PCT] [--confirm N] [--all]

For one machine of the history (regress/history.py; the only one, or --machine),
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
import datetime
import glob
import json
import math
import os
import sys

from regress.store import alerts
from regress.stats import changepoint
from regress.store import db
from regress.store import history
from regress import cli
from regress.load import fmt
from regress.load.fmt import commit_range, day, family_stem, short_rev, when
from regress.stats import decide
from regress.stats.series import Series, measured

TOOL = "trends"
FORMAT = 1
EXIT_OK, EXIT_REGRESSION, EXIT_INPUT = 0, 1, 2
MODE = "files"           # the floors of compare for two files: one nightly run against another
AA_LEDGER = "aa-ledger.jsonl"  # the nightly's A/A false alarms, in the history directory


class TrendsError(Exception):
    """Bad input or usage: one line, exit 2."""


def _stderr(line):
    print("%s: %s" % (TOOL, line), file=sys.stderr, flush=True)


# ------------------------------------------------------------------ helpers

def run_labels(runs):
    """A chart label per run: its day and revision; the time of day where two
    runs would have one label (two nights' jobs on one day), then the run
    number where even that repeats."""
    first = ["%s %s" % (day(r["date"]) or "run %d" % r["id"], short_rev(r["revision"])) for r in runs]
    timed = [("%s %s" % (when(r["date"]).replace(" UTC", ""), short_rev(r["revision"]))
              if first.count(first[i]) > 1 and r["date"] else first[i]) for i, r in enumerate(runs)]
    return [t + (" (run %d)" % r["id"] if timed.count(t) > 1 else "") for t, r in zip(timed, runs)]


def instant(date):
    """An ISO date as an aware datetime (UTC when it has no offset), or None."""
    if not isinstance(date, str):
        return None
    try:
        d = datetime.datetime.fromisoformat(date.strip())
    except ValueError:
        return None
    return d if d.tzinfo is not None else d.replace(tzinfo=datetime.timezone.utc)


def parse_floor(spec):
    try:
        return decide.parse_floor(spec)
    except argparse.ArgumentTypeError as e:
        raise TrendsError(str(e))


def benchmark_info(h, machine):
    """{name: (family, device)} of the machine's entries (the most frequent when they vary)."""
    rows = h._query("SELECT e.name, e.family, e.device, count(*) FROM entries e JOIN runs r ON r.id = e.run_id "
                    "WHERE r.machine = ? GROUP BY e.name, e.family, e.device", (machine,))
    best = {}
    for name, family, device, n in rows:
        key = (device is not None, n, family or "", device or "")
        if name not in best or key > best[name][0]:
            best[name] = (key, family, device)
    return {name: (family, device) for name, (_, family, device) in best.items()}


def metric_points(points, metric):
    """A series' points with the counter `metric` (its median over the run's
    repetitions) in the place of the time; a run without it is unmeasured."""
    out = []
    for p in points:
        q = dict(p)
        v = (p.get("counters") or {}).get(metric)
        ok = isinstance(v, (int, float)) and v > 0 and math.isfinite(v)
        q.update(median=float(v) if ok else None, low=float(v) if ok else None, high=float(v) if ok else None,
                 mad=None, times=[float(v)] if ok else [])
        out.append(q)
    return out


def check_metric(metric, runs):
    """TrendsError unless the runs declare `metric` a counter that is better
    lower (parbench_counters); the newest declaration holds."""
    for r in reversed(runs):
        ctx = r["context"]
        try:
            ctx = json.loads(ctx) if isinstance(ctx, str) else (ctx or {})
        except ValueError:
            continue
        kinds = ctx.get("parbench_counters") or {}
        k = kinds.get(metric)
        if isinstance(k, dict):
            if k.get("better") != "lower":
                raise TrendsError("--metric %s: it is better %s; trends follow a counter that is better lower "
                                  "(joules_per_call, a time)" % (metric, k.get("better") or "neither way"))
            return
    raise TrendsError("--metric %s: no run of the machine declares that counter" % metric)


def rank(c):
    """Worst first: confirmed regressions, tentative regressions, then improvements (confirmed
    first); by size within each."""
    group = {("confirmed", "slower"): 0, ("tentative", "slower"): 1,
             ("confirmed", "faster"): 2, ("tentative", "faster"): 3}[(c["status"], c["direction"])]
    return (group, -abs(c["step"]), c["name"], c["index"])


def run_segments(runs):
    """[(ordinal, run, [[key, old, new]])] where the machine's runs start a new segment."""
    out = []
    for i in range(1, len(runs)):
        if runs[i]["segment"] != runs[i - 1]["segment"]:
            out.append((i, runs[i], [list(c) for c in history.segment_changes(runs[i - 1]["context"],
                                                                              runs[i]["context"])]))
    return out


# ------------------------------------------------------------------ charts

def read_aa_ledger(hist, machine):
    """The nightly job's A/A checks of this machine (HISTORY/aa-ledger.jsonl,
    one line per night: the comparator run with one binary on both sides, so
    every SLOWER or FASTER is a false alarm). Returns (nights, totals);
    unreadable lines are counted in totals["unreadable"], not fatal."""
    nights, unreadable = [], 0
    path = os.path.join(hist, AA_LEDGER) if hist else None
    if path and os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    e = json.loads(line)
                    if not isinstance(e, dict) or not isinstance(e.get("counts"), dict):
                        raise ValueError
                    compared, alarms = int(e["compared"]), int(e["false_alarms"])
                except (ValueError, KeyError, TypeError):
                    unreadable += 1
                    continue
                if e.get("machine") == machine:
                    nights.append({"date": e.get("date"), "revision": e.get("revision"), "compared": compared,
                                   "false_alarms": alarms,
                                   "counts": {str(k): int(v) for k, v in sorted(e["counts"].items())
                                              if isinstance(v, int)}})
    nights.sort(key=lambda n: n["date"] or "")
    compared = sum(n["compared"] for n in nights)
    alarms = sum(n["false_alarms"] for n in nights)
    totals = {"nights": len(nights), "compared": compared, "false_alarms": alarms,
              "rate": alarms / compared if compared else None, "unreadable": unreadable}
    return nights, totals


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
    p.add_argument("--machine", metavar="ID", help="the machine (an id or its start); needed when the history "
                   "holds several")
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


def choose_machine(h, wanted):
    machines = h.machines()
    if not machines:
        raise TrendsError("%s holds no runs (ci/history ingest FILE adds one)" % h.dir)
    if wanted:
        try:
            mid = h.resolve_machine(wanted)
        except history.HistoryError as e:
            raise TrendsError(str(e))
    elif len(machines) > 1:
        raise TrendsError("the history holds %d machines: choose one with --machine (%s)" % (
            len(machines), "; ".join(history.describe_machine(m) for m in machines)))
    else:
        mid = machines[0]["machine"]
    return next(m for m in machines if m["machine"] == mid)


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
    confirm = args.confirm
    if confirm < 1:
        raise TrendsError("--confirm %d: give 1 or more runs" % confirm)
    floors = dict(parse_floor(f) for f in args.floor)
    multiple = changepoint.MULTIPLE
    try:
        h = history.open_history(args.history, log=_stderr)
    except history.HistoryError as e:
        raise TrendsError(str(e))
    with h:
        m = choose_machine(h, args.machine)
        machine = m["machine"]
        runs = h.runs(machine)
        if not runs:
            raise TrendsError("machine %s has no runs" % machine)
        if args.metric:
            check_metric(args.metric, runs)
        ordinal = {r["id"]: i for i, r in enumerate(runs)}
        labels = run_labels(runs)
        info_of = benchmark_info(h, machine)
        series = []
        for name in h.names(machine):
            family, device = info_of.get(name, (None, None))
            device = device if device in ("cpu", "gpu") else "cpu"
            floor = decide.floor_for(floors, MODE, family, device)
            points = h.series(name, machine)
            if args.metric:
                points = metric_points(points, args.metric)
                if not any(measured(p) for p in points):
                    continue
            series.append(Series(name, family, device, floor, points, ordinal, confirm, multiple))
            series[-1].metric = args.metric
    charts_dir = prepare_out(args.out)
    from plots import trend_charts  # matplotlib: only once the input has been read
    one_run = len(runs) == 1
    bounds = run_segments(runs)

    changes = []
    for s in series:
        for c in s.changes:
            d = dict(c)
            d.update(name=s.name, family=s.family, device=s.device, floor=s.floor, stem=s.stem,
                     run_id=s.points[c["index"]]["run_id"])
            changes.append(d)
    changes.sort(key=rank)
    files = args.files or (None if db.is_url(args.history) else args.history)
    attach_culprits(changes, files)
    accepted_through = None
    if args.accepted_through is not None:
        accepted_through = instant(args.accepted_through)
        if accepted_through is None:
            raise TrendsError("--accepted-through %r: not an ISO date (e.g. 2026-11-23T12:32:06+00:00)"
                              % args.accepted_through)
    for c in changes:
        d = instant(c["date"])
        c["accepted"] = bool(accepted_through is not None and d is not None and c["direction"] == "slower"
                             and d <= accepted_through)
    if args.metric:
        alert_rows, alert_sync = [], None
        for c in changes:
            c["alert"] = None
    else:
        alert_rows, alert_sync = sync_alerts(args.history, machine, changes, series, ordinal)
    gating = changepoint.gating(changes)
    accepted = [c for c in changes if c["accepted"] and c["status"] == "confirmed"]
    summary = {"benchmarks": len(series), "changed": sum(1 for s in series if s.changes),
               "confirmed_regressions": len(gating), "accepted_regressions": len(accepted),
               "tentative_regressions": sum(1 for c in changes if c["direction"] == "slower"
                                            and c["status"] != "confirmed"),
               "improvements": sum(1 for c in changes if c["direction"] == "faster"),
               "confirmed_improvements": sum(1 for c in changes if c["direction"] == "faster"
                                             and c["status"] == "confirmed"),
               "alerts_open": sum(1 for a in alert_rows if a["state"] in alerts.OPEN)}
    hardware = m["gpu"] or m["cpu"] or "unknown hardware"
    machine_label = "machine %s: %s" % (machine, "; ".join(x for x in (m["gpu"], m["cpu"]) if x) or hardware)
    revs = [r["revision"] for r in runs if r["revision"]]
    dates = [r["date"] for r in runs if r["date"]]
    description = "History %s, machine %s (GPU: %s; CPU: %s): %d run%s%s%s; %d segment%s." % (
        args.history, machine, m["gpu"] or "none", m["cpu"] or "not named", len(runs), "" if one_run else "s",
        " from %s to %s" % (when(dates[0]), when(dates[-1])) if len(dates) > 1 else
        (" on %s" % when(dates[0]) if dates else ""),
        ", revisions %s .. %s" % (short_rev(revs[0]), short_rev(revs[-1])) if len(revs) > 1 else
        (", revision %s" % short_rev(revs[0]) if revs else ""), len(bounds) + 1, "" if not bounds else "s")
    floors_text = "GPU %s, CPU %s (compare's two-file floors)%s" % (
        fmt.pct(decide.DEFAULT_FLOORS[("gpu", MODE)], signed=False, digits=0, missing=""),
        fmt.pct(decide.DEFAULT_FLOORS[("cpu", MODE)], signed=False, digits=0, missing=""),
        "; --floor " + ", ".join("%s%s=%g%%" % (f + "/" if f else "", d, 100 * v)
                                 for (f, d), v in sorted(floors.items(), key=str)) if floors else "")
    if args.metric:
        description += " Series: %s (the median over each run's repetitions), not the time." % args.metric
    info = {"hardware": hardware, "description": description, "summary": summary,
            "summary_line": summary_line(summary, one_run), "one_run": one_run}

    # charts
    bench_charts, family_charts = set(), []
    if not one_run:
        for s in series:
            if (s.changes or args.all) and any(measured(p) for p in s.points):
                trend_charts.draw_benchmark(s, labels, machine_label, charts_dir)
                bench_charts.add(s.stem)
        families = sorted({s.family or "" for s in series}, key=trend_charts.family_key)
        for fam in families:
            mine = [s for s in series if (s.family or "") == fam]
            if trend_charts.draw_family(fam or None, mine, labels, bounds, machine_label, charts_dir):
                family_charts.append((fam or "(no family)", family_stem(fam or None)))

    aa_nights, aa_totals = read_aa_ledger(files, machine)
    trend_charts.write_page(os.path.join(args.out, "index.html"), info, changes, series, family_charts, bench_charts,
                            bounds, {"confirm": confirm, "multiple": multiple, "floors_text": floors_text,
                                     "history": args.history, "metric": args.metric},
                            (aa_nights, aa_totals), alert_rows)

    keys = ("name", "family", "device", "segment", "floor", "index", "run_id", "revision_before", "revision_after",
            "date", "step", "direction", "p", "threshold", "noise", "runs_after", "status", "accepted", "culprit",
            "alert")
    doc = {"parbench_trends": FORMAT,
           "machine": {"id": machine, "gpu": m["gpu"], "cpu": m["cpu"]},
           "runs": len(runs), "first": dates[0] if dates else None, "last": dates[-1] if dates else None,
           "revisions": [revs[0], revs[-1]] if revs else [],
           "settings": {"accepted_through": args.accepted_through, "confirm": confirm, "multiple": multiple,
                        "metric": args.metric,
                        "max_pvalue": changepoint.MAX_PVALUE,
                        "floors": {"%s%s" % ("" if f is None else f + "/", d): v
                                   for (f, d), v in sorted(floors.items(), key=str)},
                        "default_floors": {d: decide.DEFAULT_FLOORS[(d, MODE)] for d in ("cpu", "gpu")}},
           "summary": dict(summary, fails_nightly=bool(gating)),
           "summary_line": info["summary_line"],
           "segments": [{"run_id": r["id"], "date": r["date"], "revision": r["revision"], "segment": r["segment"],
                         "changed": ch} for _, r, ch in bounds],
           "changes": [{k: c.get(k) for k in keys} for c in changes],
           "alerts": [{"id": a["id"], "state": a["state"], "direction": a["direction"], "worst_step": a["worst_step"],
                       "culprit": a["culprit"], "benchmarks": [b["name"] for b in a["benchmarks"]]}
                      for a in alert_rows],
           "aa": {"summary": aa_totals, "nights": aa_nights}}
    text = json.dumps(cli.finite(doc), indent=2, sort_keys=True, allow_nan=False) + "\n"
    for path in [os.path.join(args.out, "changes.json")] + ([args.json] if args.json else []):
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise TrendsError("cannot write %s: %s" % (path, e.strerror or e))

    out(info["summary_line"])
    for c in changes:
        out("  %-9s %-6s %7s  %s  %s  (%s%s)" % (c["status"], c["direction"], fmt.pct(c["step"], digits=1, missing=""),
                                                 commit_range(c),
                                                 c["name"], day(c["date"]), ", accepted" if c["accepted"] else ""))
    if alert_sync and (alert_sync["raised"] or alert_sync["closed"]):
        out("alerts: %d raised (%s), %d detected fixed (%s); ci/alerts --history %s list" % (
            len(alert_sync["raised"]), ", ".join("#%d" % i for i in alert_sync["raised"]) or "-",
            len(alert_sync["closed"]), ", ".join("#%d" % i for i in alert_sync["closed"]) or "-", args.history))
    out("report: %s" % os.path.join(args.out, "index.html"))
    return EXIT_REGRESSION if gating else EXIT_OK


def sync_alerts(hist, machine, changes, series, ordinal):
    """Raise and close the machine's alerts (regress/alerts.py) from the
    confirmed changes; each change gets "alert" (id and state), and
    "triaged" when its alert is closed, which keeps it from failing the
    nightly. ([alerts worst first], sync result), or ([], None) with one
    line on stderr when the store cannot be written."""
    by_name = {s.name: s for s in series}
    confirmed = [c for c in changes if c["status"] == "confirmed"]
    for c in changes:
        c["alert"] = None
    for c in confirmed:
        c["ordinal"] = by_name[c["name"]].x[c["index"]]

    def recovered(row):
        s = by_name.get(row["name"])
        if s is None:
            return False, "no longer in the history"
        return alerts.recovery(s.points, ordinal, row, measured)

    # A history without a confirmed change, and no alert yet, stays as it was.
    if not confirmed and not os.path.exists(os.path.join(hist, alerts.FILE)):
        return [], None
    try:
        with alerts.Alerts(hist) as store:
            result = store.sync(machine, confirmed, recovered)
            rows = store.alerts(machine)
    except alerts.AlertError as e:
        _stderr("trends: alerts not updated: %s" % e)
        return [], None
    for c in confirmed:
        if c["alert"] and c["alert"]["state"] not in alerts.OPEN:
            c["triaged"] = c["alert"]["state"]
    return rows, result


def attach_culprits(changes, hist):
    """Each change whose commit range ci/bisect searched (the nightly keeps
    its reports in HIST/bisect/RANGE/report.json) gets "culprit": the commit
    it named for this benchmark, its subject, the chance it is wrong and the
    report's path."""
    reports = {}
    for path in sorted(glob.glob(os.path.join(hist, "bisect", "*", "report.json")) if hist else []):
        try:
            with open(path) as f:
                doc = json.load(f)
            reports[(doc["good"][:12], doc["bad"][:12])] = (path, doc)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    for c in changes:
        c["culprit"] = None
        a, b = c.get("revision_before") or "", c.get("revision_after") or ""
        found = reports.get((a[:12], b[:12]))
        if not found:
            continue
        path, doc = found
        for k in doc.get("culprits", []):
            if c["name"] in k.get("benchmarks", []):
                c["culprit"] = {"commit": k["commit"], "subject": k.get("subject"),
                                "chance_wrong": k.get("chance_wrong"), "candidates": k.get("candidates"),
                                "report": os.path.join(os.path.dirname(path), "report.md")}


def main(argv=None, out=print):
    try:
        args = make_parser().parse_args(argv)
        return run(args, out)
    except TrendsError as e:
        _stderr(str(e))
        return EXIT_INPUT


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
