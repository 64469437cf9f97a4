"""GitHub's REST API as the pull-request tools call it (ci/pr-comment,
ci/gate-authorize): one request with the workflow's token, its JSON and its
Link header back, and a refusal (an HTTP error, a server gone) as one
exception whose text is the tools' one line. Only the standard library."""
import json
import urllib.error
import urllib.request


class Refused(Exception):
    """A request GitHub refused, or a server that did not answer: the one line."""


def request(api, path, token, method="GET", data=None):
    req = urllib.request.Request(api.rstrip("/") + path, method=method,
                                 data=None if data is None else json.dumps(data).encode("utf-8"))
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("Authorization", "Bearer %s" % token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            link = r.headers.get("Link") or ""
            return json.loads(r.read().decode("utf-8") or "null"), link
    except urllib.error.HTTPError as e:
        raise Refused("%s %s: HTTP %d %s" % (method, path, e.code, e.reason))
    except (urllib.error.URLError, OSError) as e:
        raise Refused("%s %s: %s" % (method, path, getattr(e, "reason", e)))
