"""Summarises a valgrind memcheck log: every error record (invalid access, uninitialised value,
leak...) by kind, and which of them have a frame in our code (libnonzero_ort / nonzero_core /
nonzero_ort symbols). Usage: python valgrind_report.py valgrind.log. Exit status 1 when any record
is attributable to our code (still-reachable and possibly-lost blocks are not errors)."""

import collections
import re
import sys

OURS = re.compile(r"libnonzero_ort|nonzero_core::|nonzero_ort::|nonzero_ort\.so")
text = open(sys.argv[1]).read()
records, current = [], []
for line in text.splitlines():
    body = re.sub(r"^==\d+== ?", "", line)
    if not body.strip():
        if current:
            records.append(current)
        current = []
    else:
        current.append(body)
if current:
    records.append(current)

kinds = collections.Counter()
ours = []
ours_benign = []
for rec in records:
    if re.match(r"Thread \d+:", rec[0]):
        rec = rec[1:]
    if not rec:
        continue
    head = rec[0]
    if not rec[1:] or not any(l.lstrip().startswith(("at ", "by ")) for l in rec[1:]):
        continue  # summaries, headers
    kind = re.sub(r"[\d,]+", "N", head.split(" in loss record")[0]) if "lost" in head else head.split(" of size")[0]
    kinds[kind] += 1
    if any(OURS.search(l) for l in rec):
        # "still reachable" / "possibly lost" blocks are not errors (e.g. the op domain the library
        # keeps for the life of the process); they show the filter does see our frames.
        if "still reachable" in head or "possibly lost" in head:
            ours_benign.append(head)
        else:
            ours.append(rec)

summary = {m.group(1): m.group(2) for m in re.finditer(r"(definitely lost|indirectly lost|possibly lost|ERROR SUMMARY): ([^\n]+)", text)}
print("records:", sum(kinds.values()))
for k, n in kinds.most_common(12):
    print(f"  {n:6d}  {k}")
for k, v in summary.items():
    print(f"{k}: {v}")
print("still-reachable/possibly-lost records with a frame of ours (not errors):", len(ours_benign))
print("error records with a frame in libnonzero_ort / nonzero_core:", len(ours))
for rec in ours[:10]:
    print("\n".join(rec[:25]))
    print("--")
sys.exit(1 if ours else 0)
