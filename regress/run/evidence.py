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
  the object     for CPU benchmarks, the functions whose machine code
                 changed between the two binaries (objdump), largest first;
  the profile    where ncu is installed, an Nsight Compute pass over each
                 GPU benchmark on both builds: duration, DRAM bytes,
                 achieved occupancy, issued instructions and the largest
                 stall reasons, the metrics that moved most first; for CPU
                 benchmarks `perf stat` where perf can read the counters.

gather(search, params, log) returns {culprit commit: {"json": {...},
"markdown": [[lines], ...]}} for regress/bisect.py's report.
"""
import os
import re
import shutil
import subprocess

from regress.load import results
from regress.run import instructions, launch, rounds
from regress.run import ptx

NCU_METRICS = ("gpu__time_duration.sum", "dram__bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
               "smsp__inst_issued.sum")
# Warps stalled per issued instruction, by reason (ncu's WarpStateStats).
NCU_STALLS = re.compile(r"^smsp__average_warps_issue_stalled_([a-z_]+?)_per_issue_active\.ratio$")
NCU_LAUNCHES = 200
NCU_NAMES = {"gpu__time_duration.sum": "duration (ns)", "dram__bytes.sum": "DRAM bytes",
             "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy (%)",
             "smsp__inst_issued.sum": "instructions issued"}
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
        try:
            run = results.load(os.path.join(rounds_dir, "round-01-%s.json" % side))
        except results.LoadError:
            continue
        for e in run.entries:
            out.setdefault(e.run_name, {})[side] = (e.code, e.library_version, e.device)
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
    """ci/ptx-diff between the builds of parent and culprit: (diff, lines,
    why). The PTX comes from the cached binaries (cuobjdump), else from the
    builds' compile commands, rebuilt in the worktree."""
    b = search.builder
    snaps, tool = {}, _tool("cuobjdump")
    if tool:
        try:
            for sha in (parent, culprit):
                out = os.path.join(b.cache, sha, "ptx-binary")
                if not os.path.isdir(out):
                    ptx.snapshot_binary(search.binaries[sha], out + ".part", tool)
                    os.replace(out + ".part", out)
                snaps[sha] = out
        except (ptx.Bad, OSError):
            snaps = {}
    if not snaps:
        build_dir = os.path.join(b.work, os.path.dirname(b.bench) or ".")
        for sha in (parent, culprit):
            b._worktree(sha)
            rc = subprocess.run(b.command, shell=True, cwd=b.work, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                env=dict(os.environ, PARBENCH_GIT_REVISION=sha[:12])).returncode
            if rc != 0 or not os.path.isfile(os.path.join(build_dir, "compile_commands.json")):
                return None, None, "no PTX in the binaries and no compile_commands.json in %s: the kernels' PTX " \
                                   "could not be compared" % build_dir
            out = os.path.join(b.cache, sha, "ptx")
            if not os.path.isdir(out):
                try:
                    ptx.snapshot(build_dir, out)
                except Exception as e:  # noqa: BLE001  any failure is reported, the report goes on
                    return None, None, "ci/ptx-diff snapshot failed: %s" % e
            snaps[sha] = out
    try:
        d = ptx.diff(snaps[parent], snaps[culprit])
    except Exception as e:  # noqa: BLE001
        return None, None, "ci/ptx-diff compare failed: %s" % e
    return d, ptx.report(d), None


def _tool(name):
    return ptx.cuda_tool(name)


def resource_usage(binary):
    """{kernel: {"REG": n, "STACK": n, "SHARED": n, "LOCAL": n}} from cuobjdump --dump-resource-usage."""
    tool = _tool("cuobjdump")
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
    """{kernel (mangled): {"launches": n, metric: value}} of one benchmark's
    run under ncu, or None."""
    tool = _tool("ncu")
    if not tool:
        return None
    args = launch.strip_filter(bench_args) + ["--benchmark_filter=" + launch.exact_filter([name]),
                                              "--benchmark_min_time=1x", "--benchmark_repetitions=1"]
    rc, out, _ = _run([tool, "--csv", "--page", "raw", "--print-kernel-base", "mangled", "--launch-count",
                       str(NCU_LAUNCHES), "--metrics", ",".join(NCU_METRICS) + ",regex:" + NCU_STALLS.pattern,
                       binary] + args, timeout=900)
    if rc != 0:
        return None
    return parse_ncu_csv(out, kernel_keys)


