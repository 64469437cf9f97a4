#!/usr/bin/env python3
"""The CI workflows under .github/workflows/ parse as YAML, have the shape
GitHub Actions reads (on, jobs, runs-on, steps that run or use), and every
repository command they name exists and is executable; the options they pass
to parbench's commands are ones those commands accept. They never run a pull
request's code on the self-hosted GPU runner unasked or with a token that can
write; ci/pr-comment posts one comment per check and updates it, against a
fake GitHub."""
import glob
import http.server
import json
import os
import re
import subprocess
import tempfile
import threading
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKFLOWS = sorted(glob.glob(os.path.join(ROOT, ".github", "workflows", "*.yml")))
ACTIONS = ("actions/checkout@v4", "actions/upload-artifact@v4", "actions/download-artifact@v4",
           "actions/cache/restore@v4", "actions/cache/save@v4")
WRITE = ("write", "write-all")
# A repository command, also from the GPU gate's two checkouts.
COMMAND = re.compile(r"(?<![\w./-])(?:(?:trusted|head)/)?((?:ci|plots)/[A-Za-z0-9_.-]+)")


def commands(script):
    """(command, the rest of its line) for each ci/ or plots/ command named."""
    joined = script.replace("\\\n", " ")
    for line in joined.splitlines():
        for m in COMMAND.finditer(line):
            yield m.group(1), line[m.end():]


def load(name):
    with open(os.path.join(ROOT, ".github", "workflows", name)) as f:
        doc = yaml.safe_load(f)
    doc["triggers"] = doc.get("on", doc.get(True))   # YAML 1.1 reads a bare `on` as true
    return doc


def all_workflows():
    return {os.path.basename(p): load(os.path.basename(p)) for p in WORKFLOWS}


def self_hosted(job):
    runs_on = job.get("runs-on")
    return "self-hosted" in (runs_on if isinstance(runs_on, list) else [runs_on])


def writes(perms):
    if isinstance(perms, str):
        return perms in WRITE
    return any(v in WRITE for v in (perms or {}).values())


