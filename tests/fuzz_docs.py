"""The documents of tests/test_fuzz.py: real files of the repository as
seeds, and hypothesis strategies that mutate them.

Seeds: Google Benchmark JSON written by Google Benchmark 1.7.1 and 1.8.3
(tests/data/) and the committed runs of results/reference/ (the small ones:
the fuzz's speed is its number of documents), the same run as an older
harness wrote it (no schema 1 stamp), the comparator's verdict JSON, ci/bisect
reports and the nightly job's summaries (other tools' JSON).

A mutated document is one to three of: a cut at any byte, a value replaced
(anywhere in the document: another type, a huge, negative or tiny number,
"NaN" and the other spellings of numbers that are not, a NaN or Infinity
literal, a long or unicode string, an empty container), a key deleted, a
benchmark entry duplicated, an entry renamed (unicode, slashes, another
entry's name), a value nested thousands deep, a key written twice, junk
bytes, another tool's JSON in its place; written plain or gzip-compressed
(the gzip stream itself sometimes cut)."""
import copy
import glob
import gzip
import json
import os

from hypothesis import strategies as st

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")

# Committed files at most this large (decompressed) are seeds: a document of
# 100 KB loads in milliseconds, and one seed per kind of run is enough.
MAX_SEED_BYTES = 100_000
MAX_PATHS = 6000   # values a mutation may hit, per seed (the first ones, in document order)


def read_json(path):
    with open(path, "rb") as f:
        raw = f.read()
    return json.loads(gzip.decompress(raw) if path.endswith(".gz") else raw)


def kind_of(doc):
    if isinstance(doc, dict) and "benchmarks" in doc and "context" in doc:
        return "bench"
    for key, kind in (("parbench_compare", "verdict"), ("parbench_bisect", "bisect"),
                      ("parbench_nightly", "nightly"), ("parbench_trends", "changes")):
        if isinstance(doc, dict) and key in doc:
            return kind
    return "other"


def older(doc):
    """The run as a harness before schema 1 wrote it: no parbench objects or stamps."""
    doc = copy.deepcopy(doc)
    for k in ("parbench_schema", "parbench_counters", "parbench_upgraded"):
        doc["context"].pop(k, None)
    for e in doc["benchmarks"]:
        e.pop("parbench", None)
    return doc


def value_paths(doc):
    """Every place in doc (a tuple of keys and indexes), the document itself first."""
    out = []

    def walk(v, path):
        if len(out) >= MAX_PATHS:
            return
        out.append(path)
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, path + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, path + (i,))
    walk(doc, ())
    return out


class Seed:
    def __init__(self, name, doc):
        self.name, self.doc, self.kind = name, doc, kind_of(doc)
        self.text = json.dumps(doc, indent=1)
        self.paths = value_paths(doc)

    def __repr__(self):
        return self.name


def load_seeds(extra=()):
    """[Seed] of the committed documents small enough, and `extra` ((name, doc) pairs
    a test makes: a history export, changes.json)."""
    seeds = []
    for p in [os.path.join(DATA, "gb171.json"), os.path.join(DATA, "gb183.json")] + \
            sorted(glob.glob(os.path.join(ROOT, "results", "reference", "*", "*.json.gz"))):
        if p.endswith(".gz") and os.path.getsize(p) > MAX_SEED_BYTES // 3:
            continue  # gzip packs runs 4 to 20 times: this one is far too large
        doc = read_json(p)
        if len(json.dumps(doc)) > MAX_SEED_BYTES and not p.startswith(DATA):
            continue
        seeds.append(Seed(os.path.relpath(p, ROOT), doc))
    seeds.append(Seed("tests/data/gb171.json (before schema 1)", older(seeds[0].doc)))
    for name, doc in extra:
        seeds.append(Seed(name, doc))
    return seeds


# ---------------------------------------------------------------- values