def kernel_keys(names):
    """{kernel's mangled name: the name it is matched by across two builds}:
    demangled, without the anonymous namespace's build hash or the parameter
    list, so a kernel whose parameters changed is still the same kernel."""
    unhashed = {n: ptx._unhash(n) for n in names}
    base = ptx.base_names(sorted(set(unhashed.values())))
    return {n: base[u] for n, u in unhashed.items()}


def by_kernel(table):
    """{kernel key: value} of a table keyed by mangled names (the first of a
    key's names wins)."""
    keys = kernel_keys(list(table))
    out = {}
    for n in sorted(table):
        out.setdefault(keys[n], table[n])
    return out


def parse_ncu_csv(out, keys=None):
    """{kernel: {"launches": n, metric: value}} of `ncu --csv --page raw`: a
    header of column names, a row of units, a row per kernel launch. A
    kernel's ".sum" metrics add over its launches; the others (percentages,
    ratios) are their mean. keys (names -> {name: key}) groups the launches
    by another name than ncu's. None without a launch."""
    lines = [ln for ln in out.splitlines() if ln.startswith('"')]
    if len(lines) < 3:
        return None
    import csv
    rows = list(csv.reader(lines))
    head, data = rows[0], rows[2:]
    if "Kernel Name" not in head:
        return None
    col = head.index("Kernel Name")
    data = [r for r in data if len(r) == len(head)]
    key = keys(sorted({r[col] for r in data})) if keys else {r[col]: r[col] for r in data}
    kernels = {}
    for r in data:
        k = kernels.setdefault(key[r[col]], {"launches": 0})
        k["launches"] += 1
        for name, v in zip(head, r):
            if name in NCU_METRICS or NCU_STALLS.match(name):
                try:
                    k[name] = k.get(name, 0.0) + float(v.replace(",", ""))
                except ValueError:
                    pass
    for k in kernels.values():
        for name in list(k):
            if name != "launches" and not name.endswith(".sum"):
                k[name] /= k["launches"]
    return kernels or None


def pick_kernel(before, after, changed):
    """(kernel, why): of the kernels both profiles ran, the slowest one whose
    code changed (`changed`: kernel_keys), else the one whose time moved
    most; None when they share no kernel."""
    both = [k for k in after if k in before]
    if not both:
        return None, None
    t = "gpu__time_duration.sum"
    hit = [k for k in both if k in changed]
    if hit:
        return max(hit, key=lambda k: after[k].get(t, 0.0)), "the slowest kernel whose code changed"
    return (max(both, key=lambda k: abs(after[k].get(t, 0.0) - before[k].get(t, 0.0))),
            "no kernel both builds ran changed its code: the kernel whose time moved most")


def stalls(profile, most=3):
    """The largest stall reasons of one kernel: [(reason, warps stalled per
    issue)], all of them for most=None."""
    rows = [(NCU_STALLS.match(k).group(1), v) for k, v in profile.items()
            if k != "launches" and NCU_STALLS.match(k)]
    return sorted(rows, key=lambda r: -r[1])[:most]


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


# objdump -d's function headers ("0000000000401136 <_Z3fooi>:") and the
# parts of an instruction that move with the code's placement, not its
# content: addresses, rip-relative offsets, the symbolic comments, padding.
OBJ_FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
OBJ_PLACE = [(re.compile(r"^\s*[0-9a-f]+:\s*"), ""), (re.compile(r"\s*#.*$"), ""),
             (re.compile(r"-?0x[0-9a-f]+\(%rip\)"), "(%rip)"), (re.compile(r"\b[0-9a-f]+ (<[^>]+>)"), r"\1")]
OBJ_PADDING = re.compile(r"^(?:data16 |cs )*(?:nop|xchg\s+%ax,%ax|int3)")


