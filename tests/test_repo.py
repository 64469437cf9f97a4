#!/usr/bin/env python3
"""The house rules that keep the repository a product, checked on the tree.

    test_repo.py [--bench PATH]

- results/ holds only results/reference/<kind>/: gzipped JSON evidence
  and one README.md a folder that names each of its files; no run scripts,
  logs or run folders.
- Every evidence file is cited by its path outside results/ (docs, README,
  code); each README table row is one line of at most 400 characters with
  the four columns file, what it shows, command, revision; no numbered
  twins (name-1 and name-2, or name and name-2).
- Every path that README.md and docs/ cite (in backticks or as a relative
  link) exists.
- Every flag that `bench --help` prints is documented somewhere in docs/
  (with --bench).
- No Python file edits sys.path; no code comment in impl/, benchmarks/ or
  fixtures/ cites a run folder.
"""
import argparse
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = None

# Top-level names a cited path may start with; anything else in backticks
# (a flag, a benchmark name, a shell line) is not a path.
TOP = ("benchmarks/", "impl/", "fixtures/", "plots/", "regress/", "ci/", "docs/", "results/", "tests/",
       "peers/", "cmake/", ".ci/", ".github/", "CMakeLists.txt", "CMakePresets.json", "README.md")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def tracked_files(under):
    """The files under `under` that are or would be committed: tracked or not
    ignored, and present in the tree (a copied tree may carry a stale index)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", under],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:  # not a git checkout (a source tarball): walk the tree instead
        found = []
        for dirpath, _, names in os.walk(os.path.join(ROOT, under)):
            found += [os.path.relpath(os.path.join(dirpath, n), ROOT) for n in names]
        return found
    return sorted(f for f in set(out.stdout.split()) if os.path.isfile(os.path.join(ROOT, f)))


def markdown_files():
    files = [os.path.join(ROOT, "README.md")]
    for dirpath, _, names in os.walk(os.path.join(ROOT, "docs")):
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".md")]
    for dirpath, _, names in os.walk(os.path.join(ROOT, "results")):
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".md")]
    return sorted(files)


def cited_paths(md_path):
    """(line number, path as written, path from the root) for each path the page cites."""
    text = read(md_path)
    text_wo_fences = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for no, line in enumerate(text_wo_fences.splitlines(), 1):
        for m in re.finditer(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):  # relative links
            target = m.group(1).split("#")[0]
            if not target or re.match(r"[a-z]+:", target):
                continue
            out.append((no, target, os.path.normpath(os.path.join(os.path.dirname(md_path), target))))
        for m in re.finditer(r"`([^`\s]+)`", line):  # repository paths in backticks
            token = m.group(1).rstrip(".,;:")
            token = re.sub(r":\d+(-\d+)?$", "", token)  # file:line
            if not token.startswith(TOP) or any(c in token for c in "*<>{}$|?[]\\"):
                continue
            out.append((no, token, os.path.join(ROOT, token)))
    return out


def allowed_under_results(path):
    """The results policy: results/reference/<kind>/ holds its README and gzipped JSON, nothing else."""
    parts = path.split("/")
    return (len(parts) == 4 and parts[:2] == ["results", "reference"]
            and (parts[3] == "README.md" or parts[3].endswith(".json.gz")))


README_HEADER = ["file", "what it shows", "command", "revision"]
ROW_MAX = 400

# Numbered twins that code reads by path, with where: renamed there and here
# together, never one without the other.
KNOWN_TWINS = {
    "results/reference/nvidia-h200/compare-paired-aa-2.json.gz": "regress/noise.py PRIOR_SOURCES",
}


def cells(row):
    """The cells of a Markdown table row; a pipe escaped as \\| stays inside its cell."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def row_problems(line):
    """What is wrong with one README table row (an empty list: nothing)."""
    problems = []
    if len(line) > ROW_MAX:
        problems.append(f"{len(line)} characters (at most {ROW_MAX})")
    if not (line.startswith("| ") and line.rstrip().endswith("|")):
        problems.append("not one whole row on one line")
    elif len(cells(line)) != len(README_HEADER):
        problems.append(f"{len(cells(line))} columns, not {len(README_HEADER)}")
    return problems


def numbered_twins(names):
    """The names of one folder that are numbered twins: stem-N beside stem or another stem-M."""
    stems = {n[:-len(".json.gz")] for n in names if n.endswith(".json.gz")}
    twins = []
    for stem in sorted(stems):
        m = re.fullmatch(r"(.+)-(\d+)", stem)
        if not m:
            continue
        base = m.group(1)
        if base in stems or any(t != stem and re.fullmatch(re.escape(base) + r"-\d+", t) for t in stems):
            twins.append(stem + ".json.gz")
    return twins