NEST = "\x00nest\x00"    # replaced in the text by a value nested that deep
TWICE = "\x00twice\x00"  # replaced in the text by the key written twice
WEIRD = [None, True, False, 0, -1, 1, -0.0, 0.5, 2 ** 31, 2 ** 63, -2 ** 63, 10 ** 30, 10 ** 400, -10 ** 400,
         1e308, -1e308, 5e-324, 1e-300, float("nan"), float("inf"), float("-inf"),
         "", "NaN", "nan", "-nan", "Infinity", "-Infinity", "inf", "1e999", "0", "-1", "1.5", "null", "true",
         "\x00", "\u00fc", "\u540d\u524d", "\U0001F600", "\ud800", "\u202e", "a/b/c:d", "Fam/Var/n:1/manual_time",
         "x" * 5000, [], {}, [None], {"": None}, [1, 2, 3], {"name": "x"}]
CHARS = st.characters(blacklist_categories=())   # every code point, lone surrogates included
NAMEISH = st.lists(st.one_of(st.sampled_from(["/", ":", "GEMM", "OMP", "type:f32", "M:1", "manual_time",
                                              "threads:2", "\u540d", "\U0001F600", " ", "\n", "\ud800",
                                              "/real_time", "_mean", "_median", "_stddev", "_cv", "*"]),
                             st.text(CHARS, max_size=3)), max_size=8).map("".join)

VALUES = st.one_of(
    st.sampled_from(WEIRD),
    st.integers(),
    st.floats(),
    st.text(CHARS, max_size=20),
    NAMEISH,
    st.lists(st.sampled_from(WEIRD[:20]), max_size=3),
    st.dictionaries(st.text(CHARS, max_size=4), st.sampled_from(WEIRD[:20]), max_size=3),
)


# The same JSON type, another value: what a document can hold and still be
# read, so the tools compute on it.
NUMBERS = st.one_of(st.sampled_from([0, -0.0, -1, 1, 0.5, 3, 1e-300, 5e-324, 1e-9, 1e9, 1e300, 1e308, -1e308,
                                     2 ** 53 + 1, 2 ** 63, 10 ** 400, float("nan"), float("inf")]),
                    st.floats(), st.integers())
STRINGS = st.one_of(st.sampled_from(["", "NaN", "\u540d", "\ud800", "x" * 5000, "0", "-1"]), NAMEISH,
                    st.text(CHARS, max_size=12))


def tweaked(v):
    """A strategy of values of v's JSON type (v itself for containers)."""
    if isinstance(v, bool):
        return st.booleans()
    if isinstance(v, (int, float)):
        return NUMBERS
    if isinstance(v, str):
        return STRINGS
    return st.just(v)


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def _set(doc, path, value):
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


# ------------------------------------------------------------ mutations

class Mutated:
    """A mutated document: its bytes, the suffix of its file (.json, .json.gz), what was done."""

    def __init__(self, seed, data, suffix, ops):
        self.seed, self.data, self.suffix, self.ops = seed, data, suffix, ops

    def __repr__(self):
        return "Mutated(%s%s: %s)" % (self.seed.name, "" if self.suffix == ".json" else " as gzip",
                                      "; ".join(self.ops) or "unchanged")

    def write(self, path_stem):
        path = path_stem + self.suffix
        with open(path, "wb") as f:
            f.write(self.data)
        return path


OPS = ["tweak"] * 10 + ["set"] * 4 + ["delete"] * 2 + ["duplicate"] * 2 + ["rename"] * 2 + ["cut"] * 3 + \
    ["nest", "twice", "junk", "swap"]


