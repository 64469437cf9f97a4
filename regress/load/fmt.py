"""The one time, change, date and revision formatters: the report, the
comparator, the bisection, the trends and the history's tables print with
them."""
import hashlib
import re


def fmt_time(s, missing="", micro="\u00b5s"):
    """Seconds with a unit chosen so that the number reads between 1 and 1000
    (`missing` for None; consoles pass micro="us")."""
    if s is None:
        return missing
    a = abs(s)
    for div, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, micro), (1e-9, "ns")):
        if a >= div:
            return "%s %s" % (sig4(s / div), unit)
    if a == 0:
        return "0 s"
    return "%s ns" % sig4(s / 1e-9)


def sig4(x):
    s = "%.4g" % x
    if "e" in s:  # 1000-9999 s
        s = "%.0f" % x
    return s


def pct(v, signed=True, digits=2, missing="-", sig=False):
    """A fraction as a percentage: "+5.24%" (signed, `digits` decimals, or
    `digits` significant digits with sig), `missing` for None."""
    if v is None:
        return missing
    if sig:
        return "%.*g%%" % (digits, 100.0 * v)
    return ("%+.*f%%" if signed else "%.*f%%") % (digits, 100.0 * v)


def short_rev(rev):
    """A git hash shortened to 8 digits (a "-dirty" suffix kept); other text as it is."""
    if not rev:
        return "?"
    m = re.fullmatch(r"([0-9a-fA-F]{12,})(.*)", rev)
    return m.group(1)[:8] + m.group(2) if m else rev


def commit_range(c):
    """A change's commit range, "before..after", from its revision_before and revision_after."""
    return "%s..%s" % (short_rev(c["revision_before"]), short_rev(c["revision_after"]))


def day(date):
    return date[:10] if isinstance(date, str) and date else ""


def when(date):
    """A history date (ISO, UTC when it had an offset) as "YYYY-MM-DD HH:MM"."""
    if not isinstance(date, str):
        return ""
    m = re.match(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(\+00:00|Z)?$", date)
    if not m:
        return date
    return "%s %s%s" % (m.group(1), m.group(2), " UTC" if m.group(3) else "")


def chart_stem(name):
    """A file name for a benchmark's chart: its name made safe, and a hash of it (names differ in
    characters the safe form drops)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:80]
    return "%s_%s" % (safe or "benchmark", hashlib.sha1(name.encode("utf-8")).hexdigest()[:8])


def family_stem(family):
    """A file name for a family's chart."""
    return "family_" + (re.sub(r"[^A-Za-z0-9._-]+", "_", family or "none").strip("_") or "none")