def object_functions(text):
    """{function (mangled): [instruction, ...]} of `objdump -d
    --no-show-raw-insn`, each instruction without what placement changes."""
    out, fn = {}, None
    for ln in text.splitlines():
        m = OBJ_FUNCTION.match(ln)
        if m:
            fn = m.group(1)
            out[fn] = []
            continue
        if fn is None or not ln.strip() or ":" not in ln:
            continue
        for pat, rep in OBJ_PLACE:
            ln = pat.sub(rep, ln)
        ln = " ".join(ln.split())
        if ln and not OBJ_PADDING.match(ln):
            out[fn].append(ln)
    return out


def objdump_functions(binary):
    tool = shutil.which("objdump")
    if not tool:
        return None
    rc, out, _ = _run([tool, "-d", "--no-show-raw-insn", binary], timeout=900)
    return object_functions(out) if rc == 0 else None


def object_diff(before, after, most=15):
    """(json, lines): the functions whose machine code changed, appeared or
    went away, the largest first."""
    changed = [(f, len(before[f]), len(after[f])) for f in before if f in after and before[f] != after[f]]
    gone = [(f, len(before[f]), 0) for f in before if f not in after]
    new = [(f, 0, len(after[f])) for f in after if f not in before]
    pretty = ptx.demangle(sorted({r[0] for r in changed + gone + new}))
    doc = {"functions": [len(before), len(after)]}
    lines = ["Object code (objdump): %d functions before, %d after; %d changed, %d gone, %d new" % (
        len(before), len(after), len(changed), len(gone), len(new))]
    for what, rows in (("changed", changed), ("gone", gone), ("new", new)):
        rows.sort(key=lambda r: (-max(r[1], r[2]), r[0]))
        doc[what] = [{"function": pretty[f], "instructions": [b, a]} for f, b, a in rows]
        lines += ["- %s `%s`: %d -> %d instructions" % (what, _short(pretty[f], 110), b, a) for f, b, a in rows[:most]]
        if len(rows) > most:
            lines.append("- and %d more %s" % (len(rows) - most, what))
    return doc, lines


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
    """(benchmark, before, after) for the first `most` benchmarks that `tool`
    could profile on both builds; what it could not do goes to lines."""
    if not _tool(tool):
        lines.append("%s is not installed here: no profile." % tool)
        return
    for n in names[:most]:
        before, after = profile(before_bin, n, bench_args), profile(after_bin, n, bench_args)
        if before and after:
            yield n, before, after
        else:
            lines.append("`%s`: %s gave no figures (permissions, or nothing it could measure)" % (n, tool))


