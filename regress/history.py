"""ci/history: parbench's history store on the command line.

Commands (ci/history --help): ingest FILE..., list, machines, series NAME,
rebuild, export bmf|github-action-benchmark (one run, for Bencher or
github-action-benchmark), plan (what each series can see). Exit status: 0 done; 2 bad input or usage, one
line "history: ...". The store itself, its layout and its rules:
regress/store/history.py."""
import argparse
import json
import sys

from regress import cli
from regress.load import fmt, results
from regress.stats import decide
from regress.store import export
from regress.store import plan as plan_mod
from regress.store import history
from regress.store.history import HistoryError, Refused

TOOL = "history"
EXIT_OK, EXIT_INPUT = 0, 2


def _stderr(line):
    # A name it quotes (given, or stored before names were checked) may hold a line break: one line still.
    print("%s: %s" % (TOOL, results.printable(line)), file=sys.stderr, flush=True)


# ------------------------------------------------------------------ output

def fmt_time(v):
    return fmt.fmt_time(v, "-", "us")


def table(head, rows, left=()):
    rows = [tuple("-" if c is None else str(c) for c in r) for r in rows]
    widths = [max([len(head[i])] + [len(r[i]) for r in rows]) for i in range(len(head))]
    fmt = "  ".join(("%%-%ds" if i in left else "%%%ds") % w for i, w in enumerate(widths))
    return "\n".join((fmt % r).rstrip() for r in [tuple(head)] + rows)


def _hardware(gpu, cpu):
    return gpu or cpu or "unknown hardware"


def cmd_ingest(h, args, out):
    refused = False
    for path in args.files:
        try:
            run_id, added = h.ingest(path)
        except Refused as e:
            refused = True
            _stderr(str(e))
            continue
        if added:
            out("%s: added as run %d (machine %s, segment %s, %d benchmarks)" % ((path, run_id) + h.ingested(run_id)))
        else:
            out("%s: already in the history (run %d)" % (path, run_id))
    return EXIT_INPUT if refused else EXIT_OK


def cmd_list(h, args, out):
    machine = h.resolve_machine(args.machine) if args.machine else None
    runs = h.runs(machine)
    if not runs:
        out("no runs in %s" % h.dir)
        return EXIT_OK
    out(table(("run", "date", "revision", "profile", "machine", "segment", "hardware", "passed/errors"),
              [(r["id"], r["date"], r["revision"], r["profile"], r["machine"], r["segment"],
                _hardware(r["gpu"], r["cpu"]), "%d/%d" % (r["passed"], r["errors"])) for r in runs],
              left=(1, 2, 3, 4, 5, 6)))
    return EXIT_OK


def cmd_export(h, args, out):
    machine = h.resolve_machine(args.machine) if args.machine else None
    run, entries, doc = export.export_run(h, args.format, machine, args.run)
    text = json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"
    if args.out in (None, "-"):
        out(text.rstrip("\n"))
    else:
        try:
            history.write_atomic(args.out, text.encode("utf-8"))
        except OSError as e:
            raise HistoryError("cannot write %s: %s" % (args.out, e.strerror or e))
        _stderr("run %d (%s), %d benchmarks, as %s in %s"
                % (run["id"], run["date"] or "no date", len(entries), args.format, args.out))
    return EXIT_OK


def cmd_machines(h, args, out):
    ms = h.machines()
    if not ms:
        out("no runs in %s" % h.dir)
        return EXIT_OK
    out(table(("machine", "segments", "runs", "first", "last", "gpu", "cpu", "hosts"),
              [(m["machine"], m["segments"], m["runs"], m["first"], m["last"], m["gpu"], m["cpu"], m["hosts"])
               for m in ms], left=(0, 3, 4, 5, 6, 7)))
    return EXIT_OK


def cmd_plan(h, args, out):
    from regress.store.trends import choose_machine
    from regress.verdict.sequential import sequential_looks
    if args.rounds < 4:
        raise HistoryError("plan --rounds must be at least 4, the first look of the paired rounds")
    machine = choose_machine(h, args.machine)["machine"]
    paired = plan_mod.paired_from_doc(args.noise) if args.noise else None
    looks = sequential_looks(args.rounds)
    rows = plan_mod.plan_rows(h, h.dir, machine, args.delta, args.rounds, looks, paired)
    pct = lambda v: fmt.pct(v, signed=False, digits=2, missing="-")  # noqa: E731
    out("What each series of machine %s can see: two nightly runs (two files), and the gate's paired rounds at "
        "%d rounds (looks %s) with 95%% power; the rounds %s needs." % (
            machine, args.rounds, ", ".join(map(str, looks)), pct(args.delta)))
    out(table(("benchmark", "run noise", "two files flag", "paired noise", "rounds find", "rounds for %s"
               % pct(args.delta)),
              [(r["name"], "%s (%s)" % (pct(r["run_noise"]), r["run_noise_source"]), pct(r["files_detectable"]),
                "%s (%s)" % (pct(r["paired_noise"]), r["paired_noise_source"]), pct(r["paired_detectable"]),
                r["rounds_for_delta"] or "never") for r in rows], left=(0,)))
    within = sum(1 for r in rows if r["rounds_for_delta"] and r["rounds_for_delta"] <= args.rounds)
    never = sum(1 for r in rows if not r["rounds_for_delta"])
    out("%d series: %d see %s within %d rounds, %d need more, %d never (the floor or one run's noise is above it)"
        % (len(rows), within, pct(args.delta), args.rounds, len(rows) - within - never, never))
    if args.json:
        doc = {"parbench_plan": 1, "machine": machine, "delta": args.delta, "rounds": args.rounds, "looks": looks,
               "power": 0.95, "benchmarks": rows}
        try:
            history.write_atomic(args.json, cli.dumps(doc).encode("utf-8"))
        except OSError as e:
            raise HistoryError("cannot write %s: %s" % (args.json, e.strerror or e))
    return EXIT_OK


