"""A history's archive: each run's file exactly as written, gzip-compressed,
the ingest number and source path in the gzip header's comment (RFC 1952
FCOMMENT), so that the index can be rebuilt from the archive alone; and the
file helpers its writers share (read a file as the loader does, write one
atomically). Standard library only."""
import gzip
import json
import os
import struct
import zlib

ARCHIVE = "archive"        # the archive's directory in a history directory
ARCHIVE_FORMAT = 1         # "parbench_history" in an archive member's gzip comment


def gzip_with_comment(data, comment):
    """gzip bytes of `data` (deflate level 9, mtime 0) with an ASCII comment in its header (RFC 1952 FCOMMENT)."""
    c = comment.encode("ascii")
    if b"\0" in c:
        raise ValueError("a gzip comment cannot hold NUL")
    header = b"\x1f\x8b\x08\x10" + struct.pack("<I", 0) + b"\x02\xff" + c + b"\0"
    z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return header + z.compress(data) + z.flush() + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF,
                                                               len(data) & 0xFFFFFFFF)


def gzip_comment(raw):
    """The comment of a gzip header, or None (no comment, or not gzip)."""
    try:
        if raw[:3] != b"\x1f\x8b\x08" or len(raw) < 10:
            return None
        flags, i = raw[3], 10
        if flags & 4:  # FEXTRA
            i += 2 + struct.unpack("<H", raw[i:i + 2])[0]
        if flags & 8:  # FNAME
            i = raw.index(b"\0", i) + 1
        if flags & 16:  # FCOMMENT
            return raw[i:raw.index(b"\0", i)].decode("latin-1")
    except (ValueError, struct.error, IndexError):
        return None
    return None


def read_bytes(path):
    """The bytes of a file, decompressed when it is gzip (what the loader reads)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def write_atomic(path, data):
    """Write `data` to a temporary name beside `path`, then rename it over `path`: never half a file."""
    tmp = os.path.join(os.path.dirname(path), ".tmp-%d-%s" % (os.getpid(), os.path.basename(path)))
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def member_comment(run_id, source):
    """The gzip comment of a run's archive member: the archive format, its ingest number and source path."""
    return json.dumps({"parbench_history": ARCHIVE_FORMAT, "ingest": run_id, "source": source},
                      sort_keys=True, ensure_ascii=True)
