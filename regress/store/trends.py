"""What ci/trends reads from a history and the nightly job's files, and
writes back: one machine chosen, its benchmarks' series read and analysed
(regress/stats/series.py), where its segments start, the nightly's A/A
ledger, the culprits its bisections named, the alerts raised and closed
from the confirmed changes, and the counts of all that. Errors are the
store's, in one line (HistoryError, AlertError); the tool says them."""
import glob
import json
import os

from regress.stats import decide
from regress.stats.series import Series, measured, metric_points
from regress.store import alerts
from regress.store.history import HistoryError, describe_machine, segment_changes

MODE = "files"           # the floors of compare for two files: one nightly run against another
AA_LEDGER = "aa-ledger.jsonl"  # the nightly's A/A false alarms, in the history directory


# ------------------------------------------------------------------ the series

def choose_machine(h, wanted):
    """The machines() row of the machine `wanted` names (an id or its
    start), or of the only one; HistoryError when none or a choice to make."""
    machines = h.machines()
    if not machines:
        raise HistoryError("%s holds no runs (ci/history ingest FILE adds one)" % h.dir)
    if wanted:
        mid = h.resolve_machine(wanted)
    elif len(machines) > 1:
        raise HistoryError("the history holds %d machines: choose one with --machine (%s)" % (
            len(machines), "; ".join(describe_machine(m) for m in machines)))
    else:
        mid = machines[0]["machine"]
    return next(m for m in machines if m["machine"] == mid)


def check_metric(metric, runs):
    """HistoryError unless the runs declare `metric` a counter that is better
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
                raise HistoryError("--metric %s: it is better %s; trends follow a counter that is better lower "
                                   "(joules_per_call, a time)" % (metric, k.get("better") or "neither way"))
            return
    raise HistoryError("--metric %s: no run of the machine declares that counter" % metric)


def read_series(h, machine, ordinal, floors, confirm, multiple, metric=None):
    """[Series] of every benchmark of the machine, analysed: its floor from
    `floors` (decide.floor_for, compare's two-file mode; CPU where the device
    is unknown), its points the time or, with `metric`, that counter (a
    benchmark that never measured it is left out)."""
    info_of = h.benchmark_info(machine)
    series = []
    for name in h.names(machine):
        family, device = info_of.get(name, (None, None))
        device = device if device in ("cpu", "gpu") else "cpu"
        floor = decide.floor_for(floors, MODE, family, device)
        points = h.series(name, machine)
        if metric:
            points = metric_points(points, metric)
            if not any(measured(p) for p in points):
                continue
        series.append(Series(name, family, device, floor, points, ordinal, confirm, multiple))
        series[-1].metric = metric
    return series


def run_segments(runs):
    """[(ordinal, run, [[key, old, new]])] where the machine's runs start a new segment."""
    out = []
    for i in range(1, len(runs)):
        if runs[i]["segment"] != runs[i - 1]["segment"]:
            out.append((i, runs[i], [list(c) for c in segment_changes(runs[i - 1]["context"], runs[i]["context"])]))
    return out


# ------------------------------------------------------------ the nightly's files

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
                    if not isinstance(e, dict) or not isinstance(e.get("counts"), dict) or not all(
                            isinstance(e.get(k), (str, type(None))) for k in ("date", "revision")):
                        raise ValueError
                    compared, alarms = int(e["compared"]), int(e["false_alarms"])
                except (ValueError, KeyError, TypeError, RecursionError, OverflowError):
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


def _culprits(doc):
    """The culprits of a ci/bisect report, each a commit with the list of its
    benchmarks, its subject, chance and candidates where they are what the
    report writes (else None); ValueError for a report without a list of them."""
    culprits = doc.get("culprits", []) if isinstance(doc, dict) else None
    if not isinstance(culprits, list):
        raise ValueError("not a report with a list of culprits")
    out = []
    for k in culprits:
        if isinstance(k, dict) and isinstance(k.get("commit"), str) and isinstance(k.get("benchmarks"), list):
            candidates = k.get("candidates")
            out.append({"commit": k["commit"], "benchmarks": k["benchmarks"],
                        "subject": k["subject"] if isinstance(k.get("subject"), str) else None,
                        "chance_wrong": k["chance_wrong"] if type(k.get("chance_wrong")) in (int, float)
                        and 0 <= k["chance_wrong"] <= 1 else None,
                        "candidates": candidates if isinstance(candidates, list) and all(
                            isinstance(x, str) for x in candidates) else None})
    return out


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
            reports[(doc["good"][:12], doc["bad"][:12])] = (path, _culprits(doc))
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue  # a report that cannot be read names no culprit
    for c in changes:
        c["culprit"] = None
        a, b = c.get("revision_before") or "", c.get("revision_after") or ""
        found = reports.get((a[:12], b[:12]))
        if not found:
            continue
        path, culprits = found
        for k in culprits:
            if c["name"] in k["benchmarks"]:
                c["culprit"] = dict(k, report=os.path.join(os.path.dirname(path), "report.md"))
                del c["culprit"]["benchmarks"]


# ------------------------------------------------------------------ alerts

def sync_alerts(hist, machine, changes, series, ordinal):
    """Raise and close the machine's alerts (regress/store/alerts.py) from
    the confirmed changes; each change gets "alert" (id and state), and
    "triaged" when its alert is closed, which keeps it from failing the
    nightly. ([alerts worst first], sync result), or ([], None) for a
    history without a confirmed change and no alert yet, which stays as it
    was. AlertError when the store cannot be written."""
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

    if not confirmed and not os.path.exists(os.path.join(hist, alerts.FILE)):
        return [], None
    with alerts.Alerts(hist) as store:
        result = store.sync(machine, confirmed, recovered)
        rows = store.alerts(machine)
    for c in confirmed:
        if c["alert"] and c["alert"]["state"] not in alerts.OPEN:
            c["triaged"] = c["alert"]["state"]
    return rows, result


def summarise(series, changes, gating, alert_rows):
    """The counts of a machine's trends: benchmarks, those changed, confirmed
    (gating), accepted and tentative regressions, improvements, open alerts."""
    accepted = [c for c in changes if c["accepted"] and c["status"] == "confirmed"]
    return {"benchmarks": len(series), "changed": sum(1 for s in series if s.changes),
            "confirmed_regressions": len(gating), "accepted_regressions": len(accepted),
            "tentative_regressions": sum(1 for c in changes if c["direction"] == "slower"
                                         and c["status"] != "confirmed"),
            "improvements": sum(1 for c in changes if c["direction"] == "faster"),
            "confirmed_improvements": sum(1 for c in changes if c["direction"] == "faster"
                                          and c["status"] == "confirmed"),
            "alerts_open": sum(1 for a in alert_rows if a["state"] in alerts.OPEN)}
