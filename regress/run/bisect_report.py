"""The bisection's report: report.json's document and report.md, the range,
every step and the culprits with their evidence."""
from regress.load import fmt
from regress.run.bisect import CHANGED, STATE_FORMAT, _brief, describe_commit


def report(search, params, evidence=None):
    """The report document: the range, every step, the culprits with their evidence."""
    repo = params["repo"]
    culprits = []
    for c in search.culprits:
        entry = dict(c)
        entry.update(describe_commit(repo, c["commit"]))
        entry["evidence"] = (evidence or {}).get(c["commit"], {})
        culprits.append(entry)
    moved = {n: _brief(r) for n, r in search.ends.items() if r["verdict"] in CHANGED}
    return {
        "parbench_bisect": STATE_FORMAT,
        "repo": repo, "good": params["good"], "bad": params["bad"], "commits": len(params["commits"]) - 1,
        "first_parent": params["first_parent"], "bench_args": params["bench_args"],
        "builds": {sha: meta for sha, meta in search.builds().items() if sha in params["commits"]},
        "skipped": search.skipped,
        "ends": moved,
        "ends_compared": {n: _brief(r) for n, r in search.ends.items()},
        "same_code_at_the_ends": sorted(n for n, r in search.ends.items() if r.get("same_code")),
        "steps": search.steps, "culprits": culprits,
        "not_monotonic": search.not_monotonic, "undecided": search.undecided,
        "summary": summary_line(search),
    }


def summary_line(search):
    if not any(r["verdict"] in CHANGED for r in search.ends.values()):
        return "no culprit: GOOD and BAD differ in no benchmark (%d compared)" % len(search.ends)
    parts = []
    for c in search.culprits:
        who = c["commit"][:12] if len(c["candidates"]) == 1 else "one of %s" % ", ".join(
            s[:12] for s in c["candidates"])
        parts.append("%s for %d benchmark%s (chance wrong %s)" % (
            who, len(c["benchmarks"]), "" if len(c["benchmarks"]) == 1 else "s", _chance(c["chance_wrong"])))
    line = "culprit%s: %s" % ("s" if len(parts) != 1 else "", "; ".join(parts) or "none decided")
    if search.not_monotonic:
        line += "; not monotonic at %s" % ", ".join(n["commit"][:12] for n in search.not_monotonic)
    if search.undecided:
        k = sum(len(u["benchmarks"]) for u in search.undecided)
        line += "; %d benchmark%s undecided" % (k, "" if k == 1 else "s")
    return line


_pct = fmt.pct


def _chance(p):
    """An upper bound on a probability, as the report prints it."""
    return "< 1e-12" if p < 1e-12 else "<= %.2g" % p


def render_markdown(doc):
    out = ["# Bisection: %s" % doc["summary"], "",
           "Range `%s..%s`, %d commits (%s); bench arguments `%s`." % (
               doc["good"][:12], doc["bad"][:12], doc["commits"],
               "first parents" if doc["first_parent"] else "every parent", " ".join(doc["bench_args"])), ""]
    ends = doc.get("ends_compared") or doc["ends"]
    if ends:
        out += ["## GOOD against BAD", "", "| benchmark | verdict | change | interval | p |",
                "| --- | --- | ---: | ---: | ---: |"]
        for n, r in sorted(ends.items(), key=lambda kv: (kv[1]["verdict"] not in CHANGED, kv[0])):
            ci = r.get("ci") or [None, None]
            out.append("| `%s` | %s | %s | %s ... %s | %s |" % (
                n, r["verdict"], _pct(r.get("change")), _pct(ci[0]), _pct(ci[1]), "%.2g" % r["p"] if "p" in r else "-"))
        out.append("")
    for c in doc["culprits"]:
        out += ["## Culprit `%s`: %s" % (c["commit"][:12], c["subject"]), "",
                "%s, %s. Benchmarks: %s. Chance that it is wrong, under the measured noise: %s "
                "(the sum over steps %s)." % (c["author"], c["date"], ", ".join("`%s`" % n for n in c["benchmarks"]),
                                              _chance(c["chance_wrong"]), ", ".join(map(str, c["steps"])) or "-"), ""]
        if len(c["candidates"]) > 1:
            out += ["One of %s: the commits between did not build." % ", ".join(
                "`%s`" % s[:12] for s in c["candidates"]), ""]
        if c["verify"]:
            out += ["Parent `%s` against it, paired:" % c["parent"][:12], "",
                    "| benchmark | verdict | change | interval | p | rounds |",
                    "| --- | --- | ---: | ---: | ---: | ---: |"]
            for n, r in sorted(c["verify"].items()):
                if not r:
                    continue
                ci = r.get("ci") or [None, None]
                out.append("| `%s` | %s | %s | %s ... %s | %s | %s |" % (
                    n, r["verdict"], _pct(r.get("change")), _pct(ci[0]), _pct(ci[1]),
                    "%.2g" % r["p"] if "p" in r else "-", r.get("rounds", r.get("n_base", "-"))))
            out.append("")
        for section in c["evidence"].get("markdown", []):
            out += section + [""]
    if doc["not_monotonic"]:
        out += ["## Not monotonic", ""]
        for n in doc["not_monotonic"]:
            out.append("- step %d: `%s` differs from both `%s` and `%s` for %s: more than one change in that range; "
                       "both halves were searched" % (n["step"], n["commit"][:12], n["range"][0][:12],
                                                      n["range"][1][:12],
                                                      ", ".join("`%s`" % b for b in n["benchmarks"])))
        out.append("")
    if doc["undecided"]:
        out += ["## Undecided", ""]
        for u in doc["undecided"]:
            out.append("- step %d at `%s` (range `%s..%s`): %s: like both ends or ambiguous after the comparator's "
                       "cap; rerun with more rounds (--max-rounds) or on a quieter machine" % (
                           u["step"], u["commit"][:12], u["range"][0][:12], u["range"][1][:12],
                           ", ".join("`%s`" % b for b in u["benchmarks"])))
        out.append("")
    if doc["skipped"]:
        out += ["## Skipped", ""] + ["- `%s`: %s" % (s[:12], why) for s, why in sorted(doc["skipped"].items())] + [""]
    built = [(sha, b) for sha, b in doc["builds"].items() if b.get("ok")]
    out += ["## Builds", "", "%d commits built, %.0f s in all; %d did not build." % (
        len(built), sum(b.get("seconds") or 0 for _, b in built), len(doc["builds"]) - len(built)), ""]
    if not doc["steps"]:
        return "\n".join(out) + "\n"
    out += ["## Steps", "", "| step | range | commit | benchmark | against the lower end | against the upper end | "
            "placed | chance wrong |", "| ---: | --- | --- | --- | --- | --- | --- | ---: |"]
    for s in doc["steps"]:
        for n, b in sorted(s["benchmarks"].items()):
            def v(r):
                if not r:
                    return "-"
                return "%s %s (p %s, %s rounds)" % (r["verdict"], _pct(r.get("change")),
                                                    "%.2g" % r["p"] if "p" in r else "-", r.get("rounds", "-"))
            out.append("| %d | %d commits | `%s` | `%s` | %s | %s | %s | %s |" % (
                s["step"], s["hi"] - s["lo"], s["commit"][:12], n, v(b["vs_lower"]), v(b["vs_upper"]), b["class"],
                _chance(b["chance_wrong"]) if b["chance_wrong"] is not None else "-"))
    return "\n".join(out) + "\n"
