"""A pull-request comment's text: the invisible marker that finds the
comment again on the next run, then the body, cut to GitHub's limit."""

MAX_BODY = 65536  # GitHub's limit on a comment's characters


def marker(key):
    return "<!-- parbench:%s -->" % key


def comment_text(key, body):
    """The marker of this key's comment and the body, cut with a note when
    the whole would be over MAX_BODY."""
    text = marker(key) + "\n" + body
    if len(text) > MAX_BODY:
        cut = "\n\n(cut at %d characters; the whole table is in the run's artifacts)" % MAX_BODY
        text = text[:MAX_BODY - len(cut)] + cut
    return text
