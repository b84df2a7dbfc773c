"""Times the static forms of `--target` against the generic one on ONNX Runtime CPU (issue 38,
item 2: a portable form may become the default only if it is no slower there). For each shape,
hand-made `NonZero(x)` and `x[mask]` (tests/static/handmade.py) are made static by the CLI in
each form, then run interleaved in one process, 2 threads, half the mask true; the median of
the runs per form is printed, and the ratio to generic.

    python benches/static_targets.py [target/release/nonzero] [--runs N]
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "static"))
import handmade  # noqa: E402

FORMS = ("generic", "qnn")
SHAPES = [(8, 320), (256, 256), (1024, 1024)]


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cli", nargs="?", default=str(ROOT / "target/release/nonzero"))
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| Model | Shape | " + " | ".join(f"{f} (ms)" for f in FORMS) + " | qnn / generic |")
    print("|---|---|" + "---|" * (len(FORMS) + 1))
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        for shape in SHAPES:
            mask = rng.random(shape) < 0.5
            x = rng.standard_normal(shape).astype(np.float32)
            for kind, model, feeds in (
                ("NonZero(x)", handmade.nonzero(shape), {"x": np.where(mask, x, 0).astype(np.float32)}),
                ("x[mask]", handmade.x_mask(shape, []), {"x": x, "mask": mask}),
            ):
                original = work / "m.onnx"
                onnx.save(model, str(original))
                sessions = {}
                for form in FORMS:
                    out = work / f"{form}.onnx"
                    subprocess.run([args.cli, "optimize", "--static", "--target", form, str(original), str(out)],
                                   check=True, capture_output=True)
                    sessions[form] = session(out)
                times = {f: [] for f in FORMS}
                for _ in range(args.runs):
                    for form, sess in sessions.items():
                        start = time.perf_counter()
                        sess.run(None, feeds)
                        times[form].append(time.perf_counter() - start)
                med = {f: 1000 * float(np.median(t)) for f, t in times.items()}
                cells = " | ".join(f"{med[f]:.3f}" for f in FORMS)
                print(f"| {kind} | {'x'.join(map(str, shape))} | {cells} | {med['qnn'] / med['generic']:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
