"""Reads an HdrHistogram interval log with HdrHistogram's own Python
implementation (hdrhistogram on PyPI) and prints, per tag, the total count
and the max, one "tag count max" line each: the cross-check that tickwire's
.hlog files are readable by HdrHistogram's tools."""
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

reference = HdrHistogram(1, 60_000_000_000, 3)
reader = HistogramLogReader(sys.argv[1], reference)
totals = {}
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    tag = h.get_tag() or ""
    if tag not in totals:
        totals[tag] = HdrHistogram(1, 60_000_000_000, 3)
    totals[tag].add(h)
for tag, h in totals.items():
    print(tag, h.get_total_count(), h.get_max_value())
