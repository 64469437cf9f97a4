"""One pull-request comment per check, updated on each run (ci/pr-comment).

    ci/pr-comment --repo OWNER/NAME --pr N --key gpu-gate --body verdicts.md

Posts BODY as a comment on pull request N, or, when a comment of this KEY is
already there, replaces its text: a pull request keeps one comment per
check (the CPU comparison, the GPU gate), not one per run. The comment
starts with an invisible marker `<!-- parbench:KEY -->` by which it is found
again. The token is $GITHUB_TOKEN (a workflow's `github.token` with
`pull-requests: write`); --api points at another server (GitHub Enterprise,
or the tests' fake one).

Exit status: 0 posted or updated; 2 bad input or a request GitHub refused
(one line "pr-comment: ...")."""
import os
import re
import sys

from regress import cli
from regress.report.comment import comment_text, marker
from regress.report.github import Refused, request as _request


TOOL = "pr-comment"
EXIT_OK, EXIT_INPUT = 0, 2


def find(api, repo, pr, token, key):
    """The id of the comment of this key on the pull request, or None."""
    path = "/repos/%s/issues/%d/comments?per_page=100" % (repo, pr)
    mark = marker(key)
    while path:
        page, link = _request(api, path, token)
        for c in page or []:
            if mark in (c.get("body") or ""):
                return c["id"]
        nxt = re.search(r'<([^>]+)>;\s*rel="next"', link)
        path = nxt.group(1)[len(api.rstrip("/")):] if nxt and nxt.group(1).startswith(api.rstrip("/")) else None
    return None


def post(api, repo, pr, token, key, body):
    """("updated" or "posted", comment id)."""
    text = comment_text(key, body)
    old = find(api, repo, pr, token, key)
    if old is not None:
        doc, _ = _request(api, "/repos/%s/issues/comments/%d" % (repo, old), token, "PATCH", {"body": text})
        return "updated", doc.get("id", old)
    doc, _ = _request(api, "/repos/%s/issues/%d/comments" % (repo, pr), token, "POST", {"body": text})
    return "posted", doc.get("id")


def make_parser():
    p = cli.ArgumentParser(TOOL, "ci/pr-comment", description=__doc__.split("\n\n")[0],
                           formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
                           epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--repo", required=True, help="OWNER/NAME")
    p.add_argument("--pr", required=True, type=int, help="the pull request's number")
    p.add_argument("--key", required=True, help="which check's comment (letters, digits, '-')")
    p.add_argument("--body", required=True, help="the comment's Markdown, a file")
    p.add_argument("--api", default=os.environ.get("GITHUB_API_URL") or "https://api.github.com")
    return p


def main(argv=None, out=print):
    args = make_parser().parse_args(argv)
    try:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo):
            raise Refused("--repo %r: give OWNER/NAME" % args.repo)
        if not re.fullmatch(r"[A-Za-z0-9-]+", args.key):
            raise Refused("--key %r: letters, digits and '-' only" % args.key)
        token = os.environ.get("GITHUB_TOKEN")
        if not token:
            raise Refused("GITHUB_TOKEN is not set (a workflow passes github.token)")
        try:
            with open(args.body, encoding="utf-8") as f:
                body = f.read()
        except OSError as e:
            raise Refused("cannot read %s: %s" % (args.body, e.strerror or e))
        what, cid = post(args.api, args.repo, args.pr, token, args.key, body)
    except Refused as e:
        print("%s: %s" % (TOOL, e), file=sys.stderr)
        return EXIT_INPUT
    out("pr-comment: %s comment %s on %s#%d" % (what, cid, args.repo, args.pr))
    return EXIT_OK


if __name__ == "__main__":
    cli.run_tool(TOOL, main)
