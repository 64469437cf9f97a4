"""The report's text formatting (plots/report_html.py): numbers to 4
significant digits with SI prefixes, bytes, caches, any JSON value as
readable text, HTML and Markdown escaping, and the anchors of headings.
Only the Python standard library is used."""
import html
import math
import re

from regress.load.fmt import fmt_time, sig4  # noqa: F401  fmt_time: the report's one time format


def numeric(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def fmt_num(v):
    """4 significant digits; integers as integers; large values with SI prefixes."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if not numeric(v):
        return str(v)
    a = abs(v)
    if a >= 1e6:
        for div, suf in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
            if a >= div:
                s = "%.4g" % (v / div)
                if "e" not in s:
                    return s + suf
        return "%.4g" % v
    if a >= 1e4:  # 4 significant digits, written out: 42181.3 -> 42180
        return "%d" % round(float("%.4g" % v))
    if float(v).is_integer():
        return str(int(v))
    return "%.4g" % v


def fmt_bytes(n):
    for div, unit in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div:
            return "%s %s" % (sig4(n / div), unit)
    return "%d B" % n


def fmt_caches(caches, ctx):
    cpus = ctx.get("num_cpus") if numeric(ctx.get("num_cpus")) else None
    parts = []
    for c in caches:
        if not isinstance(c, dict):
            parts.append(fmt_value(c))
            continue
        s = "L%s %s %s" % (c.get("level", "?"), c.get("type", ""),
                           fmt_bytes(c["size"]) if numeric(c.get("size")) else "?")
        share = c.get("num_sharing")
        if cpus and numeric(share) and share > 0:
            s += " (x%d)" % max(1, int(cpus // share))
        parts.append(" ".join(s.split()))
    return ", ".join(parts)


def fmt_value(v):
    """Any JSON value as readable text, never a Python repr."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return fmt_num(v) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return ", ".join(fmt_value(x) for x in v)
    if isinstance(v, dict):
        return "; ".join("%s: %s" % (k, fmt_value(x)) for k, x in v.items())
    return str(v)


def fmt_context(key, value, ctx):
    if key == "caches" and isinstance(value, list):
        return fmt_caches(value, ctx)
    if key == "load_avg" and isinstance(value, list):
        return ", ".join("%.2f" % x if numeric(x) else fmt_value(x) for x in value)
    if key.endswith("_bytes") and isinstance(value, str) and value.isdigit() and int(value) >= 1024:
        return "%s (%s)" % (value, fmt_bytes(int(value)))
    return fmt_value(value)


def esc(s):
    return html.escape(str(s), quote=True)


def md_esc(s):
    """Text for a Markdown table cell or list item: HTML-escaped, pipes and newlines neutralised."""
    s = html.escape(str(s), quote=False)
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("*", "\\*").replace("\n", " ")


def slug(text):
    """The anchor GitHub gives a Markdown heading, used for the HTML ids too."""
    s = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return s.replace(" ", "-")


def header_html(name):
    """A column header that may wrap after underscores and dots."""
    return esc(name).replace("_", "_<wbr>").replace(".", ".<wbr>")
