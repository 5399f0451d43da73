#!/usr/bin/env python3
"""Writes a memory snapshot of N trace events in PyTorch's own layout, built from a real one.

    python3 scripts/make-snapshot.py SRC.pickle N OUT.pickle

The trace of SRC's first device is repeated until it holds N events (the last copy cut short);
every copy is a new dict per event, but each event keeps the very traceback list object of the
event it copies, so `pickle.dump` writes each traceback once and refers to it afterwards
through the memo — as `torch.cuda.memory._dump_snapshot()` writes the lists PyTorch shares
between events. Segments and settings are SRC's. Protocol 4, as PyTorch's dump uses.
"""
import pickle
import sys

src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(src, "rb") as f:
    snap = pickle.load(f)
trace = snap["device_traces"][0]
events = []
while len(events) < n:
    for e in trace:
        if len(events) == n:
            break
        events.append(dict(e))  # a new dict; e["frames"] stays the same list object
snap["device_traces"] = [events] + [[] for _ in snap["device_traces"][1:]]
with open(out, "wb") as f:
    pickle.dump(snap, f, protocol=4)