class Workflows(unittest.TestCase):
    def test_there_are_four(self):
        names = sorted(os.path.basename(p) for p in WORKFLOWS)
        self.assertEqual(names, ["gpu-gate.yml", "nightly.yml", "pr-comment.yml", "pull-request.yml"])

    def test_shape_and_commands(self):
        for path in WORKFLOWS:
            with open(path) as f:
                doc = yaml.safe_load(f)
            name = os.path.basename(path)
            # PyYAML reads the key `on` as the boolean True (YAML 1.1).
            self.assertTrue("on" in doc or True in doc, name)
            self.assertIn("jobs", doc, name)
            for job, spec in doc["jobs"].items():
                self.assertIn("runs-on", spec, (name, job))
                self.assertTrue(spec.get("steps"), (name, job))
                for step in spec["steps"]:
                    self.assertTrue(("run" in step) != ("uses" in step), (name, job, step))
                    if "uses" in step:
                        self.assertIn(step["uses"], ACTIONS, (name, job))
                        continue
                    for cmd, rest in commands(step["run"]):
                        full = os.path.join(ROOT, cmd)
                        self.assertTrue(os.path.isfile(full) and os.access(full, os.X_OK),
                                        "%s: %s names %s, which is not an executable file" % (name, job, cmd))
                        self.check_options(cmd, rest, name)

    def check_options(self, cmd, rest, where):
        """Every --option given to a parbench command appears in its --help."""
        opts = re.findall(r"(?<!\S)(--[a-z][a-z-]*)", rest.split(" -- ")[0])
        if not opts:
            return
        p = subprocess.run([os.path.join(ROOT, cmd), "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=60)
        self.assertEqual(p.returncode, 0, (cmd, p.stderr))
        for o in opts:
            self.assertIn(o, p.stdout, "%s: %s has no option %s" % (where, cmd, o))

    def test_no_pull_request_code_on_the_gpu_runner_unasked(self):
        for name, doc in all_workflows().items():
            triggers = doc["triggers"]
            triggers = triggers if isinstance(triggers, dict) else {t: None for t in triggers}
            jobs = doc["jobs"]
            for jname, job in jobs.items():
                text = yaml.safe_dump(job)
                if not self_hosted(job):
                    continue
                # A pull request (a fork's too) starts no self-hosted job by itself.
                self.assertNotIn("pull_request", triggers, "%s: %s runs on every pull request" % (name, jname))
                self.assertNotIn("secrets.", text, "%s: %s sees secrets" % (name, jname))
                self.assertFalse(writes(job.get("permissions", doc.get("permissions"))),
                                 "%s: %s has a token that can write" % (name, jname))
                if "pull_request_target" in triggers or "issue_comment" in triggers:
                    # Asked for by a maintainer: a job that decides, with the
                    # label or the commenter's association in its condition.
                    needs = job.get("needs")
                    needs = [needs] if isinstance(needs, str) else (needs or [])
                    self.assertTrue(needs, "%s: %s does not wait for an authorisation" % (name, jname))
                    cond = " ".join(str(jobs[n].get("if", "")) for n in needs)
                    self.assertIn("github.event.label.name == 'gpu-gate'", cond)
                    self.assertIn("author_association", cond)
                    self.assertIn('"OWNER", "MEMBER", "COLLABORATOR"', cond)
                    self.assertEqual(triggers["pull_request_target"], {"types": ["labeled"]})
                    self.assertEqual(job.get("if"), "needs.authorize.outputs.run == 'true'")
                    self.check_gate_steps(name, job["steps"])

    def check_gate_steps(self, name, steps):
        """The approved commit, checked out by its SHA without credentials;
        before it only the base branch's code runs, and only that runs as
        root; the verdicts come from the base branch's comparator."""
        co = [i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("actions/checkout")]
        refs = [steps[i]["with"]["ref"] for i in co]
        self.assertEqual(refs, ["${{ needs.authorize.outputs.base }}", "${{ needs.authorize.outputs.head }}"], name)
        self.assertEqual([steps[i]["with"]["path"] for i in co], ["trusted", "head"])
        for i in co:
            self.assertIs(steps[i]["with"]["persist-credentials"], False)
        # The qualification's state is saved before any code of the pull request runs.
        saves = [i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("actions/cache/save")]
        self.assertTrue(saves and max(saves) < co[1], "%s: the cache is saved after the head's checkout" % name)
        for i, step in enumerate(steps):
            text = step.get("run", "")
            # No root on the GPU runner: the pull request's code runs as the same user.
            self.assertNotRegex(text, r"\bsudo\b", "%s: step %d uses sudo" % (name, i))
            if i < co[1]:
                words = re.findall(r"[\w./-]+/[\w./-]+", text)
                self.assertTrue(all(w.startswith("trusted/") for w in words),
                                "%s: step %d runs %s before the approved checkout" % (name, i, words))
            for cmd in re.findall(r"(?<![\w./-])((?:\w+/)?ci/compare)\b", text):
                self.assertEqual(cmd, "trusted/ci/compare", "%s: the verdicts come from %s" % (name, cmd))

    def test_jobs_that_can_write_run_no_pull_request_code(self):
        for name, doc in all_workflows().items():
            for jname, job in doc["jobs"].items():
                if not writes(job.get("permissions", doc.get("permissions"))):
                    continue
                self.assertFalse(self_hosted(job), (name, jname))
                for step in job.get("steps", []):
                    if str(step.get("uses", "")).startswith("actions/checkout"):
                        ref = str((step.get("with") or {}).get("ref", ""))
                        self.assertNotIn("head", ref, "%s: %s checks out the pull request" % (name, jname))
                    self.assertNotIn("ci/deps.sh", step.get("run", ""), (name, jname))

    def test_the_readers_of_a_job(self):
        self.assertTrue(self_hosted({"runs-on": ["self-hosted", "gpu"]}))
        self.assertFalse(self_hosted({"runs-on": "ubuntu-24.04"}))
        self.assertTrue(writes({"pull-requests": "write"}))
        self.assertTrue(writes("write-all"))
        self.assertFalse(writes({"contents": "read"}))


class FakeGitHub(http.server.BaseHTTPRequestHandler):
    comments = []
    calls = []
    fail = None
    pull = None   # what GET /repos/o/r/pulls/N answers

    def log_message(self, *args):
        pass

    def reply(self, code, doc, headers=()):
        body = json.dumps(doc).encode()
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        FakeGitHub.calls.append(("GET", self.path, self.headers.get("Authorization")))
        if FakeGitHub.fail:
            return self.reply(FakeGitHub.fail, {"message": "no"})
        if "/pulls/" in self.path:
            return self.reply(200, FakeGitHub.pull) if FakeGitHub.pull else self.reply(404, {"message": "Not Found"})
        # Two per page, so finding a comment walks the pages.
        page = int((re.search(r"[?&]page=(\d+)", self.path) or [None, "1"])[1])
        mine = FakeGitHub.comments[2 * (page - 1):2 * page]
        base = "http://%s:%d" % self.server.server_address
        headers = [("Link", '<%s/repos/o/r/issues/5/comments?per_page=100&page=%d>; rel="next"' % (base, page + 1))] \
            if 2 * page < len(FakeGitHub.comments) else []
        self.reply(200, mine, headers)

    def _body(self):
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])).decode())

    def do_POST(self):
        FakeGitHub.calls.append(("POST", self.path, None))
        c = {"id": 100 + len(FakeGitHub.comments), "body": self._body()["body"]}
        FakeGitHub.comments.append(c)
        self.reply(201, c)

    def do_PATCH(self):
        FakeGitHub.calls.append(("PATCH", self.path, None))
        cid = int(self.path.rsplit("/", 1)[1])
        c = next(c for c in FakeGitHub.comments if c["id"] == cid)
        c["body"] = self._body()["body"]
        self.reply(200, c)


