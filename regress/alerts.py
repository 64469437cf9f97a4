"""Alerts: each confirmed change of a history, with a life (ci/alerts).

    ci/alerts --history DIR list [--machine ID] [--state STATE ...] [--all]
    ci/alerts --history DIR show ID
    ci/alerts --history DIR triage ID STATE [--why TEXT] [--who NAME]
    ci/alerts --history DIR ledger [--machine ID] [--since YYYY-MM] [--json FILE]

ci/trends (and so the nightly job) raises them: every confirmed change of a
machine's series becomes part of an alert. One alert groups the benchmarks
of one cause: those whose changes ci/bisect traced to one culprit commit,
else those that changed at the same run. A change found again on a later
night (its place may move a run or two as runs arrive) stays with its alert.

States:

  untriaged       raised, nobody has looked (the default)
  acknowledged    someone is on it
  invalid         not a real change (noise, a machine problem): the same
                  change is never raised again
  wontfix         real and accepted
  fixed           a later commit fixed it
  backed_out      the culprit was reverted
  detected_fixed  set by ci/trends: every benchmark of the alert returned
                  within its noise (the median of its last runs is within
                  the change's threshold of the level before it)

Only untriaged and acknowledged alerts fail the nightly job and can be
detected fixed; triage to untriaged reopens one. Every triage is kept with
who, when and why (show lists them).

The alerts live in DIR/alerts.sqlite, beside the runs' archive, or, for a
history in PostgreSQL (--history postgresql://...), in its database:
unlike the run index they are not derived from the runs, so they are never
rebuilt; the schema carries a version and is migrated forward on open.
Writers take the database's write lock (regress/store/db.py), so two commands at
once are applied one after the other; one that waits past the timeout says
so and changes nothing.

Exit status: 0 done; 2 bad input or usage, one line "alerts: ..."."""
import json
import re
import sys

from regress import cli
from regress.load import fmt
from regress.store.alerts import HUMAN, OPEN, STATES, AlertError, Alerts

TOOL = "alerts"
EXIT_OK, EXIT_INPUT = 0, 2


def describe(a):
    culprit = (" culprit %s %s" % (a["culprit"][:12], a["culprit_subject"] or "")) if a["culprit"] else ""
    return "#%d %-14s %-6s %7s  %d benchmark%s  %s..%s%s" % (
        a["id"], a["state"], a["direction"], fmt.pct(a["worst_step"]), len(a["benchmarks"]),
        "" if len(a["benchmarks"]) == 1 else "s", (a["revision_before"] or "?")[:12], (a["revision_after"] or "?")[:12],
        culprit)


def ledger(store, args, out):
    """ci/alerts ledger: the ledger of one machine (regress/store/ledger.py)."""
    from regress.store import history as history_mod, ledger as ledger_mod
    from regress.store.trends import choose_machine
    if args.since and not re.match(r"^\d{4}-\d{2}(-\d{2})?$", args.since):
        raise AlertError("--since %r: not a month (YYYY-MM) or a day (YYYY-MM-DD)" % args.since)
    try:
        with history_mod.open_history(args.history, log=lambda line: None) as h:
            machine = choose_machine(h, args.machine)["machine"]
            backfilled = {r["id"] for r in h.runs(machine) if (r.get("context") or {}).get("parbench_backfill")}
    except history_mod.HistoryError as e:
        raise AlertError(str(e))
    doc = ledger_mod.ledger(store.alerts(machine), backfilled, args.since)
    doc = dict(doc, machine=machine, since=args.since, parbench_ledger=1)
    if args.json:
        try:
            with open(args.json, "w") as f:
                cli.dump(doc, f)
        except OSError as e:
            raise AlertError("cannot write %s: %s" % (args.json, e.strerror or e))
    out(ledger_mod.markdown(doc, machine).rstrip("\n"))
    return EXIT_OK


def alert_id(text):
    """The argparse type of an alert's number: a positive integer a database column holds."""
    n = int(text)
    if not 0 < n < 2 ** 63:
        raise __import__("argparse").ArgumentTypeError("%s is not an alert's number (1 or more)" % text)
    return n


def make_parser():
    p = cli.ArgumentParser(TOOL, "ci/alerts", description=__doc__.split("\n\n")[0],
                           formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
                           epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--history", required=True, help="the history directory (ci/history)")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND",
                           parser_class=lambda **kw: cli.ArgumentParser(TOOL, "ci/alerts", **kw))
    s = sub.add_parser("list", help="the alerts, worst first (open ones; --all for every one)")
    s.add_argument("--machine", type=cli.text, help="one machine's alerts")
    s.add_argument("--state", action="append", choices=STATES, help="only alerts in this state (repeatable)")
    s.add_argument("--all", action="store_true", help="closed alerts too")
    s.add_argument("--json", action="store_true", help="print JSON")
    s = sub.add_parser("show", help="one alert: its benchmarks and its triage history")
    s.add_argument("id", type=alert_id)
    s.add_argument("--json", action="store_true", help="print JSON")
    s = sub.add_parser("ledger", help="per month: changes confirmed, false alarms, changes missed (found by a "
                       "backfill), nights to the alert and to the culprit (Markdown; --json for JSON)")
    s.add_argument("--machine", help="the machine (an id or its start); needed when several ran")
    s.add_argument("--since", metavar="YYYY-MM", help="only changes from this month on")
    s.add_argument("--json", metavar="FILE", help="write the ledger as JSON")
    s = sub.add_parser("triage", help="set an alert's state, saying who and why")
    s.add_argument("id", type=alert_id)
    s.add_argument("state", choices=HUMAN)
    s.add_argument("--why", type=cli.text, help="the reason, kept with the change of state")
    s.add_argument("--who", type=cli.text, help="who triages (default $PARBENCH_USER or $USER)")
    return p


def main(argv=None, out=print):
    args = make_parser().parse_args(argv)
    try:
        with Alerts(args.history, create=False) as store:
            if args.cmd == "list":
                states = args.state or (None if args.all else OPEN)
                rows = store.alerts(args.machine, states)
                if args.json:
                    out(json.dumps(rows, indent=1, sort_keys=True))
                    return EXIT_OK
                for a in rows:
                    out(describe(a))
                out("%d alert%s%s" % (len(rows), "" if len(rows) == 1 else "s",
                                      "" if args.all or args.state else " open (--all lists the closed ones too)"))
            elif args.cmd == "show":
                a = store.alert(args.id)
                if args.json:
                    out(json.dumps(a, indent=1, sort_keys=True))
                    return EXIT_OK
                out(describe(a))
                out("machine %s, first run after the change: %s" % (a["machine"], a["date"] or "?"))
                for b in a["benchmarks"]:
                    out("  %-7s %7s  %s" % (b["direction"], fmt.pct(b["step"]), b["name"]))
                for e in a["events"]:
                    why = " (%s)" % e["why"] if e["why"] else ""
                    out("  %s  %s: %s -> %s%s" % (e["at"], e["who"], e["state_from"] or "-", e["state_to"], why))
            elif args.cmd == "ledger":
                return ledger(store, args, out)
            else:
                old = store.triage(args.id, args.state, args.who, args.why)
                out("alert #%d: %s -> %s" % (args.id, old, args.state))
    except AlertError as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
