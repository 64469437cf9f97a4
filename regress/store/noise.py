"""The run-to-run noise of each benchmark from this machine's series in the
history store (compare --history): the statistics are regress.stats.noise's,
the series are the store's."""
import os

from regress.store import history
from regress.stats.noise import HISTORY_POINTS, MIN_POINTS, NoiseError, series_noise, tail_factor


def from_history(directory, context, names, log=None):
    """The noise of `names` on the machine that `context` describes, from
    the history store in `directory`: {name: (noise, "history N")}, the
    tail factor and the number of series with too few points."""
    if not os.path.isdir(directory):
        raise NoiseError("--history %s: no such history (ci/history ingest creates one)" % directory)
    try:
        h = history.open_history(directory, log=log or (lambda line: None))
    except history.HistoryError as e:
        raise NoiseError("--history %s: %s" % (directory, e))
    try:
        machine = history.machine_of(context)
        known = h.machines()
        if not any(m["machine"] == machine for m in known):
            hw = ", ".join(sorted("%s / %s" % (m.get("gpu") or "no GPU", m.get("cpu")) for m in known)) or "none"
            raise NoiseError("--history %s: no runs of this machine (%s / %s); it holds: %s"
                             % (directory, context.get("gpu") or "no GPU", context.get("cpu_model"), hw))
        have = set(h.names(machine))
        out, z_all, short = {}, [], 0
        for name in names:
            if name not in have:
                continue
            pts = [p for p in h.series(name, machine) if p.get("disposition") == "passed"]
            s, z = series_noise([p.get("median") for p in pts])
            if s is None:
                short += 1
                continue
            out[name] = (s, "history %d" % min(len(pts), HISTORY_POINTS))
            z_all += z
    finally:
        h.close()
    return out, tail_factor(z_all), short


def load_history(model, directory, context, names, warn):
    """Adds the history's noise to the model; its lines of explanation."""
    measured, tail, short = from_history(directory, context, names)
    for k, v in measured.items():
        if k not in model.measured:
            model.measured[k] = v
    model.tail = max(model.tail, tail)
    line = ("--history %s: run-to-run noise of %d of %d benchmarks from this machine's series"
            % (directory, len(measured), len(names)))
    if short:
        line += "; %d with fewer than %d runs use the prior" % (short, MIN_POINTS)
    if tail > 1.0:
        line += "; its nights disagree more than the offset model (tail factor %.2f)" % tail
    model.describe.append(line)
    return line
