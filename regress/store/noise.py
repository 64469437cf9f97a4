"""The run-to-run noise of each benchmark from this machine's series in the
history store (compare --history): the statistics are regress.stats.noise's,
the series and the alerts are the store's.

The runs of a change that a person has judged real (alerts.JUDGED_REAL:
acknowledged, won't fix, fixed, backed out) are left out of its benchmark's
series: the first run after the change, as its alert holds it, and the runs
within alerts.NEAR_RUNS of it in the machine's run order, the series cut
there. Within NEAR_RUNS because that is how far ci/trends lets a change move
and still be its alert's (alerts.Alerts.sync): the step may lie a run or two
from the run the alert names, and the cut must hold it whatever the
detector finds tonight. The runs after that stay: a change that is real is
the benchmark's new level, whose noise is the one to know. An invalid
alert's runs stay too (alerts.JUDGED_REAL says why)."""
import os

from regress.stats import decide
from regress.stats.noise import MIN_POINTS, NoiseError, pieces, series_noise, tail_factor, timed, window_start
from regress.store import alerts, db, history

FLOOR_MODE = "files"   # the change points of ci/trends: compare's two-file floors


def judged_places(directory, machine, place):
    """{benchmark: [place in the machine's run order]} of the first runs of
    the changes judged real (alerts.judged_real); place: run id -> its place."""
    try:
        found = alerts.judged_real(directory, machine)
    except alerts.AlertError as e:
        raise NoiseError("--history %s: %s" % (db.redact(directory), e))
    return {name: [place[r] for r in runs if r in place] for name, runs in found.items()}


def from_history(directory, context, names, log=None, floors=None):
    """The noise of `names` on the machine that `context` describes, from
    the history store in `directory`: {name: (noise, "history N")}, the
    tail factor, the number of series with too few differences and the
    number of runs left out for changes judged real. floors: compare's
    --floor values ({(family or None, device): fraction}), which set the
    floor of the change points as they set ci/trends'."""
    # A history is a directory or a PostgreSQL URL (the nightly's --store).
    if not db.is_url(directory) and not os.path.isdir(directory):
        raise NoiseError("--history %s: no such history (ci/history ingest creates one)" % directory)
    try:
        h = history.open_history(directory, log=log or (lambda line: None))
    except history.HistoryError as e:
        raise NoiseError("--history %s: %s" % (db.redact(directory), e))
    try:
        machine = history.machine_of(context)
        known = h.machines()
        if not any(m["machine"] == machine for m in known):
            hw = ", ".join(sorted("%s / %s" % (m.get("gpu") or "no GPU", m.get("cpu")) for m in known)) or "none"
            raise NoiseError("--history %s: no runs of this machine (%s / %s); it holds: %s"
                             % (db.redact(directory), context.get("gpu") or "no GPU", context.get("cpu_model"), hw))
        have = set(h.names(machine))
        info = h.benchmark_info(machine)
        place = {r["id"]: i for i, r in enumerate(h.runs(machine))}
        judged = judged_places(directory, machine, place)
        out, z_all, short, left_out = {}, [], 0, 0
        for name in names:
            if name not in have:
                continue
            # A run that did not pass holds no time: skipped, as the detector skips it.
            pts = [p if p.get("disposition") == "passed" else dict(p, median=None) for p in h.series(name, machine)]
            near = judged.get(name, ())
            skip = {i for i, p in enumerate(pts)
                    if any(abs(place[p["run_id"]] - o) <= alerts.NEAR_RUNS for o in near)}
            start = window_start(pts)
            left_out += sum(1 for i in skip if i >= start and timed(pts[i]))
            family, device = info.get(name, (None, None))
            floor = decide.floor_for(floors or {}, FLOOR_MODE, family, device if device in ("cpu", "gpu") else "cpu")
            parts = pieces(pts, floor, skip)
            s, z = series_noise(parts)
            if s is None:
                short += 1
                continue
            out[name] = (s, "history %d" % sum(len(q) for q in parts))
            z_all += z
    finally:
        h.close()
    return out, tail_factor(z_all), short, left_out


def load_history(model, directory, context, names, warn, floors=None):
    """Adds the history's noise to the model; its lines of explanation."""
    found, tail, short, left_out = from_history(directory, context, names, floors=floors)
    for k, v in found.items():
        if k not in model.measured:
            model.measured[k] = v
    model.tail = max(model.tail, tail)
    line = ("--history %s: run-to-run noise of %d of %d benchmarks from this machine's series"
            % (directory, len(found), len(names)))
    if short:
        line += "; %d with fewer than %d differences within segments use the prior" % (short, MIN_POINTS - 1)
    if left_out:
        line += "; %d run%s of changes triaged as real left out" % (left_out, "" if left_out == 1 else "s")
    if tail > 1.0:
        line += "; its nights disagree more than the offset model (tail factor %.2f)" % tail
    model.describe.append(line)
    return line
