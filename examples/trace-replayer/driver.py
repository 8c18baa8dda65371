#!/usr/bin/env python3
"""A replayspec driver in Python that answers each spec with a recorded trace.

It speaks replayspec.driver/v1 (docs/driver-protocol.md) with nothing but the
standard library: handshake on stdout, the spec as JSON on stdin, the trace as
NDJSON on stdout, then {"end": N}. It has no engine: it looks the spec up by
name in golden/ (the library's goldens, or the --traces DIRs given) and
prints what the reference engine recorded. A real port would run
the spec on its runtime here instead.

    replayspec run --target exec:"python3 examples/trace-replayer/driver.py" specs/
"""
import json
import os
import sys

PROTOCOL = "replayspec.driver/v1"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The reference engine's claims: it recorded every trace this driver has.
CAPABILITIES = [
    "indefinite", "local-contexts", "concurrency", "pc-sampling", "spm",
    "thread-trace", "device-counting", "multi-agent", "counters",
    "snapshot-failure", "restore-failure", "tool-actions", "memory-actions", "repeat",
    "API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP", "COR",
    "LCX", "SVC", "AGT",
]


def trace_dirs(argv):
    dirs = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--traces"]
    return dirs or [os.path.join(ROOT, "golden")]


def main(argv):
    out = sys.stdout
    out.write(json.dumps({
        "protocol": PROTOCOL,
        "implementation": {"name": "trace-replayer (Python example)", "version": "1"},
        "capabilities": CAPABILITIES,
    }) + "\n")
    out.flush()  # the runner sends the spec only after the handshake

    body = sys.stdin.read()
    if not body.strip():
        return 0  # the runner's probe: handshake only
    try:
        name = json.loads(body)["name"]
    except (ValueError, KeyError, TypeError) as e:
        print(f"trace-replayer: cannot read the spec: {e}", file=sys.stderr)
        return 2

    for d in trace_dirs(argv):
        path = os.path.join(d, name + ".ndjson")
        if os.path.isfile(path):
            break
    else:
        print(f"trace-replayer: no recorded trace for spec {name!r} in "
              f"{', '.join(trace_dirs(argv))}", file=sys.stderr)
        return 1

    events = 0
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            out.write(line if line.endswith("\n") else line + "\n")
            if i > 0:  # line 1 is the header
                events += 1
    out.write(json.dumps({"end": events}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
