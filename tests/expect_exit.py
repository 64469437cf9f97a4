#!/usr/bin/env python3
"""expect_exit.py CODE REGEX -- command...: run the command, require exit
status CODE and a line of stderr matching REGEX (bad input must fail clearly)."""
import re
import subprocess
import sys

code, pattern, sep, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
assert sep == "--", __doc__
p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
if p.returncode != code or not re.search(pattern, p.stderr):
    print("exit %d (want %d); stderr:\n%s" % (p.returncode, code, p.stderr))
    sys.exit(1)
print("ok: exit %d, %s" % (code, p.stderr.strip().splitlines()[-1]))