@st.composite
def mutated(draw, seeds, kinds=("bench",), others=None, ops=None):
    """A Mutated of one of the seeds of `kinds`; "swap" puts one of `others` (default: every seed) in its place."""
    pool = [s for s in seeds if s.kind in kinds]
    seed = draw(st.sampled_from(pool))
    doc = json.loads(seed.text)
    done, text, nest, twice = [], None, None, None
    chosen = draw(st.lists(st.sampled_from(ops or OPS), min_size=1, max_size=3))
    for op in sorted(chosen, key=lambda o: o in ("cut", "junk")):  # the text's mutations last
        paths = value_paths(doc) if done else seed.paths
        if op == "swap":
            other = draw(st.sampled_from(others or seeds))
            doc = json.loads(other.text)
            done.append("replaced by %s" % other.name)
        elif op in ("tweak", "set", "nest", "twice") or (op == "delete" and len(paths) > 1):
            at = draw(st.integers(0 if op == "set" else 1, len(paths) - 1)) if len(paths) > 1 else 0
            path = paths[at]
            if op == "tweak":
                v = draw(tweaked(_get(doc, path)))
                doc = _set(doc, path, v)
                done.append("%s = %s" % (_where(path), _short(v)))
            elif op == "delete":
                parent = _get(doc, path[:-1])
                del parent[path[-1]]
                done.append("deleted %s" % _where(path))
            elif op == "set":
                v = draw(VALUES)
                doc = _set(doc, path, v)
                done.append("%s = %s" % (_where(path), _short(v)))
            elif op == "nest" and nest is None:
                nest = draw(st.sampled_from([50, 1000, 100_000]))
                doc = _set(doc, path, NEST)
                done.append("%s nested %d deep" % (_where(path), nest))
            elif op == "twice" and twice is None and path and isinstance(path[-1], str):
                twice = (path[-1], _get(doc, path), draw(VALUES), draw(st.booleans()))
                _set(doc, path, TWICE)
                done.append("%s written twice (then %s)" % (_where(path), _short(twice[2])))
        elif op == "duplicate" and seed.kind == "bench" and isinstance(doc, dict) and \
                isinstance(doc.get("benchmarks"), list) and doc["benchmarks"]:
            b = doc["benchmarks"]
            i = draw(st.integers(0, len(b) - 1))
            j = draw(st.integers(0, len(b)))
            b.insert(j, copy.deepcopy(b[i]))
            done.append("entry %d copied to %d" % (i, j))
        elif op == "rename" and isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list) and doc["benchmarks"]:
            b = doc["benchmarks"]
            i = draw(st.integers(0, len(b) - 1))
            if not isinstance(b[i], dict):
                continue
            other = [e.get("name") for e in b if isinstance(e, dict) and isinstance(e.get("name"), str)]
            name = draw(st.one_of(NAMEISH, st.sampled_from(other or ["x"])))
            keys = draw(st.sampled_from([("name",), ("run_name",), ("name", "run_name")]))
            for k in keys:
                b[i][k] = name
            done.append("entry %d %s = %s" % (i, "/".join(keys), _short(name)))
        elif op in ("cut", "junk"):
            text = text or _dump(draw, doc, nest, twice)
            at = draw(st.integers(0, len(text)))
            if op == "cut":
                text = text[:at]
                done.append("cut at byte %d" % at)
            else:
                junk = draw(st.one_of(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b",", b"]", b"}", b"{",
                                                       b"\"", b"\\", b"\x00", b"\xff\xfe", b"\xed\xa0\x80",
                                                       b"1e400", b"-", b"null"]), st.binary(max_size=8)))
                text = text[:at] + junk + text[at:]
                done.append("%r inserted at byte %d" % (junk, at))
    if text is None:
        text = _dump(draw, doc, nest, twice)
    if draw(st.integers(0, 4)) == 0:
        data = gzip.compress(text, mtime=0)
        if draw(st.integers(0, 3)) == 0:
            at = draw(st.integers(0, len(data)))
            data = data[:at]
            done.append("gzip stream cut at byte %d" % at)
        return Mutated(seed, data, ".json.gz", done)
    return Mutated(seed, text, ".json", done)


def _dump(draw, doc, nest, twice):
    """The document's bytes: indented or not, ASCII or UTF-8 (a lone surrogate as
    the bytes a careless writer leaves), the nesting and the doubled key spliced in."""
    indent = draw(st.sampled_from([None, 1, 2]))
    ascii_only = draw(st.booleans())
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only, allow_nan=True)
    if nest is not None:
        text = text.replace(json.dumps(NEST), "[" * nest + "]" * nest, 1)
    if twice is not None:
        key, old, new, new_last = twice
        first, last = (old, new) if new_last else (new, old)
        text = text.replace(json.dumps(TWICE), "%s, %s: %s" % (
            json.dumps(first, allow_nan=True), json.dumps(key), json.dumps(last, allow_nan=True)), 1)
    return text.encode("utf-8", "surrogatepass")


def _where(path):
    return "/".join(str(k) for k in path) or "the document"


def _short(v):
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."
