"""Evidence for a culprit of ci/bisect: why did this commit move these
benchmarks? Each piece is gathered where its tool is there and says so
where it is not:

  the commit     subject, author, date and diffstat (git);
  the code       the benchmarks' code fingerprints (parbench.code) in the
                 parent's and the culprit's runs: which variants' object
                 code changed, and whether a library version did;
  the kernels    for GPU benchmarks, ci/ptx-diff between the two builds'
                 PTX (kernels changed, appeared or gone), and cuobjdump's
                 resource usage (registers, spills as local memory, shared
                 memory) where it changed;
  the profile    where ncu is installed, an Nsight Compute pass over each
                 GPU benchmark on both builds: duration, DRAM bytes,
                 achieved occupancy, issued instructions and the largest
                 stall reasons, the metrics that moved most first; for CPU
                 benchmarks `perf stat` where perf can read the counters.

gather(search, params, log) returns {culprit commit: {"json": {...},
"markdown": [[lines], ...]}} for regress/bisect.py's report.
"""
import json
import os
import re
import shutil
import subprocess

from regress import launch

NCU_METRICS = ("gpu__time_duration.sum", "dram__bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
               "smsp__inst_issued.sum")
NCU_STALLS = "smsp__pcsamp_warps_issue_stalled_"
PERF_EVENTS = "cycles,instructions,cache-misses,branch-misses"


def _run(cmd, cwd=None, timeout=600, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, "", str(e)
    return p.returncode, p.stdout, p.stderr


def commit_info(repo, parent, culprit):
    rc, stat, _ = _run(["git", "-C", repo, "diff", "--stat=100", parent, culprit])
    files = [ln.split("|")[0].strip() for ln in stat.splitlines() if "|" in ln]
    return {"diffstat": stat.rstrip("\n").splitlines(), "files": files}


def fingerprints(rounds_dir):
    """{benchmark: (code, library_version)} of both sides of a comparison's first round."""
    out = {}
    for side in ("base", "new"):
        path = os.path.join(rounds_dir, "round-01-%s.json" % side)
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        for e in doc.get("benchmarks", []):
            pb = e.get("parbench") if isinstance(e.get("parbench"), dict) else {}
            name = e.get("run_name", e.get("name"))
            out.setdefault(name, {})[side] = (pb.get("code"), pb.get("library_version"), pb.get("device"))
    return out


def code_section(prints, names):
    rows, changed = [], []
    for n in names:
        sides = prints.get(n, {})
        b, a = sides.get("base"), sides.get("new")
        if not b or not a or (b[0] is None and a[0] is None):
            rows.append((n, "-", "-", "no code fingerprint (not a parbench bench, or an older one)"))
            continue
        if b[0] is None or a[0] is None:
            rows.append((n, b[0] or "-", a[0] or "-", "only the %s records its code (the other predates the "
                         "fingerprints): compare the diffstat" % ("parent" if b[0] else "culprit")))
            continue
        what = []
        if b[0] != a[0]:
            what.append("its code changed")
            changed.append(n)
        if b[1] != a[1]:
            what.append("library %s -> %s" % (b[1], a[1]))
        rows.append((n, b[0], a[0], "; ".join(what) or "the same code and libraries: the change is outside the "
                     "variant (timing, inputs, build flags, the machine)"))
    return rows, changed


def ptx_section(search, parent, culprit):
    """ci/ptx-diff between the builds of parent and culprit, rebuilt in the
    worktree (incrementally) with their compile commands."""
    from regress import ptx_diff
    b = search.builder
    build_dir = os.path.join(b.work, os.path.dirname(b.bench) or ".")
    snaps = {}
    for sha in (parent, culprit):
        b._worktree(sha)
        rc = subprocess.run(b.command, shell=True, cwd=b.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, PARBENCH_GIT_REVISION=sha[:12])).returncode
        if rc != 0 or not os.path.isfile(os.path.join(build_dir, "compile_commands.json")):
            return None, "no compile_commands.json in %s: the kernels' PTX could not be compared" % build_dir
        out = os.path.join(b.cache, sha, "ptx")
        if not os.path.isdir(out):
            try:
                ptx_diff.snapshot(build_dir, out)
            except Exception as e:  # noqa: BLE001  any failure is reported, the report goes on
                return None, "ci/ptx-diff snapshot failed: %s" % e
        snaps[sha] = out
    import contextlib
    import io
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            ptx_diff.compare(snaps[parent], snaps[culprit])
    except Exception as e:  # noqa: BLE001
        return None, "ci/ptx-diff compare failed: %s" % e
    return [ln.strip() for ln in buf.getvalue().splitlines() if ln.strip()], None


