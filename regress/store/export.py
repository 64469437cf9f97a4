"""One run of a history in the formats of other tools' dashboards: Bencher's
BMF JSON and github-action-benchmark's customSmallerIsBetter input (ci/history
export)."""
from regress.store.runs import HistoryError


def export_bmf(run, entries):
    """Bencher Metric Format: {benchmark: {"latency": {value, lower_value,
    upper_value}}}, nanoseconds (Bencher's latency measure): the median of the
    repetitions and their range."""
    return {e["name"]: {"latency": {"value": e["median"] * 1e9, "lower_value": e["low"] * 1e9,
                                    "upper_value": e["high"] * 1e9}} for e in entries}


def export_gab(run, entries):
    """github-action-benchmark's customSmallerIsBetter input: a list of
    {name, unit, value, range, extra}, nanoseconds; range is half the
    repetitions' span."""
    where = "; ".join(x for x in (run.get("revision") and "revision %s" % run["revision"],
                                  run.get("gpu") or run.get("cpu"), run.get("date")) if x)
    return [{"name": e["name"], "unit": "ns", "value": e["median"] * 1e9,
             "range": "\u00b1 %.6g" % ((e["high"] - e["low"]) * 1e9 / 2.0),
             "extra": "median of %d repetitions; %s" % (e["repetitions"], where)} for e in entries]


EXPORTS = {"bmf": export_bmf, "github-action-benchmark": export_gab}


def export_run(h, fmt, machine=None, run_id=None):
    """(run, its passed entries, the document in format `fmt`) of run
    `run_id` (of `machine` when given), or the latest run of the only
    machine; HistoryError, in one line, when there is none or a choice to
    make."""
    runs = h.runs(machine)
    if not runs:
        raise HistoryError("no runs in %s%s" % (h.dir, " for machine %s" % machine if machine else ""))
    if run_id is None:
        machines = {r["machine"] for r in runs}
        if len(machines) > 1:
            raise HistoryError("%d machines in %s: name one with --machine (ci/history machines lists them)"
                               % (len(machines), h.dir))
        run = runs[-1]
    else:
        run = next((r for r in runs if r["id"] == run_id), None)
        if run is None:
            raise HistoryError("no run %d in %s%s" % (run_id, h.dir, " of machine %s" % machine if machine else ""))
    entries = h.passed_entries(run["id"])
    return run, entries, EXPORTS[fmt](run, entries)
