"""The verdict document (compare --json): the rows in table order, the
settings they were decided with, the summary and the exit status. The
console table and the Markdown (regress/report/) render it; a paired one
gives --noise its run-to-run noise (read_noise)."""
import math
import os

from regress import cli
from regress.load import results
from regress.stats import plan
from regress.stats.decide import DEFAULT_FLOORS, EQUIVALENCE_FLOORS, floor_for
from regress.verdict.rows import VERDICTS
from regress.verdict.samples import InputError
from regress.verdict.sequential import sequential_summary

FORMAT = 1


def ordered(rows):
    """Rows of the document (dicts) in table order: by verdict, most urgent
    first; within a verdict the largest changes first (FASTER: the largest
    gain)."""
    rank = {v: i for i, v in enumerate(VERDICTS)}

    def key(r):
        c = r.get("change")
        c = 0.0 if c is None else c
        return (rank[r["verdict"]], c if r["verdict"] == "FASTER" else -c, r["name"])
    return sorted(rows, key=key)


def summary_counts(rows):
    counts = {v: 0 for v in VERDICTS}
    for r in rows:
        counts[r.verdict] += 1
    return counts


def exit_code(rows):
    return cli.EXIT_FAIL if any(r.gates() for r in rows) else cli.EXIT_OK


def describe_exit(code):
    return {cli.EXIT_OK: "nothing regressed",
            cli.EXIT_FAIL: "a confirmed regression or an error entry in NEW"}[code]


def describe_run(run, path):
    ctx = run.context
    return {"label": os.path.basename(str(path)), "path": str(path),
            "revision": ctx.get("parbench_git_revision"),
            "gpu": ctx.get("gpu"), "cpu": ctx.get("cpu_model"),
            "profile": ctx.get("parbench_profile")}


def _settings(settings, tested):
    return {"alpha": settings.alpha, "level": settings.level, "multiple": settings.multiple,
            "threshold_rule": settings.threshold_rule(),
            "floors": {"%s%s" % ("" if f is None else f + "/", d): v
                       for (f, d), v in sorted(settings.floors.items(), key=str)},
            "default_floors": {"%s/%s" % k: v for k, v in sorted(DEFAULT_FLOORS.items()) if k[1] == settings.mode},
            "same_floors": dict(sorted(EQUIVALENCE_FLOORS.items())),
            "tested": tested, "correction": settings.correction_name(),
            "run_noise_tail": settings.noise_model.tail,
            "results_may_differ": settings.results_may_differ, "across_hardware": settings.across}


def add_detectable(doc, settings):
    """Paired: each row's "detectable", the smallest change its rounds find
    with 95% power at the test's level (regress/stats/plan.py), from the
    noise its own interval implies: what SAME or AMBIGUOUS can rule out."""
    if doc["mode"] != "paired":
        return doc
    seq = doc.get("sequential")
    level = seq["level_per_look"] if seq else settings.level
    alpha = seq["alpha_per_look"] if seq else settings.alpha / max(1, doc["settings"]["tested"])
    for b in doc["benchmarks"]:
        noise = plan.effective_noise(b, level, bool(seq))
        if noise and b.get("n_base", 0) >= 2:
            # The SLOWER threshold's floor (paired), not the row's SAME floor.
            floor = floor_for(settings.floors, "paired", b.get("family"),
                              b.get("device") if b.get("device") in ("cpu", "gpu") else "cpu")
            b["detectable"] = plan.paired_detectable(noise, b["n_base"], floor, alpha)
    return doc


def build_document(comparison, settings):
    """The verdict document of a Comparison (regress.verdict.analyse)."""
    rows = comparison.rows
    counts = summary_counts(rows)
    code = exit_code(rows)
    parts = ["%d %s" % (counts[v], v) for v in VERDICTS if counts[v]]
    same_code = sum(1 for r in rows if r.same_code)
    if same_code:
        parts.append("%d of them with the same code (machine or noise, not gating)" % same_code)
    tested = sum(1 for r in rows if r.p is not None)
    scaled = ["NEW's times multiplied by %g (--scale-new)" % settings.scale_new] if settings.scale_new else []
    doc = {
        "parbench_compare": FORMAT,
        "mode": settings.mode,
        "title": _title(comparison, settings),
        "base": comparison.base, "new": comparison.new,
        "metric": {"name": comparison.metric.name or "real_time", "unit": comparison.metric.unit,
                   "describe": comparison.metric.describe()},
        "settings": _settings(settings, tested),
        "same_code": same_code,
        "warnings": list(comparison.warnings) + scaled,
        "notes": list(settings.noise_model.describe),
        "sequential": sequential_summary(rows, settings, comparison.looks),
        "summary": counts,
        "exit": code,
        "summary_line": "%s; exit %d (%s)" % (", ".join(parts) or "nothing compared", code, describe_exit(code)),
        "benchmarks": ordered([r.to_json() for r in rows]),
    }
    if comparison.across is not None:
        doc["across_hardware"] = comparison.across
    return add_detectable(doc, settings)


def _title(comparison, settings):
    base, new = comparison.base["label"], comparison.new["label"]
    if comparison.across is not None:
        machines = comparison.across["base_machine"], comparison.across["new_machine"]
        return "BASE %s (%s) vs NEW %s (%s) (two files, across hardware)" % (base, machines[0], new, machines[1])
    return "BASE %s vs NEW %s (%s)" % (base, new, "paired rounds on this machine" if settings.mode == "paired"
                                       else "two files")


def read_noise(path):
    """{name: run-to-run noise} from the verdict document of a paired
    comparison (compare --noise); InputError, one line, otherwise."""
    try:
        doc = cli.strict_loads(results.read_text(path))  # plain or gzip-compressed
    except (results.DocumentError, ValueError) as e:
        raise InputError("--noise %s: %s" % (path, e))
    if not isinstance(doc, dict) or doc.get("parbench_compare") != FORMAT or \
            not isinstance(doc.get("benchmarks"), list):
        raise InputError("--noise %s: not a compare verdict file (compare --json writes one)" % path)
    if doc.get("mode") != "paired":
        raise InputError("--noise %s: a two-file comparison measures no run-to-run noise; give the verdict "
                         "of a paired (compare --run) A/A run" % path)
    out = {}
    for r in doc["benchmarks"]:
        if isinstance(r, dict) and isinstance(r.get("name"), str):
            v = r.get("noise")
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0:
                out[r["name"]] = float(v)
    return out