def cmd_series(h, args, out):
    name = args.name
    machine = history.series_machine(h, name, args.machine)
    points = h.series(name, machine)
    m = next(x for x in h.machines() if x["machine"] == machine)
    out("%s on machine %s" % (name, history.describe_machine(m)))
    rows = []
    for p in points:
        change = ", ".join("%s %s -> %s" % (k, history.context_text(a) or "(none)", history.context_text(b) or "(none)")
                           for k, a, b in p["segment_change"])
        disp = p["disposition"] if p["disposition"] == "passed" else "%s: %s" % (p["disposition"], p["reason"] or "")
        rows.append((p["date"], p["revision"], ("* " if p["new_segment"] else "") + p["segment"],
                     fmt_time(p["median"]),
                     "%s - %s" % (fmt_time(p["low"]), fmt_time(p["high"])) if p["low"] is not None else "-",
                     p["repetitions"], disp, ("new segment: " + change) if p["new_segment"] else ""))
    out(table(("date", "revision", "segment", "median", "low - high", "reps", "disposition", ""), rows,
              left=(0, 1, 2, 6, 7)))
    if len(points) == 1:
        out("one point: no trend yet")
    elif any(p["new_segment"] for p in points):
        out("* a new segment starts (driver, toolkit, compiler or build change): times across it are not comparable")
    return EXIT_OK


def cmd_rebuild(h, args, out):
    n, skipped = h.rebuild()
    out("index %s rebuilt from the archive: %d runs%s" % (
        h.index_path, n, ", %d archive members skipped (named above, left in place)" % skipped if skipped else ""))
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise HistoryError("%s (see ci/history --help)" % message)


def make_parser():
    p = _Parser(prog="history", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="parbench's history store: every run ingested is kept (archive/, gzip JSON) and "
                            "indexed (index.sqlite), per machine.",
                epilog="exit status: 0 done; 2 bad input or usage (one line \"history: ...\")")
    p.add_argument("--history", default=history.DEFAULT_DIR, metavar="DIR",
                   help="the history directory (default: %(default)s/ in the current directory)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    s = sub.add_parser("ingest", help="store runs (re-ingesting one is a no-op)")
    s.add_argument("files", nargs="+", metavar="FILE", help="Google Benchmark JSON (.json or .json.gz)")
    s = sub.add_parser("list", help="the runs, in date order")
    s.add_argument("--machine", type=cli.text, metavar="ID", help="only this machine's runs (an id or its start)")
    sub.add_parser("machines", help="the machines and their segments")
    s = sub.add_parser("series", help="one benchmark's times over the runs of one machine")
    s.add_argument("name", type=cli.text, metavar="NAME", help="the run name as bench writes it, "
                   "Family/Variant/key:value/.../manual_time")
    s.add_argument("--machine", type=cli.text, metavar="ID",
                   help="the machine (an id or its start); needed when several ran NAME")
    sub.add_parser("rebuild", help="recreate index.sqlite from the archive")
    s = sub.add_parser("plan", help="what each series can see: the smallest change two nightly runs flag and the "
                       "gate's paired rounds find, and the rounds a change needs")
    s.add_argument("--machine", metavar="ID", help="the machine (an id or its start); needed when several ran")
    s.add_argument("--delta", type=decide.parse_change, default=0.02, metavar="PCT",
                   help="the change to plan for (default 2%%)")
    s.add_argument("--rounds", type=int, default=24, metavar="N", help="the gate's rounds (default 24, its cap)")
    s.add_argument("--noise", metavar="VERDICT.json", help="the paired noise of an A/A comparison (compare --run "
                   "BENCH BENCH --json); default: the nightly A/A ledger's, else the prior")
    s.add_argument("--json", metavar="FILE", help="write the plan as JSON")
    s = sub.add_parser("export", help="one run as Bencher's BMF JSON or github-action-benchmark's input")
    s.add_argument("format", choices=sorted(export.EXPORTS), help="bmf (Bencher Metric Format) or "
                   "github-action-benchmark (its customSmallerIsBetter tool)")
    s.add_argument("--machine", type=cli.text, metavar="ID",
                   help="the machine (an id or its start); needed when several ran")
    s.add_argument("--run", type=int, metavar="N", help="the run (ci/history list); default the machine's latest")
    s.add_argument("--out", metavar="FILE", help="write there (default: standard output)")
    return p


COMMANDS = {"ingest": cmd_ingest, "list": cmd_list, "machines": cmd_machines, "series": cmd_series,
            "rebuild": cmd_rebuild, "export": cmd_export, "plan": cmd_plan}


def main(argv=None, out=print):
    try:
        args = make_parser().parse_args(argv)
        if not args.command:
            raise HistoryError("give a command: %s (see ci/history --help)" % ", ".join(COMMANDS))
        with history.open_history(args.history, create=args.command == "ingest", check=args.command != "rebuild") as h:
            return COMMANDS[args.command](h, args, out)
    except HistoryError as e:
        _stderr(str(e))
        return EXIT_INPUT


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
