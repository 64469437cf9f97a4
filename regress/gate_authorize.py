"""Which commit the GPU gate may run, decided from the event a maintainer made
(ci/gate-authorize, the authorize job of .github/workflows/gpu-gate.yml).

    ci/gate-authorize --repo OWNER/NAME [--event FILE] [--event-name NAME]

The gate runs a pull request's code on the self-hosted GPU runner, so it runs
exactly the commit a maintainer approved, never what the head is when a job
happens to start:

- the label "gpu-gate" approves the head of the labelling event
  (`pull_request.head.sha`); if the pull request's head has moved since, the
  gate runs nothing and says so;
- a comment "/gpu-gate SHA" by an owner, member or collaborator approves
  SHA, which must be the pull request's head when the comment is read, in
  full: 40 hex digits. A prefix names no one commit: an author can make a
  commit that shares a 7-digit prefix with the reviewed one in minutes and
  push it before the comment is read. "/gpu-gate" without a SHA, a prefix,
  a SHA that is not the head, or a comment by anyone else runs nothing, and
  the reply says why.

Writes to $GITHUB_OUTPUT (or standard output): run=true|false, pr, head (the
approved commit, in full; empty when refused), base (the base branch's
commit), why (the refusal's reason, for the reply). The event is
$GITHUB_EVENT_PATH and $GITHUB_EVENT_NAME unless given; the pull request's
head now comes from the API (--api, $GITHUB_TOKEN with read access).

Exit status: 0 decided (run or refused); 2 bad input: an unreadable event,
an API that cannot answer (one line "gate-authorize: ...")."""
import os
import re
import sys

from regress import cli
from regress.report.github import Refused, request

TOOL = "gate-authorize"
LABEL = "gpu-gate"
TRUSTED = ("OWNER", "MEMBER", "COLLABORATOR")
COMMAND = re.compile(r"^/gpu-gate(?:[ \t]+(\S+))?[ \t]*$")
SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
FULL = 40


class Bad(Exception):
    pass


def decide(event_name, event, current):
    """(approved commit or None, why refused) for the event, given `current`,
    a function of the pull request number that returns the API's pull request
    (head.sha, base.sha, state)."""
    if event_name == "pull_request_target":
        if event.get("action") != "labeled" or (event.get("label") or {}).get("name") != LABEL:
            return None, "not the %s label" % LABEL
        pr = event["pull_request"]
        approved = pr["head"]["sha"]
        now = current(pr["number"])
        if now["state"] != "open":
            return None, "the pull request is %s" % now["state"]
        if now["head"]["sha"] != approved:
            return None, ("the head moved from %s (labelled) to %s since the label: nothing ran; review %s and "
                          "label again" % (approved[:12], now["head"]["sha"][:12], now["head"]["sha"][:12]))
        return approved, ""
    if event_name == "issue_comment":
        issue, comment = event.get("issue") or {}, event.get("comment") or {}
        if not issue.get("pull_request"):
            return None, "a comment on an issue, not on a pull request"
        first = (comment.get("body") or "").strip().splitlines()
        m = COMMAND.match(first[0].strip()) if first else None
        if not m:
            return None, "not a /gpu-gate command: write \"/gpu-gate SHA\" alone on the comment's first line"
        if comment.get("author_association") not in TRUSTED:
            return None, ("only an owner, member or collaborator can start the gate (%s is %s)"
                          % ((comment.get("user") or {}).get("login", "the author"),
                             comment.get("author_association") or "unknown"))
        sha = m.group(1)
        if not sha:
            return None, "name the commit you reviewed: /gpu-gate SHA (the head's full SHA, 40 hex digits)"
        if not SHA.match(sha):
            return None, "%r is not a commit SHA (40 hex digits)" % sha
        if len(sha) < FULL:
            return None, ("%s is a prefix of %d digits: give the head's full SHA (40 digits), since another commit "
                          "can be made to share a prefix" % (sha, len(sha)))
        now = current(issue["number"])
        if now["state"] != "open":
            return None, "the pull request is %s" % now["state"]
        if now["head"]["sha"].lower() != sha.lower():
            return None, ("%s is not the head of the pull request (the head is %s): nothing ran; review the head "
                          "and ask again with its SHA" % (sha, now["head"]["sha"][:12]))
        return now["head"]["sha"], ""
    return None, "the gate runs on a label or a comment, not on %s" % event_name


def make_parser():
    p = cli.ArgumentParser(TOOL, "ci/gate-authorize", description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", required=True, metavar="OWNER/NAME")
    p.add_argument("--event", default=os.environ.get("GITHUB_EVENT_PATH"), help="the event's JSON "
                   "(default $GITHUB_EVENT_PATH)")
    p.add_argument("--event-name", default=os.environ.get("GITHUB_EVENT_NAME"), help="default $GITHUB_EVENT_NAME")
    p.add_argument("--api", default=os.environ.get("GITHUB_API_URL", "https://api.github.com"))
    return p


def main(argv=None):
    args = make_parser().parse_args(argv)
    token = os.environ.get("GITHUB_TOKEN", "")
    pulls = {}

    def current(number):
        if number not in pulls:
            doc, _ = request(args.api, "/repos/%s/pulls/%d" % (args.repo, int(number)), token)
            if not isinstance(doc, dict) or not isinstance((doc.get("head") or {}).get("sha"), str):
                raise Bad("the API's pull request %s has no head commit" % number)
            pulls[number] = doc
        return pulls[number]

    try:
        if not args.event or not args.event_name:
            raise Bad("no event: give --event FILE and --event-name NAME (or run in a workflow)")
        try:
            with open(args.event) as f:
                event = cli.strict_loads(f.read())
        except (OSError, ValueError) as e:
            raise Bad("cannot read the event %s: %s" % (args.event, e))
        if not isinstance(event, dict):
            raise Bad("the event %s is not a JSON object" % args.event)
        try:
            approved, why = decide(args.event_name, event, current)
            number = (event.get("pull_request") or event.get("issue") or {})["number"]
        except (KeyError, TypeError) as e:
            raise Bad("the event %s lacks %s" % (args.event, e))
        base = current(number)["base"]["sha"] if approved else ""
    except (Bad, Refused) as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return cli.EXIT_INPUT
    lines = ["run=%s" % ("true" if approved else "false"), "pr=%d" % int(number), "head=%s" % (approved or ""),
             "base=%s" % base, "why=%s" % why.replace("\n", " ")]
    out = os.environ.get("GITHUB_OUTPUT")
    if out:
        with open(out, "a") as f:
            f.write("\n".join(lines) + "\n")
    else:
        print("\n".join(lines))
    print("%s: %s" % (TOOL, ("runs %s" % approved) if approved else "refused: " + why), file=sys.stderr)
    return cli.EXIT_OK


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