def resource_usage(binary):
    """{kernel: {"REG": n, "STACK": n, "SHARED": n, "LOCAL": n}} from cuobjdump --dump-resource-usage."""
    tool = shutil.which("cuobjdump") or ("/usr/local/cuda/bin/cuobjdump"
                                         if os.path.exists("/usr/local/cuda/bin/cuobjdump") else None)
    if not tool:
        return None
    rc, out, _ = _run([tool, "--dump-resource-usage", binary], timeout=300)
    if rc != 0:
        return None
    return parse_resource_usage(out)


def parse_resource_usage(out):
    """{kernel: {"REG": n, ...}} of cuobjdump --dump-resource-usage's text
    (the last architecture listed wins: one per build here)."""
    usage, fn = {}, None
    for ln in out.splitlines():
        m = re.search(r"Function (\S+):", ln)
        if m:
            fn = m.group(1)
            continue
        if fn and "REG:" in ln:
            usage[fn] = {k: int(v) for k, v in re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", ln)}
    return usage


def usage_changes(before, after):
    rows = []
    for fn in sorted(set(before) | set(after)):
        b, a = before.get(fn), after.get(fn)
        if b != a:
            rows.append((fn, b, a))
    return rows


def ncu_profile(binary, name, bench_args):
    """{metric: value} summed over the kernels of one benchmark, or None."""
    tool = shutil.which("ncu")
    if not tool:
        return None
    args = launch.strip_filter(bench_args) + ["--benchmark_filter=" + launch.exact_filter([name]),
                                              "--benchmark_min_time=1x", "--benchmark_repetitions=1"]
    rc, out, _ = _run([tool, "--csv", "--page", "raw", "--launch-count", "50",
                       "--metrics", ",".join(NCU_METRICS) + ",regex:" + NCU_STALLS + ".*", binary] + args, timeout=900)
    if rc != 0:
        return None
    return parse_ncu_csv(out)


def parse_ncu_csv(out):
    """{metric: sum over the kernels} of `ncu --csv --page raw`: a header of
    metric names, a row of units, a row per kernel launch; None without one."""
    lines = [ln for ln in out.splitlines() if ln.startswith('"')]
    if len(lines) < 3:
        return None
    import csv
    rows = list(csv.reader(lines))
    head, data = rows[0], rows[2:]
    sums = {}
    for r in data:
        for k, v in zip(head, r):
            if k in NCU_METRICS or k.startswith(NCU_STALLS):
                try:
                    sums[k] = sums.get(k, 0.0) + float(v.replace(",", ""))
                except ValueError:
                    pass
    return sums


def perf_profile(binary, name, bench_args):
    tool = shutil.which("perf")
    if not tool:
        return None
    args = launch.strip_filter(bench_args) + ["--benchmark_filter=" + launch.exact_filter([name])]
    rc, _, err = _run([tool, "stat", "-x,", "-e", PERF_EVENTS, binary] + args, timeout=900)
    if rc != 0:
        return None
    out = {}
    for ln in err.splitlines():
        parts = ln.split(",")
        if len(parts) > 2:
            try:
                out[parts[2]] = float(parts[0])
            except ValueError:
                pass
    return out or None


def moved_most(before, after):
    """(metric, before, after, ratio) sorted by |log ratio|, largest first."""
    import math
    rows = []
    for k in sorted(set(before) & set(after)):
        b, a = before[k], after[k]
        if b > 0 and a > 0:
            rows.append((k, b, a, a / b))
    rows.sort(key=lambda r: -abs(math.log(r[3])))
    return rows


def profiles(tool, profile, names, before_bin, after_bin, bench_args, lines, most=3):
    """(benchmark, moved_most rows) for the first `most` benchmarks that
    `tool` could profile on both builds; what it could not do goes to lines."""
    if not shutil.which(tool):
        lines.append("%s is not installed here: no profile." % tool)
        return
    for n in names[:most]:
        before, after = profile(before_bin, n, bench_args), profile(after_bin, n, bench_args)
        if before and after:
            yield n, moved_most(before, after)
        else:
            lines.append("`%s`: %s gave no figures (permissions, or nothing it could measure)" % (n, tool))


def gather(search, params, log):
    out = {}
    for c in search.culprits:
        parent, culprit, names = c["parent"], c["commit"], c["benchmarks"]
        ev = {"json": {}, "markdown": []}
        info = commit_info(params["repo"], parent, culprit)
        ev["json"]["diffstat"] = info["diffstat"]
        ev["markdown"].append(["### The commit", "", "```"] + info["diffstat"] + ["```"])
        key = "%s-%s" % (parent[:12], culprit[:12])
        prints = fingerprints(os.path.join(params["state"], "rounds", key))
        rows, changed = code_section(prints, names)
        ev["json"]["code"] = [{"benchmark": n, "parent": b, "culprit": a, "says": s} for n, b, a, s in rows]
        ev["markdown"].append(["### The code", "", "| benchmark | parent | culprit | |", "| --- | --- | --- | --- |"] +
                              ["| `%s` | `%s` | `%s` | %s |" % r for r in rows])
        gpu = [n for n in names if (prints.get(n, {}).get("new") or (None, None, None))[2] == "gpu"]
        bins = {s: search.binaries.get(s) for s in (parent, culprit)}
        if gpu and all(bins.values()):
            log("bisect: evidence for %s: the kernels' PTX and resources" % culprit[:12])
            diff, why = ptx_section(search, parent, culprit)
            lines = ["### The kernels", ""]
            if diff is None:
                lines.append(why)
            else:
                ev["json"]["ptx"] = diff
                lines += ["```"] + diff + ["```"]
            ub, ua = resource_usage(bins[parent]), resource_usage(bins[culprit])
            if ub is not None and ua is not None:
                ch = usage_changes(ub, ua)
                ev["json"]["resources"] = [{"kernel": k, "parent": b, "culprit": a} for k, b, a in ch]
                lines += ["", "Resource usage (cuobjdump) that changed: %d kernels" % len(ch)] + [
                    "- `%s`: %s -> %s" % (k[:100], b, a) for k, b, a in ch[:20]]
            else:
                lines += ["", "cuobjdump is not here: no resource usage."]
            ev["markdown"].append(lines)
            prof = ["### Nsight Compute", ""]
            for n, mm in profiles("ncu", ncu_profile, gpu, bins[parent], bins[culprit], params["bench_args"], prof):
                ev["json"].setdefault("ncu", {})[n] = [{"metric": k, "parent": b, "culprit": a} for k, b, a, _ in mm]
                prof += ["`%s`, the metrics that moved most first:" % n, "",
                         "| metric | parent | culprit | ratio |", "| --- | ---: | ---: | ---: |"] + [
                    "| %s | %.4g | %.4g | %.3f |" % r for r in mm[:10]] + [""]
            ev["markdown"].append(prof)
        cpu = [n for n in names if n not in gpu]
        if cpu and all(bins.values()):
            lines = ["### CPU counters", ""]
            for n, mm in profiles("perf", perf_profile, cpu, bins[parent], bins[culprit], params["bench_args"], lines):
                lines += ["`%s`:" % n, ""] + ["- %s: %.4g -> %.4g (x%.3f)" % r for r in mm]
            ev["markdown"].append(lines)
        out[culprit] = ev
    return out