def text_outside_results():
    """Every tracked text file outside results/ but this one, joined: where evidence is cited."""
    parts = []
    for f in tracked_files("."):
        if f.startswith("results/") or os.path.abspath(os.path.join(ROOT, f)) == os.path.abspath(__file__):
            continue
        with open(os.path.join(ROOT, f), "rb") as fh:
            data = fh.read()
        if b"\0" not in data[:8192]:
            parts.append(data.decode("utf-8", errors="replace"))
    return "\n".join(parts)


class ResultsPolicy(unittest.TestCase):
    def test_only_reference_evidence_under_results(self):
        bad = [f for f in tracked_files("results") if not allowed_under_results(f)]
        self.assertEqual(bad, [], "results/ keeps only results/reference/<kind>/{README.md,*.json.gz}; "
                                  "run scripts, logs and run folders stay out (git history keeps them)")

    def test_each_reference_folder_names_its_files(self):
        ref = os.path.join(ROOT, "results", "reference")
        self.assertTrue(os.path.isdir(ref), "results/reference/ is missing")
        kinds = [k for k in sorted(os.listdir(ref)) if os.path.isdir(os.path.join(ref, k))]
        self.assertTrue(kinds, "results/reference/ holds no machine kind")
        for kind in kinds:
            folder = os.path.join(ref, kind)
            readme = os.path.join(folder, "README.md")
            self.assertTrue(os.path.isfile(readme), f"results/reference/{kind}/README.md is missing")
            text = read(readme)
            for name in sorted(os.listdir(folder)):
                if name != "README.md":
                    self.assertIn(name, text, f"results/reference/{kind}/README.md does not name {name}")

    def test_the_rule_refuses_a_run_script_a_log_and_a_run_folder(self):
        # The rule the test above applies, on made-up paths.
        self.assertTrue(allowed_under_results("results/reference/nvidia-h100/kmeans.json.gz"))
        self.assertTrue(allowed_under_results("results/reference/nvidia-h100/README.md"))
        self.assertFalse(allowed_under_results("results/reference/nvidia-h100/run-targets.sh"))
        self.assertFalse(allowed_under_results("results/reference/nvidia-h100/memcheck.log"))
        self.assertFalse(allowed_under_results("results/nvidia-h100/issue20/targets-run/kmeans.json"))
        self.assertFalse(allowed_under_results("results/reference/nvidia-h100/old/kmeans.json.gz"))

    def test_every_evidence_file_is_cited(self):
        text = text_outside_results()
        uncited = [f for f in tracked_files("results") if f.endswith(".json.gz") and f not in text]
        self.assertEqual(uncited, [], "cite each file by its path where the figure it backs is stated "
                                      "(docs/, README.md, a code comment), or delete it (git history keeps it)")

    def test_each_readme_row_is_one_line_of_four_columns(self):
        bad = []
        for readme in sorted(f for f in tracked_files("results") if f.endswith("/README.md")):
            lines = read(os.path.join(ROOT, readme)).splitlines()
            folder = os.path.dirname(os.path.join(ROOT, readme))
            first_cells = ""
            in_table = False
            for no, line in enumerate(lines, 1):
                if not line.startswith("|"):
                    if in_table and line.strip():
                        bad.append(f"{readme}:{no}: a row goes on past its line")
                    in_table = False
                    continue
                if not in_table:
                    in_table = True
                    if cells(line) != README_HEADER:
                        bad.append(f"{readme}:{no}: the header is not | {' | '.join(README_HEADER)} |")
                    continue
                if set(line.replace("|", "").split()) <= {"---"}:
                    continue
                bad += [f"{readme}:{no}: {p}" for p in row_problems(line)]
                if not row_problems(line):
                    first_cells += cells(line)[0] + " "
            for name in sorted(os.listdir(folder)):
                if name.endswith(".json.gz") and f"`{name}`" not in first_cells:
                    bad.append(f"{readme}: no row names `{name}` in its file column")
        self.assertEqual(bad, [], "one line a topic: | file | what it shows | command | revision |")

    def test_no_numbered_twins(self):
        ref = os.path.join(ROOT, "results", "reference")
        twins = []
        for kind in sorted(os.listdir(ref)):
            if os.path.isdir(os.path.join(ref, kind)):
                twins += [f"results/reference/{kind}/{n}" for n in numbered_twins(os.listdir(os.path.join(ref, kind)))]
        twins = [t for t in twins if t not in KNOWN_TWINS]
        self.assertEqual(twins, [], "a re-measurement replaces its file; the two inputs of one comparison "
                                    "are <topic>-base and <topic>-new")

    def test_the_rules_on_made_up_names_and_rows(self):
        self.assertEqual(numbered_twins(["a-1.json.gz", "a-2.json.gz", "gemm-4096.json.gz", "b.json.gz",
                                         "b-2.json.gz", "c-base.json.gz", "c-new.json.gz", "README.md"]),
                         ["a-1.json.gz", "a-2.json.gz", "b-2.json.gz"])
        row = "| `a.json.gz` | a figure | `bench --benchmark_filter='^(A\\|B)/'` | `abc1234` |"
        self.assertEqual(row_problems(row), [])
        self.assertEqual(row_problems("| `a.json.gz` | a figure | `bench` |"), ["3 columns, not 4"])
        long_row = "| `a.json.gz` | " + "x" * ROW_MAX + " | `bench` | `abc1234` |"
        self.assertEqual(row_problems(long_row), [f"{len(long_row)} characters (at most {ROW_MAX})"])


