"""The one time and change formatters: the report, the comparator, the
bisection and the history's tables print seconds and changes with them."""


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


def pct(v, signed=True):
    """A fraction as a percentage with two decimals ("+5.24%"; "-" for None)."""
    if v is None:
        return "-"
    return ("%+.2f%%" if signed else "%.2f%%") % (100.0 * v)
