"""What ci/trends reads from a history and the nightly job's files, and
writes back: one machine chosen, its benchmarks' series read and analysed
(regress/stats/series.py), where its segments start, the nightly's A/A
ledger, the culprits its bisections named, the alerts raised and closed
from the confirmed changes, and the counts of all that. Errors are the
store's, in one line (HistoryError, AlertError); the tool says them."""
import glob
import json
import os

from regress.stats import decide, health
from regress.stats.series import Series, measured, metric_points
from regress.store import alerts
from regress.store import qualification
from regress.store.history import HistoryError, describe_machine, segment_changes

MODE = "files"           # the floors of compare for two files: one nightly run against another
AA_LEDGER = "aa-ledger.jsonl"  # the nightly's A/A false alarms, in the history directory
ALERT_SETS = "alert-sets.jsonl"  # each night's alerted benchmarks (gate health), in the history directory


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
                                   "up": e.get("up") if isinstance(e.get("up"), int) else None,
                                   "down": e.get("down") if isinstance(e.get("down"), int) else None,
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


# ------------------------------------------------------------ the gate's health

def alerted_now(changes, alert_rows):
    """A night's alert set: the benchmarks of the open alerts and of the
    tentative changes, each with its direction."""
    names = {"%s %s" % (b["name"], a["direction"]) for a in alert_rows if a["state"] in alerts.OPEN
             for b in a["benchmarks"]}
    names |= {"%s %s" % (c["name"], c["direction"]) for c in changes if c["status"] == "tentative"}
    return sorted(names)


def record_alert_set(hist, machine, run, names):
    """Appends tonight's alert set (the latest run's) to HIST/alert-sets.jsonl;
    a later record of the same run replaces it when read. A history that
    never alerted stays as it was: its sets are empty, and empty sets
    overlap in nothing to measure."""
    path = os.path.join(hist, ALERT_SETS)
    if not names and not os.path.exists(path):
        return
    entry = {"machine": machine, "run_id": run["id"], "date": run["date"], "alerted": names}
    with open(path, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


def read_alert_sets(hist, machine):
    """[(date, set of names)] of the machine's nights, in date order, the
    last record of each run kept; unreadable lines skipped."""
    by_run = {}
    path = os.path.join(hist, ALERT_SETS) if hist else None
    if path and os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    e = json.loads(line)
                    if e.get("machine") == machine and isinstance(e.get("alerted"), list):
                        by_run[e["run_id"]] = (str(e.get("date") or ""), frozenset(map(str, e["alerted"])))
                except (ValueError, AttributeError, TypeError, KeyError):
                    continue
    return sorted(by_run.values(), key=lambda v: v[0])


def gate_health(hist, machine, aa_nights, aa_totals):
    """The gate's health figures (regress/stats/health.py) from the history
    directory's ledgers: consecutive nights' alert-set overlap, the sign test
    of the last nights' A/A changes and alarms, the A/A false-alarm rate with
    its interval, and the machine's qualification."""
    sets = read_alert_sets(hist, machine)
    pairs = [(sets[i - 1], sets[i]) for i in range(1, len(sets))][-health.WINDOW:]
    overlaps = [health.overlap(a[1], b[1]) for a, b in pairs]
    known = [j for j, _, _ in overlaps if j is not None]
    last = aa_nights[-health.WINDOW:]
    # A night is one draw: its benchmarks move together (one machine, one
    # night), so the sign test counts nights by the side most of their
    # changes fell on, and the false-alarm rate nights with any alarm,
    # against the comparator's alpha, which is a night's family-wise rate.
    up = sum(1 for n in last if (n["up"] or 0) > (n["down"] or 0))
    down = sum(1 for n in last if (n["down"] or 0) > (n["up"] or 0))
    slower = sum(1 for n in last if n["counts"].get("SLOWER", 0) > n["counts"].get("FASTER", 0))
    faster = sum(1 for n in last if n["counts"].get("FASTER", 0) > n["counts"].get("SLOWER", 0))
    alarmed = sum(1 for n in aa_nights if n["false_alarms"])
    rate, low, high = health.rate_interval(alarmed, len(aa_nights))
    q_rec = None
    if hist and os.path.exists(os.path.join(hist, qualification.FILE)):
        try:
            st = qualification.State(os.path.join(hist, qualification.FILE))
            q_rec = next((r for r in reversed(st.records) if r.get("machine") == machine), None)
        except qualification.QualificationError:
            q_rec = None
    return {
        "overlap": {"nights": len(sets),
                    "last": None if not pairs else {"dates": [pairs[-1][0][0], pairs[-1][1][0]],
                                                    "jaccard": overlaps[-1][0], "common": overlaps[-1][1],
                                                    "union": overlaps[-1][2]},
                    "mean": sum(known) / len(known) if known else None, "pairs": len(known)},
        "aa_sign": {"nights": len(last), "up": up, "down": down, "p": health.sign_test(up, down),
                    "slower": slower, "faster": faster, "p_alarms": health.sign_test(slower, faster)},
        "false_alarm_rate": {"nights_alarmed": alarmed, "nights": len(aa_nights), "alarms": aa_totals["false_alarms"],
                             "compared": aa_totals["compared"], "rate": rate, "low": low, "high": high,
                             "level": health.LEVEL, "alpha": decide.ALPHA},
        "qualification": None if q_rec is None else {"state": q_rec["state"], "line": qualification.describe(q_rec)},
    }