class Docs(unittest.TestCase):
    def test_every_cited_path_exists(self):
        missing = []
        for md in markdown_files():
            for no, written, path in cited_paths(md):
                if not os.path.exists(path):
                    missing.append(f"{os.path.relpath(md, ROOT)}:{no}: {written}")
        self.assertEqual(missing, [], "paths cited in the docs that do not exist")

    def test_the_path_finder_sees_links_and_backticks(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".md", dir=os.path.join(ROOT, "docs"), delete=False) as f:
            f.write("See [timing](timing.md#x), `impl/core/job.hpp:12`, `--flag`, `GEMM/OMP`.\n"
                    "```\nci/not-a-citation\n```\n[web](https://example.org)\n")
        try:
            found = [w for _, w, _ in cited_paths(f.name)]
        finally:
            os.unlink(f.name)
        self.assertEqual(found, ["timing.md", "impl/core/job.hpp"])

    def test_every_help_flag_is_documented(self):
        if not BENCH:
            self.skipTest("no --bench given")
        out = subprocess.run([BENCH, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        # parbench's own flags: those before Google Benchmark's section.
        ours = out.stdout.split("Google Benchmark's flags:")[0]
        flags = sorted(set(re.findall(r"(?<![\w-])--([a-z][a-z0-9_-]*)", ours)))
        self.assertGreater(len(flags), 20, "bench --help printed too few flags to be its real help")
        docs = ""
        for dirpath, _, names in os.walk(os.path.join(ROOT, "docs")):
            docs += "".join(read(os.path.join(dirpath, n)) for n in names if n.endswith(".md"))
        undocumented = [f"--{f}" for f in flags if not re.search(rf"--{re.escape(f)}(?![\w-])", docs)]
        self.assertEqual(undocumented, [], "flags that bench --help prints and docs/ does not document")


class Code(unittest.TestCase):
    def test_no_python_edits_sys_path(self):
        offenders = []
        for top in ("plots", "regress", "ci", "tests", "peers"):
            for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
                for n in names:
                    path = os.path.join(dirpath, n)
                    with open(path, "rb") as f:
                        first = f.readline()
                    if not (n.endswith(".py") or (first.startswith(b"#!") and b"python" in first)):
                        continue
                    src = read(path)
                    if re.search(r"sys\.path\.(insert|append)|sys\.path\s*=|sys\.path\s*\+=", src):
                        if os.path.abspath(path) != os.path.abspath(__file__):
                            offenders.append(os.path.relpath(path, ROOT))
        self.assertEqual(offenders, [], "import through the package (ci/python sets PYTHONPATH), not sys.path")

    def test_no_comment_cites_a_run(self):
        run = re.compile(r"(//|/\*|^\s*\*|#).*\b[a-z0-9]+-run[0-9]*\b")
        hits = []
        for top in ("impl", "benchmarks", "fixtures"):
            for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
                for n in names:
                    path = os.path.join(dirpath, n)
                    for no, line in enumerate(read(path).splitlines(), 1):
                        if run.search(line):
                            hits.append(f"{os.path.relpath(path, ROOT)}:{no}")
        self.assertEqual(hits, [], "comments state decisions; the measurements go to docs/perf/")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench")
    args, rest = ap.parse_known_args()
    BENCH = args.bench
    unittest.main(argv=[sys.argv[0]] + rest)
