#!/usr/bin/env python3
"""Median of the numbers on stdin (one per line); with -n also the count."""
import statistics
import sys

vals = [float(x) for x in sys.stdin.read().split() if x.strip()]
if not vals:
    print("nan")
elif "-n" in sys.argv:
    print("%.3f %d" % (statistics.median(vals), len(vals)))
else:
    print("%.3f" % statistics.median(vals))