class PrComment(unittest.TestCase):
    def setUp(self):
        FakeGitHub.comments = [{"id": 1, "body": "looks good"}, {"id": 2, "body": "one more thing"},
                               {"id": 3, "body": "ok"}]
        FakeGitHub.calls, FakeGitHub.fail = [], None
        self.server = http.server.HTTPServer(("127.0.0.1", 0), FakeGitHub)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.api = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.body = "/tmp/pr-comment-body-%d.md" % os.getpid()

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        if os.path.exists(self.body):
            os.remove(self.body)

    def run_tool(self, text, key="gpu-gate", token="t0k"):
        with open(self.body, "w") as f:
            f.write(text)
        env = dict(os.environ, GITHUB_TOKEN=token)
        return subprocess.run([os.path.join(ROOT, "ci", "pr-comment"), "--repo", "o/r", "--pr", "5", "--key", key,
                               "--body", self.body, "--api", self.api], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, env=env)

    def test_posted_once_then_updated(self):
        p = self.run_tool("| benchmark | verdict |\n| A | SAME |\n")
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "pr-comment: posted comment 103 on o/r#5"), p.stderr)
        self.assertEqual(FakeGitHub.comments[-1]["body"], "<!-- parbench:gpu-gate -->\n| benchmark | verdict |\n"
                                                          "| A | SAME |\n")
        self.assertEqual(FakeGitHub.calls[0][2], "Bearer t0k")
        # The next run finds it on the second page and replaces its text.
        p = self.run_tool("| A | SLOWER |\n")
        self.assertEqual(p.stdout.strip(), "pr-comment: updated comment 103 on o/r#5")
        self.assertEqual(len(FakeGitHub.comments), 4)
        self.assertEqual(FakeGitHub.comments[-1]["body"], "<!-- parbench:gpu-gate -->\n| A | SLOWER |\n")
        self.assertEqual([c[0] for c in FakeGitHub.calls], ["GET", "GET", "POST", "GET", "GET", "PATCH"])
        # Another check keeps its own comment.
        self.assertIn("posted", self.run_tool("cpu", key="cpu-compare").stdout)
        self.assertEqual(len(FakeGitHub.comments), 5)

    def test_refusals_are_one_line(self):
        FakeGitHub.fail = 401
        p = self.run_tool("x")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.strip(), "pr-comment: GET /repos/o/r/issues/5/comments?per_page=100: HTTP 401 "
                                           "Unauthorized")
        FakeGitHub.fail = None
        for args, text in (({"token": ""}, "GITHUB_TOKEN is not set"), ({"key": "a b"}, "letters, digits")):
            p = self.run_tool("x", **args)
            self.assertEqual(p.returncode, 2)
            self.assertIn(text, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        # A server that went away: one line too.
        self.server.shutdown()
        self.server.server_close()
        p = self.run_tool("x")
        self.assertEqual(p.returncode, 2)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        # A running one again, for tearDown to stop.
        self.server = http.server.HTTPServer(("127.0.0.1", 0), FakeGitHub)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


REVIEWED = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
PUSHED = "ffeeddccbbaa99887766554433221100ffeeddcc"
BASE = "0123456789abcdef0123456789abcdef01234567"


class GateEvents(unittest.TestCase):
    """The GPU gate's events played against ci/gate-authorize and a fake
    GitHub, and the workflow's GPU job read with the decision: which commit
    each event would check out and run, if any."""

    def setUp(self):
        FakeGitHub.calls, FakeGitHub.fail = [], None
        FakeGitHub.pull = {"number": 5, "state": "open", "head": {"sha": REVIEWED}, "base": {"sha": BASE}}
        self.server = http.server.HTTPServer(("127.0.0.1", 0), FakeGitHub)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.api = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.tmp = tempfile.TemporaryDirectory()
        self.gpu = load("gpu-gate.yml")["jobs"]["gpu"]

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.tmp.cleanup()

    def authorize(self, name, event):
        path = os.path.join(self.tmp.name, "event.json")
        with open(path, "w") as f:
            json.dump(event, f)
        out = os.path.join(self.tmp.name, "output")
        open(out, "w").close()
        env = dict(os.environ, GITHUB_TOKEN="t0k", GITHUB_OUTPUT=out, GITHUB_EVENT_PATH=path, GITHUB_EVENT_NAME=name)
        p = subprocess.run([os.path.join(ROOT, "ci", "gate-authorize"), "--repo", "o/r", "--api", self.api],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return dict(line.split("=", 1) for line in f.read().splitlines())

    def checkouts(self, outputs):
        """The commits the GPU job would check out with these outputs; [] when it would not start."""
        if outputs["run"] != "true":   # the job's condition: needs.authorize.outputs.run == 'true'
            return []

        def expand(text):
            return re.sub(r"\$\{\{ needs\.authorize\.outputs\.(\w+) \}\}", lambda m: outputs[m.group(1)], text)
        return [expand(s["with"]["ref"]) for s in self.gpu["steps"]
                if str(s.get("uses", "")).startswith("actions/checkout")]

    @staticmethod
    def labelled(head=REVIEWED, label="gpu-gate"):
        return {"action": "labeled", "label": {"name": label},
                "pull_request": {"number": 5, "head": {"sha": head}, "base": {"sha": BASE}}}

    @staticmethod
    def comment(body, association="MEMBER", on_pr=True):
        issue = {"number": 5, "pull_request": {"url": "x"}} if on_pr else {"number": 5}
        return {"action": "created", "issue": issue,
                "comment": {"body": body, "author_association": association, "user": {"login": "someone"}}}

    def test_the_label_runs_the_labelled_head(self):
        out = self.authorize("pull_request_target", self.labelled())
        self.assertEqual(self.checkouts(out), [BASE, REVIEWED])
        self.assertEqual((out["pr"], out["why"]), ("5", ""))

    def test_a_push_after_the_label_runs_nothing(self):
        FakeGitHub.pull["head"]["sha"] = PUSHED
        out = self.authorize("pull_request_target", self.labelled())
        self.assertEqual(self.checkouts(out), [])
        self.assertEqual(out["head"], "")
        self.assertEqual(out["why"], "the head moved from a1b2c3d4e5f6 (labelled) to ffeeddccbbaa since the label: "
                                     "nothing ran; review ffeeddccbbaa and label again")

    def test_a_comment_with_the_head_runs_it(self):
        for sha in (REVIEWED, REVIEWED.upper()):
            with self.subTest(sha=sha):
                out = self.authorize("issue_comment", self.comment("/gpu-gate %s\nthanks" % sha))
                self.assertEqual(self.checkouts(out), [BASE, REVIEWED])

    def test_a_prefix_is_refused(self):
        # A 7-digit prefix can be matched by another commit in minutes (2^28 tries).
        for sha in (REVIEWED[:7], REVIEWED[:39]):
            with self.subTest(sha=sha):
                out = self.authorize("issue_comment", self.comment("/gpu-gate " + sha))
                self.assertEqual(self.checkouts(out), [])
                self.assertIn("is a prefix of %d digits: give the head's full SHA" % len(sha), out["why"])

    def test_a_stale_sha_runs_nothing(self):
        FakeGitHub.pull["head"]["sha"] = PUSHED
        out = self.authorize("issue_comment", self.comment("/gpu-gate " + REVIEWED))
        self.assertEqual(self.checkouts(out), [])
        self.assertEqual(out["why"], "%s is not the head of the pull request (the head is ffeeddccbbaa): "
                                     "nothing ran; review the head and ask again with its SHA" % REVIEWED)

    def test_refused_comments(self):
        for event, why in ((self.comment("/gpu-gate"), "name the commit you reviewed"),
                           (self.comment("/gpu-gate main"), "'main' is not a commit SHA"),
                           (self.comment("/gpu-gate abc12"), "'abc12' is not a commit SHA"),
                           (self.comment("/gpu-gate " + REVIEWED + "0"), "is not a commit SHA"),
                           (self.comment("/gpu-gate %s" % REVIEWED, association="CONTRIBUTOR"),
                            "only an owner, member or collaborator can start the gate (someone is CONTRIBUTOR)"),
                           (self.comment("/gpu-gate %s" % REVIEWED, association="NONE"), "(someone is NONE)"),
                           (self.comment("/gpu-gate %s" % REVIEWED, on_pr=False), "not on a pull request"),
                           (self.comment("please /gpu-gate %s" % REVIEWED), "not a /gpu-gate command"),
                           (self.comment("/gpu-gate %s %s" % (REVIEWED, PUSHED)), "not a /gpu-gate command")):
            with self.subTest(body=event["comment"]["body"], association=event["comment"]["author_association"]):
                out = self.authorize("issue_comment", event)
                self.assertEqual(self.checkouts(out), [])
                self.assertIn(why, out["why"])
        # Another label, or a closed pull request: nothing either.
        self.assertEqual(self.checkouts(self.authorize("pull_request_target", self.labelled(label="bug"))), [])
        FakeGitHub.pull["state"] = "closed"
        out = self.authorize("issue_comment", self.comment("/gpu-gate " + REVIEWED))
        self.assertEqual((self.checkouts(out), out["why"]), ([], "the pull request is closed"))

    def test_bad_input_is_one_line(self):
        path = os.path.join(self.tmp.name, "event.json")
        with open(path, "w") as f:
            f.write("{not json")
        env = dict(os.environ, GITHUB_TOKEN="t", GITHUB_EVENT_PATH=path, GITHUB_EVENT_NAME="issue_comment")
        for args, text in (([], "cannot read the event"), (["--event", "/nonexistent"], "cannot read the event")):
            p = subprocess.run([os.path.join(ROOT, "ci", "gate-authorize"), "--repo", "o/r", "--api", self.api] + args,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(text, p.stderr)
        # A pull request the API does not know.
        FakeGitHub.pull = None
        with open(path, "w") as f:
            json.dump(self.comment("/gpu-gate " + REVIEWED), f)
        p = subprocess.run([os.path.join(ROOT, "ci", "gate-authorize"), "--repo", "o/r", "--api", self.api],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
        self.assertEqual((p.returncode, p.stderr.strip()),
                         (2, "gate-authorize: GET /repos/o/r/pulls/5: HTTP 404 Not Found"))


if __name__ == "__main__":
    unittest.main()
