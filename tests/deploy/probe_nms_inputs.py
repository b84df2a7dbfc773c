"""Where a detector's tail goes wrong on QNN HTP (expected.HTP_SSDLITE_TAIL): the NMS picks, or
the corners they read. Run by hand with .venv-deploy-qnn's Python, after the deploy stage has
built target/release/nonzero:

    .venv-deploy-qnn/bin/python tests/deploy/probe_nms_inputs.py ssdlite320 all

It cuts the qnn form's tail as test_tails.py does, adds the unrolled NMS's inputs (alive flags,
the five sorted corner tensors, the sorted box indices) and its picks as outputs, runs the mask
case on ONNX Runtime CPU and on HTP, and prints where the two differ. Then it replays the greedy
picks in numpy, in float32 and in float16, on each run's own corners: if HTP's replay gives HTP's
picks, the picks run right there and the difference comes from the corners (SSDlite: the
model's own batched-NMS offsets, added in fp16). The HTP run takes SSDlite's tail about 4
minutes to prepare on a quiet machine (13 with another job running). Asserts nothing: a probe,
not a test."""

import sys
import time

import numpy as np
import onnx

import qnn
import tails
import test_tails


def nms_tensors(graph):
    """(alive, corners, order, picks): the first unrolled pick's inputs (emit-static's
    nms/picks.rs) and the picks' Concat."""
    readers = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    producer = {o: n for n in graph.node for o in n.output}
    first = next(n for n in graph.node if n.op_type == "ArgMax")
    alive = producer[first.input[0]].input[0]
    pick = first.output[0]
    gathers = {n.input[0]: n.output[0] for n in readers[pick] if n.op_type == "GatherElements"}
    order = next(data for data in gathers if data != alive)
    index = next(n.output[0] for n in readers[pick] if n.op_type == "Cast")
    corners = [n.input[0] for n in readers[index] if n.op_type == "GatherElements"]
    # The first pick's box index: Where(found, order at the pick, -1), one of the picks' Concat.
    where = next(n.output[0] for n in readers[gathers[alive]] if n.op_type == "Where")
    concat = next(n for n in readers[where] if n.op_type == "Concat")
    return alive, corners, order, concat.output[0]


def replay(alive, corners, order, threshold, picks, dtype):
    """The greedy picks (picks.rs's arithmetic) of one list in `dtype`."""
    alive, c = alive.copy(), [q.astype(dtype) for q in corners]
    positions, out = np.arange(alive.size), []
    for _ in range(picks):
        p = int(np.argmax(alive))
        out.append(int(order[p]) if alive[p] else -1)
        x0, x1 = np.maximum(c[0][p], c[0]), np.minimum(c[1][p], c[1])
        y0, y1 = np.maximum(c[2][p], c[2]), np.minimum(c[3][p], c[3])
        with np.errstate(all="ignore"):  # float16 overflows where float32 does not: as HTP would
            inter = ((x1 - x0).astype(dtype) * (y1 - y0).astype(dtype)).astype(dtype)
            union = ((c[4][p] + c[4]).astype(dtype) - inter).astype(dtype)
            iou = (inter / union).astype(dtype)
        gone = (x1 > x0) & (y1 > y0) & (inter > 0) & (c[4][p] > 0) & (c[4] > 0) & (union > 0) & (iou > dtype(threshold))
        alive &= ~(gone | (positions == p))
    return np.array(out)


def main(name, case, threshold=0.55):
    tail = test_tails.cut_tail(name, "qnn")
    model = onnx.load(str(tail.static))
    alive, corners, order, picks = nms_tensors(model.graph)
    probe = tail.static.with_name(f"{name}_probe.onnx")
    onnx.save(tails.with_outputs(model, [alive, *corners, order, picks]), str(probe))
    feeds = tail.feeds(case)
    cpu = {k: np.asarray(v) for k, v in qnn.run(qnn.cpu(probe), feeds).items()}
    start = time.monotonic()
    placed = qnn.Placed(probe)
    print(f"HTP prepared in {time.monotonic() - start:.0f} s")
    htp = {k: np.asarray(v) for k, v in placed.run(feeds).items()}
    for key in (alive, *corners, order, picks):
        a, b = cpu[key], htp[key]
        off = np.flatnonzero(np.abs(a.astype(np.float64) - b) > 0) if a.dtype.kind == "f" else np.flatnonzero(a != b)
        print(f"{key}: {off.size} differ, first at {off[:5].tolist()}")
    for run, values in (("CPU", cpu), ("HTP", htp)):
        own = values[picks][0, 0]
        for dtype in (np.float32, np.float16):
            got = replay(values[alive][0, 0], [values[q][0, 0] for q in corners], values[order][0, 0], threshold,
                         own.size, dtype)
            print(f"{run}'s corners replayed in {dtype.__name__}: picks differ from {run}'s at "
                  f"{np.flatnonzero(got != own)[:5].tolist()}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("random", "none", "all", "one"):
        sys.exit("usage: probe_nms_inputs.py DETECTOR CASE (fcos, retinanet or ssdlite320; random, none, all or one)")
    main(*sys.argv[1:3])
