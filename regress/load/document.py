"""Google Benchmark JSON as text: reading a file (plain or gzip), parsing it
into a document, recovering the complete entries of a file cut off
mid-write (the "benchmarks" array left open), and a run's content identity
(content_sha256). The loader (regress.load.results) builds entries and runs
on top; what a tool calls is its API, which hands these names on."""
import gzip
import hashlib
import json
import math
import re
import sys
import zlib


def printable(s):
    """s with each character that is not printable (a control character, a
    line or paragraph separator) as its Python escape: a one-line message that
    quotes a document's string stays one line."""
    return s if s.isprintable() else "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)


class DocumentError(ValueError):
    """parse_document(): text that is not a (possibly cut off) Google Benchmark document."""


def _what(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v):
    """A number a float holds: not NaN or infinite, and not an integer too large to convert (10**400)."""
    return _is_number(v) and -sys.float_info.max <= v <= sys.float_info.max


# ------------------------------------------------------------ content identity

# Context keys parbench's own rewriting tools add without changing what was
# measured: a copy that differs only in them is the same run.
ANNOTATION_KEYS = ("truncated_repair",)


def _canonical(v):
    """v with every number as one float (1 and 1.0, 1e-05 and 0.00001 alike;
    -0.0 as 0.0), a number that is not finite as None (what strict writers
    make of it), and integers too large for a float kept exact."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return float(v) if abs(v) <= 2 ** 53 else v
    if isinstance(v, float):
        return (v if v else 0.0) if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _canonical(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_canonical(x) for x in v]
    return str(v)


def content_sha256(context, benchmarks):
    """sha256 (hex) of a run's content: its context (less ANNOTATION_KEYS) and
    its entries in file order, as canonical JSON (keys sorted, no whitespace,
    numbers canonical). A copy re-serialised with another indent, key order,
    number spelling or compression, or with NaN written as null, has the same
    content; any changed value, entry or entry order is other content."""
    ctx = {k: v for k, v in context.items() if k not in ANNOTATION_KEYS} if isinstance(context, dict) else context
    text = json.dumps({"context": _canonical(ctx), "benchmarks": _canonical(benchmarks)}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------- parsing, recovery

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_STRING_PART = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*(?:\\(?:u[0-9a-fA-F]{0,3})?)?\Z')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_PART = re.compile(r"-?(?:0|[1-9][0-9]*)?(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?\Z")
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")   # a \u escape of a UTF-16 surrogate, paired or not
_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_prefix(text, i, stack, state):
    """Whether text[i:] continues a JSON document validly up to its end (a cut
    file), from inside the containers `stack` ("{" / "[") in `state`: "value",
    "value_or_close", "key_or_close", "key", "colon", "comma_or_close"."""
    n = len(text)
    while True:
        while i < n and text[i] in _WS:
            i += 1
        if i >= n:
            return True
        c = text[i]
        if state in ("value", "value_or_close"):
            if c == "]" and state == "value_or_close" and stack and stack[-1] == "[":
                stack.pop()
                i += 1
                state = "comma_or_close" if stack else "end"
                continue
            if c in "{[":
                stack.append(c)
                state = "key_or_close" if c == "{" else "value_or_close"
                i += 1
                continue
            rest = text[i:i + 10]
            word = next((w for w in _LITERALS if text.startswith(w, i)), None)
            if word:
                i += len(word)
            elif len(rest) < 10 and any(w.startswith(rest) for w in _LITERALS):
                return True  # cut inside a literal
            elif c == '"':
                m = _STRING.match(text, i)
                if not m:
                    return bool(_STRING_PART.match(text, i))  # cut inside a string
                i = m.end()
            elif c in "-0123456789":
                if _NUMBER_PART.match(text, i):
                    return True  # the text ends with this number, perhaps cut inside it
                m = _NUMBER.match(text, i)
                if not m:
                    return False
                i = m.end()
            else:
                return False
            state = "comma_or_close" if stack else "end"
        elif state in ("key", "key_or_close"):
            if c == "}" and state == "key_or_close":
                stack.pop()
                i += 1
                state = "comma_or_close" if stack else "end"
                continue
            if c != '"':
                return False
            m = _STRING.match(text, i)
            if not m:
                return bool(_STRING_PART.match(text, i))
            i, state = m.end(), "colon"
        elif state == "colon":
            if c != ":":
                return False
            i, state = i + 1, "value"
        elif state == "comma_or_close":
            if c == ",":
                i, state = i + 1, ("key" if stack[-1] == "{" else "value")
            elif c == ("}" if stack[-1] == "{" else "]"):
                stack.pop()
                i += 1
                state = "comma_or_close" if stack else "end"
            else:
                return False
        else:  # "end": only whitespace may follow the document
            return False


class _Cut(Exception):
    def __init__(self, where, ok):
        self.where, self.ok = where, ok


def _walk_cut(text):
    """Walk a document that json.loads rejected. Returns (top-level members
    read, complete benchmark entries, whether the benchmarks array was left
    open). Raises _Cut(where, ok): ok says whether the text is a cut-off
    prefix (then `where` says where it was cut) or corrupt."""
    n = len(text)

    def skip(i):
        while i < n and text[i] in _WS:
            i += 1
        return i

    i = skip(0)
    if i >= n or text[i] != "{":
        raise _Cut("top", False)
    i, members, entries = skip(i + 1), {}, None
    while True:
        if i >= n:
            raise _Cut("top", True)
        if text[i] == "}" and not members:
            raise _Cut("top", False)  # "{}" followed by junk: not a cut
        m = _STRING.match(text, i)
        if not m:
            raise _Cut("top", _is_prefix(text, i, ["{"], "key"))
        key = json.loads(m.group())
        i = skip(m.end())
        if i >= n or text[i] != ":":
            raise _Cut("top", i >= n)
        i = skip(i + 1)
        if key == "benchmarks" and i < n and text[i] == "[":
            entries, i = [], skip(i + 1)
            if i < n and text[i] == "]":
                i += 1
            else:
                while True:
                    try:
                        e, i = _DECODER.raw_decode(text, i)
                    except (ValueError, RecursionError):
                        if _is_prefix(text, i, ["{", "["], "value"):
                            return members, entries, True
                        raise _Cut("benchmarks", False)
                    entries.append(e)
                    i = skip(i)
                    if i >= n:
                        return members, entries, True
                    if text[i] == "]":
                        i += 1
                        break
                    if text[i] != ",":
                        raise _Cut("benchmarks", False)
                    i = skip(i + 1)
            value = entries
        else:
            try:
                value, i = _DECODER.raw_decode(text, i)
            except (ValueError, RecursionError):
                raise _Cut(key, _is_prefix(text, i, ["{"], "value"))
        members[key] = value
        i = skip(i)
        if i >= n:
            return members, entries, False
        if text[i] == "}":
            raise _Cut("top", False)  # closed, so the error is after it: not a cut
        if text[i] != ",":
            raise _Cut("top", False)
        i = skip(i + 1)


def _check_shape(doc):
    if not isinstance(doc, dict):
        raise DocumentError("not Google Benchmark JSON: the top level is %s, not an object" % _what(doc))
    if "context" not in doc or "benchmarks" not in doc:
        raise DocumentError("not Google Benchmark JSON (no 'context' and 'benchmarks')")
    if not isinstance(doc["context"], dict):
        raise DocumentError("not Google Benchmark JSON: 'context' is %s, not an object" % _what(doc["context"]))
    if not isinstance(doc["benchmarks"], list):
        raise DocumentError("not Google Benchmark JSON: 'benchmarks' is %s, not a list" % _what(doc["benchmarks"]))


def _trailing_instance(entries):
    """Run name of the last instance when its repetitions were written but its
    aggregates were not (its median would be a guess), else None."""
    if not entries or not isinstance(entries[-1], dict):
        return None
    last = entries[-1]
    name = last.get("run_name", last.get("name"))
    reps = last.get("repetitions", 1)
    if last.get("run_type") == "aggregate" or last.get("error_occurred") or last.get("skipped"):
        return None
    if not _is_number(reps) or reps <= 1:
        return None
    has_aggr = any(isinstance(e, dict) and e.get("run_type") == "aggregate" and e.get("run_name") == name
                   for e in entries)
    return None if has_aggr else name


class Cut:
    """What parse_document() did to a file cut off mid-run."""

    def __init__(self, complete, dropped_name, dropped):
        self.complete = complete          # complete entries found
        self.dropped_name = dropped_name  # run name of the trailing instance dropped, or None
        self.dropped = dropped            # how many entries that was
        self.kept = complete - dropped

    def describe(self):
        s = "cut off mid-run; closed after the last complete entry"
        if self.dropped_name:
            s += "; dropped %s (%d repetitions without aggregates)" % (printable(str(self.dropped_name)), self.dropped)
        return s


def lone_surrogate(doc):
    """The first string of doc (a key or a value) holding a lone surrogate, or None. JSON's
    \\u escapes can spell half of a UTF-16 pair alone: a string no tool can print or store."""
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return v
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def _check_text(text, doc):
    """DocumentError when a string of doc is not Unicode (searched only where the text escapes a surrogate)."""
    if _SURROGATE_ESCAPE.search(text):
        bad = lone_surrogate(doc)
        if bad is not None:
            raise DocumentError("not Unicode text: the string %s holds a lone surrogate (a \\u escape without "
                                "its pair)" % ascii(bad if len(bad) <= 40 else bad[:37] + "..."))


def parse_document(text):
    """(doc, cut) from the text of a Google Benchmark JSON file: cut is None for a
    whole file, or a Cut when the file was cut off mid-run and closed after its
    last complete entry (dropping a trailing instance whose repetitions have no
    aggregates). Raises DocumentError with a one-line reason otherwise."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise DocumentError("empty file")
    try:
        doc = json.loads(text)
    except RecursionError:
        raise DocumentError("not valid JSON: nested too deeply")
    except ValueError as e:
        err = e
    else:
        _check_shape(doc)
        _check_text(text, doc)
        return doc, None
    try:
        members, entries, _ = _walk_cut(text)
    except _Cut as c:
        if not c.ok:
            raise DocumentError("not valid JSON: %s" % err)
        raise DocumentError("not valid JSON: truncated %s, before any complete entry"
                            % ("in the top-level object" if c.where == "top" else "inside %r" % c.where))
    if entries is None:
        raise DocumentError("not valid JSON: truncated before the 'benchmarks' array")
    if "context" not in members:
        raise DocumentError("not valid JSON: truncated, and no complete 'context'")
    if not entries:
        raise DocumentError("not valid JSON: truncated before its first complete entry")
    members["benchmarks"] = entries
    _check_shape(members)
    _check_text(text, members)
    complete = len(entries)
    dropped_name = _trailing_instance(entries)
    if dropped_name is not None:
        entries = [e for e in entries if not (isinstance(e, dict) and e.get("run_name", e.get("name")) == dropped_name)]
        if not entries:
            raise DocumentError("not valid JSON: truncated before its first complete instance")
    members["benchmarks"] = entries
    return members, Cut(complete, dropped_name, complete - len(entries))


def read_text(path):
    """The text of `path` (gzip-compressed or not); DocumentError with a one-line reason when it cannot be read \
as UTF-8 text."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise DocumentError("no such file")
    except IsADirectoryError:
        raise DocumentError("is a directory")
    except PermissionError:
        raise DocumentError("cannot read: permission denied")
    except OSError as e:
        raise DocumentError("cannot read: %s" % (e.strerror or e))
    if data[:2] == b"\x1f\x8b":  # gzip (results kept compressed, e.g. FILE.json.gz)
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise DocumentError("not a whole gzip file: %s" % e)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DocumentError("not UTF-8 text (binary?): byte %d" % e.start)
