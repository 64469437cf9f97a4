"""Sum ncu's gpu__time_duration per kernel.

Reads the text ncu prints with --metrics gpu__time_duration.sum: a header
line a launch (the kernel's signature, then "(grid)x(block), Context ...,
Device ...") followed by its metrics. Prints a line a kernel (its name with
its template arguments: launches, total microseconds) and the total, so one
sort or k-means iteration splits into its kernels' times.

    ncu --metrics gpu__time_duration.sum build/gpu/bench ... > ncu.txt
    python3 ci/ncu-durations.py ncu.txt
"""
import re
import sys

# ncu scales the unit to the value ("ns", "us", "ms", or "nsecond", ...).
SCALE = {"n": 1e-3, "u": 1.0, "m": 1e3, "s": 1e6}


def kernel_name(header):
    """The name and template arguments, without return type, namespaces or parameters."""
    # ncu prints the anonymous namespace as "<unnamed>::", or "unnamed>::"
    # with its "<" lost (the versions differ).
    text = header.strip().replace("<unnamed>::", "").replace("unnamed>::", "")
    if text.startswith("void "):
        text = text[5:]
    depth, end = 0, len(text)
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            end = i
            break
    name, depth, start = text[:end], 0, 0
    for i in range(len(name) - 1):
        if name[i] == "<":
            depth += 1
        elif name[i] == ">":
            depth -= 1
        elif name[i:i + 2] == "::" and depth == 0:
            start = i + 2
    return name[start:]


def main(path):
    total, name = {}, None
    with open(path) as f:
        for line in f:
            if re.search(r", Context \d+, Stream \d+, Device \d+", line):
                name = kernel_name(line)
            elif "gpu__time_duration" in line and name:
                fields = line.split()
                value, unit = float(fields[-1].replace(",", "")), fields[-2]
                us = value * SCALE.get(unit[0], 1.0) if unit != "s" and unit != "second" else value * 1e6
                n, t = total.get(name, (0, 0.0))
                total[name] = (n + 1, t + us)
    for k, (n, t) in sorted(total.items()):
        print(f"{k}: {n} launches, {t:.1f} us")
    print(f"all: {sum(t for _, t in total.values()):.1f} us")


if __name__ == "__main__":
    main(sys.argv[1])
