"""Sum ncu's gpu__time_duration per kernel (name and template arguments).

Reads the text ncu prints with --metrics gpu__time_duration.sum and prints a
line a kernel (launches, total microseconds) and the total. Used by the
results/*/run-*.sh GPU calls.
"""
import re
import sys


def main(path):
    total, name = {}, None
    with open(path) as f:
        for line in f:
            m = re.search(r"([A-Za-z_]\w*)<([^>]*)>", line)
            if m and "gpu__time_duration" not in line:
                name = m.group(1) + "<" + m.group(2) + ">"
            elif "gpu__time_duration" in line and name:
                us = float(line.split()[-1].replace(",", ""))
                n, t = total.get(name, (0, 0.0))
                total[name] = (n + 1, t + us)
    for k, (n, t) in sorted(total.items()):
        print(f"{k}: {n} launches, {t:.1f} us")
    print(f"all: {sum(t for _, t in total.values()):.1f} us")


if __name__ == "__main__":
    main(sys.argv[1])
