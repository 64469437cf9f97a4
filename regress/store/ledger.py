"""The ledger of what the gate caught and missed (ci/alerts ledger, a
section of the trends page), per month of the changes, from the alerts of a
machine (regress/store/alerts.py) and the runs they were found in:

- regressions and improvements confirmed, by their alert's state;
- false alarms: alerts triaged invalid (a person's word that it was noise);
- missed changes: alerts whose change lies in a backfilled run
  (ci/backfill: the context names parbench_backfill), a change of the past
  that no night had alerted;
- nights from a change to its alert (the change's run date to the alert's
  raising) and to its culprit (to the event that named it, or the raising
  when it was raised with one), as medians.

Only the standard library."""
import datetime
import statistics

CAUGHT_STATES = ("untriaged", "acknowledged", "wontfix", "fixed", "backed_out", "detected_fixed")


def _instant(text):
    if not text:
        return None
    try:
        t = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=datetime.timezone.utc)


def _nights(start, end):
    a, b = _instant(start), _instant(end)
    if a is None or b is None:
        return None
    return max(0.0, (b - a).total_seconds() / 86400.0)


def _raised(alert):
    return next((e["at"] for e in alert["events"] if e["state_from"] is None), None)


def _culprit_named(alert):
    """When the alert's culprit was named: its naming event, else its raising."""
    if not alert.get("culprit"):
        return None
    named = next((e["at"] for e in alert["events"] if (e.get("why") or "").startswith("culprit ")), None)
    return named or _raised(alert)


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _month(alert):
    return (alert.get("date") or "")[:7] or "undated"


def ledger(alerts, backfilled_runs, since=None):
    """{"months": [{month, regressions: {state: n}, improvements: {state: n},
    false_alarms, missed, nights_to_alert, nights_to_culprit}], "total":
    the same over all}. backfilled_runs: the ids of the machine's runs
    that ci/backfill made."""
    rows, total = {}, {"alerts": [], "to_alert": [], "to_culprit": []}
    for a in alerts:
        if since and (a.get("date") or "") < since:
            continue
        m = rows.setdefault(_month(a), {"alerts": [], "to_alert": [], "to_culprit": []})
        # An alert judged invalid is a false alarm wherever it was found; a
        # real change found in a backfilled run is one no night had measured.
        missed = a["state"] != "invalid" and any(b["run_id"] in backfilled_runs for b in a["benchmarks"])
        kind = "false_alarm" if a["state"] == "invalid" else "missed" if missed else a["direction"]
        for bucket in (m, total):
            bucket["alerts"].append((kind, a["state"], a["id"]))
            if not missed:
                bucket["to_alert"].append(_nights(a.get("date"), _raised(a)))
                bucket["to_culprit"].append(_nights(a.get("date"), _culprit_named(a)))

    def summarise(bucket):
        out = {"regressions": {}, "improvements": {}, "false_alarms": 0, "missed": 0, "missed_alerts": []}
        for kind, state, aid in bucket["alerts"]:
            if kind == "missed":
                out["missed"] += 1
                out["missed_alerts"].append(aid)
            elif kind == "false_alarm":
                out["false_alarms"] += 1
            else:
                side = out["regressions" if kind == "slower" else "improvements"]
                side[state] = side.get(state, 0) + 1
        out["nights_to_alert"] = _median(bucket["to_alert"])
        out["nights_to_culprit"] = _median(bucket["to_culprit"])
        return out
    return {"months": [dict(summarise(rows[k]), month=k) for k in sorted(rows)], "total": summarise(total)}


def count_text(states):
    """A count by state, "2 (1 fixed, 1 untriaged)", or "0"."""
    n = sum(states.values())
    if not n:
        return "0"
    return "%d (%s)" % (n, ", ".join("%d %s" % (v, k) for k, v in sorted(states.items())))


def nights_text(v):
    return "-" if v is None else "%.1f" % v


def markdown(doc, machine):
    """The ledger as a Markdown table, a month a row and the total last."""
    out = ["### What the gate caught and missed: machine %s" % machine, "",
           "| month | regressions confirmed | improvements confirmed | false alarms (invalid) | missed (found by a "
           "backfill) | nights to alert (median) | nights to culprit (median) |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for m in doc["months"] + [dict(doc["total"], month="**all**")]:
        out.append("| %s | %s | %s | %d | %d | %s | %s |" % (
            m["month"], count_text(m["regressions"]), count_text(m["improvements"]), m["false_alarms"], m["missed"],
            nights_text(m["nights_to_alert"]), nights_text(m["nights_to_culprit"])))
    return "\n".join(out) + "\n"