def ncu_section(name, before, after, changed):
    """(json, markdown lines) of one benchmark's kernels under ncu on both
    builds, keyed by kernel_keys."""
    t = "gpu__time_duration.sum"
    names = sorted(set(before) | set(after), key=lambda k: -max(before.get(k, {}).get(t, 0.0),
                                                                after.get(k, {}).get(t, 0.0)))
    pretty = {k: k for k in names}
    per_kernel = [{"kernel": k, "parent_ns": before.get(k, {}).get(t), "culprit_ns": after.get(k, {}).get(t),
                   "launches": [before.get(k, {}).get("launches", 0), after.get(k, {}).get("launches", 0)]}
                  for k in names]
    lines = ["`%s`: the time of each kernel it launched, over the launches ncu profiled (%d at most)"
             % (name, NCU_LAUNCHES), "", "| kernel | launches | parent | culprit | ratio |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for r in per_kernel[:8]:
        b, a = r["parent_ns"], r["culprit_ns"]
        lines.append("| `%s` | %d / %d | %s | %s | %s |" % (_short(pretty[r["kernel"]]), r["launches"][0],
                                                            r["launches"][1], _us(b), _us(a),
                                                            "%.3f" % (a / b) if a and b else "-"))
    # The profiles themselves stay in the JSON, so the section can be read again.
    doc = {"kernels": per_kernel, "profiles": {"parent": before, "culprit": after}}
    k, why = pick_kernel(before, after, changed)
    if k is None:
        lines += ["", "The two builds ran no kernel in common."]
        return doc, lines
    # The kernel's own figures first, the metrics that moved most leading;
    # then the stall reasons whose warps-per-issue moved most (a ratio of two
    # rare stalls says little).
    mm = moved_most({m: v for m, v in before[k].items() if m in NCU_METRICS},
                    {m: v for m, v in after[k].items() if m in NCU_METRICS})
    sb, sa = dict(stalls(before[k], None)), dict(stalls(after[k], None))
    moved = sorted(set(sb) & set(sa), key=lambda r: (-abs(sa[r] - sb[r]), -sa[r], r))[:6]
    doc.update(kernel=k, chosen=why, metrics=[{"metric": m, "parent": b, "culprit": a} for m, b, a, _ in mm],
               stall_changes=[{"reason": r, "parent": sb[r], "culprit": sa[r]} for r in moved],
               stalls={"parent": stalls(before[k]), "culprit": stalls(after[k])})
    lines += ["", "`%s`, %s; the metrics that moved most first:" % (_short(pretty[k]), why), "",
              "| metric | parent | culprit | change |", "| --- | ---: | ---: | ---: |"]
    lines += ["| %s | %.4g | %.4g | x%.3f |" % (NCU_NAMES.get(m, m), b, a, r) for m, b, a, r in mm]
    lines += ["| stall %s (warps a issue) | %.3g | %.3g | %+.3g |" % (r, sb[r], sa[r], sa[r] - sb[r]) for r in moved]
    lines += ["", "Top stall reasons (warps stalled per issued instruction): parent %s; culprit %s" % (
        ", ".join("%s %.2f" % r for r in doc["stalls"]["parent"]) or "-",
        ", ".join("%s %.2f" % r for r in doc["stalls"]["culprit"]) or "-"), ""]
    return doc, lines


def _short(s, width=90):
    return s if len(s) <= width else s[:width - 3] + "..."


def _usage(u):
    return "-" if u is None else ", ".join("%s %d" % (k.lower(), v) for k, v in sorted(u.items()))


def _us(ns):
    return "-" if ns is None else "%.1f us" % (ns / 1000.0)


def instruction_section(doc, parent_bin, culprit_bin, names, params, log, key):
    """The instructions per call of the CPU benchmarks that moved, parent
    against culprit (callgrind, each side twice; regress/run/instructions.py),
    beside the object code: what the code change does to the work, which a
    busy machine does not move. Its Markdown lines; doc["instructions"]."""
    lines = ["### Instructions per call", ""]
    why = instructions.unavailable()
    if why is None and not all(instructions.supports(b) for b in (parent_bin, culprit_bin)):
        why = "these builds do not count under callgrind (not parbench's bench)"
    if why:
        return lines + ["Not counted: %s." % why]
    try:
        single = instructions.one_thread(parent_bin, params["bench_args"])
    except instructions.InstrumentError as e:
        return lines + ["Not counted: %s." % e]
    names = [n for n in names if n in single]
    if not names:
        return lines + ["Not counted: no culprit benchmark runs on one thread."]
    log("bisect: evidence: instructions per call under callgrind")
    work = os.path.join(params["state"], "instructions", key)  # the pair's commits: a cache per pair
    try:
        counts = instructions.measure({"base": parent_bin, "new": culprit_bin}, params["bench_args"], {}, {},
                                      sorted(names), work, log)
    except instructions.InstrumentError as e:
        return lines + ["Not counted: %s." % e]
    ch = instructions.changes(counts)
    doc["instructions"] = ch
    lines += ["| benchmark | parent | culprit | change | noise | moved |", "| --- | ---: | ---: | ---: | ---: | --- |"]
    for n, c in sorted(ch.items()):
        lines.append("| `%s` | %.6g | %.6g | %+.2f%% | %.2f%% | %s |"
                     % (n, c["base"], c["new"], 100 * c["change"], 100 * c["noise"], "yes" if c["moved"] else "no"))
    return lines


def gather(search, params, log):
    out = {}
    for c in search.culprits:
        parent, culprit, names = c["parent"], c["commit"], c["benchmarks"]
        ev = {"json": {}, "markdown": []}
        info = commit_info(params["repo"], parent, culprit)
        ev["json"]["diffstat"] = info["diffstat"]
        ev["markdown"].append(["### The commit", "", "```"] + info["diffstat"] + ["```"])
        prints = fingerprints(rounds.rounds_file(params["state"], parent, culprit)[:-len(".json")])
        rows, _ = code_section(prints, names)
        ev["json"]["code"] = [{"benchmark": n, "parent": b, "culprit": a, "says": s} for n, b, a, s in rows]
        ev["markdown"].append(["### The code", "", "| benchmark | parent | culprit | |", "| --- | --- | --- | --- |"] +
                              ["| `%s` | `%s` | `%s` | %s |" % r for r in rows])
        gpu = [n for n in names if (prints.get(n, {}).get("new") or (None, None, None))[2] == "gpu"]
        bins = {}
        for s in (parent, culprit):
            try:
                bins[s] = search.need(s)
            except Exception:  # noqa: BLE001  a commit that no longer builds has no evidence
                bins[s] = None
        if gpu and all(bins.values()):
            log("bisect: evidence for %s: the kernels' PTX and resources" % culprit[:12])
            diff, diff_lines, why = ptx_section(search, parent, culprit)
            lines = ["### The kernels", ""]
            if diff is None:
                lines.append(why)
            else:
                ev["json"]["ptx"] = diff_lines
                lines += ["```"] + diff_lines + ["```"]
            ub, ua = resource_usage(bins[parent]), resource_usage(bins[culprit])
            if ub is not None and ua is not None:
                ub, ua = by_kernel(ub), by_kernel(ua)
                ch = usage_changes(ub, ua)
                ev["json"]["resources"] = [{"kernel": k, "parent": b, "culprit": a} for k, b, a in ch]
                lines += ["", "Resource usage (cuobjdump) that changed: %d kernels" % len(ch)] + [
                    "- `%s`: %s -> %s" % (k, _usage(b), _usage(a)) for k, b, a in ch[:20]]
            else:
                lines += ["", "cuobjdump is not here: no resource usage."]
            ev["markdown"].append(lines)
            prof = ["### Nsight Compute", ""]
            recompiled = set()
            if diff is not None:
                changed = [n for _, n in diff["changed"]] + [n for _, (_, n) in diff["signature"]]
                recompiled |= set(kernel_keys(changed).values())
            recompiled |= {k for k, _, _ in (usage_changes(ub, ua) if ub and ua else [])}
            for n, before, after in profiles("ncu", ncu_profile, gpu, bins[parent], bins[culprit],
                                             params["bench_args"], prof):
                doc, ln = ncu_section(n, before, after, recompiled)
                ev["json"].setdefault("ncu", {})[n] = doc
                prof += ln
            ev["markdown"].append(prof)
        cpu = [n for n in names if n not in gpu]
        if cpu and all(bins.values()):
            log("bisect: evidence for %s: the object code" % culprit[:12])
            ob, oa = objdump_functions(bins[parent]), objdump_functions(bins[culprit])
            if ob is not None and oa is not None:
                doc, lines = object_diff(ob, oa)
                ev["json"]["object_code"] = doc
                ev["markdown"].append(["### The object code", ""] + lines)
            else:
                ev["markdown"].append(["### The object code", "", "objdump is not here, or could not read a build."])
            ev["markdown"].append(instruction_section(ev["json"], bins[parent], bins[culprit], cpu, params, log,
                                                      "%s-%s" % (parent[:12], culprit[:12])))
            lines = ["### CPU counters", ""]
            for n, before, after in profiles("perf", perf_profile, cpu, bins[parent], bins[culprit],
                                             params["bench_args"], lines):
                lines += ["`%s`:" % n, ""] + ["- %s: %.4g -> %.4g (x%.3f)" % r for r in moved_most(before, after)]
            ev["markdown"].append(lines)
        out[culprit] = ev
    return out
