"""Runs in .venv-deploy-rknn (rknn-toolkit2 2.5.0, Python 3.12), one model per process (a crash
of the converter takes only its own model): builds the ONNX model for rk3588 with the converter's
default rules (none disabled, no quantization: float16), runs each feeds file in the toolkit's
simulator, and writes a JSON result.

    python rknn_build.py JOB.json

JOB: {"onnx": path, "inputs": [names], "feeds": [npz paths], "outputs": [npz paths to write],
      "result": path of the JSON result}
Result: {"stage": "load" | "build" | "init" | "inference" | "done", "error": the traceback or None,
         "seconds": the build's time}
The converter's verbose log goes to stdout (librknnc prints its op table there, not to the
toolkit's verbose_file): the caller keeps it (rknn_judge.py).
"""

import json
import sys
import time
import traceback

import numpy as np

def main(job_path):
    job = json.loads(open(job_path).read())
    result = {"stage": "load", "error": None, "seconds": None}
    from rknn.api import RKNN

    rknn = RKNN(verbose=True)
    try:
        rknn.config(target_platform="rk3588")
        # Every input shape is fixed in the model: naming inputs would ask the toolkit to crop it.
        if rknn.load_onnx(model=job["onnx"]) != 0:
            raise RuntimeError("load_onnx returned non-zero")
        result["stage"] = "build"
        start = time.monotonic()
        if rknn.build(do_quantization=False) != 0:
            raise RuntimeError("build returned non-zero")
        result["seconds"] = round(time.monotonic() - start, 2)
        result["stage"] = "init"
        if rknn.init_runtime() != 0:  # no target: the simulator
            raise RuntimeError("init_runtime returned non-zero")
        result["stage"] = "inference"
        for feeds_path, out_path in zip(job["feeds"], job["outputs"]):
            feeds = np.load(feeds_path)
            # A scalar input goes in as [1]: the simulator's input reader indexes the first axis.
            inputs = [feeds[name].reshape(1) if feeds[name].ndim == 0 else feeds[name] for name in job["inputs"]]
            # nchw: the arrays are laid out as the ONNX model's inputs (nhwc would transpose 4-D ones).
            outputs = rknn.inference(inputs=inputs, data_format=["nchw"] * len(inputs))
            if outputs is None:
                raise RuntimeError("inference returned None")
            np.savez(out_path, *[np.asarray(o) for o in outputs])
        result["stage"] = "done"
    except BaseException as e:  # noqa: BLE001 (the converter raises anything; the result says which)
        result["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}"
    finally:
        rknn.release()
        with open(job["result"], "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1])
