"""Run by .venv-deploy-litert's Python (litert.py starts it): loads each .tflite with LiteRT's
interpreter, reads every tensor's shape_signature and every op, and runs it on the inputs given.
argv[1] is a JSON file with a list of jobs {"tflite": path, "feeds": [npz paths], "outputs":
[npz paths, one per feeds]}; argv[2] is where the JSON list of results goes, one per job:
{"dynamic": [names of tensors with a -1 in shape_signature], "ops": [op names], "error": text or
null, "output_names": the signature's outputs}."""

import json
import pathlib
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter


def normal(name):
    """A tensor name as onnx2tf may rewrite it (`Identity:0` becomes `Identity__0`)."""
    return "".join(c for c in name.lower() if c.isalnum())


def judge(job):
    result = {"dynamic": [], "ops": [], "error": None, "output_names": []}
    try:
        interpreter = Interpreter(model_path=job["tflite"])
        result["dynamic"] = [d["name"] for d in interpreter.get_tensor_details() if -1 in list(d["shape_signature"])]
        result["ops"] = sorted({o["op_name"] for o in interpreter._get_ops_details()})
        runner = interpreter.get_signature_runner()
        signature = interpreter.get_signature_list()
        result["output_names"] = list(next(iter(signature.values()))["outputs"])
        inputs = {normal(n): n for n in next(iter(signature.values()))["inputs"]}
        shapes = {n: list(d["shape"]) for n, d in runner.get_input_details().items()}
        for feeds_path, out_path in zip(job["feeds"], job["outputs"]):
            feeds = {inputs.get(normal(n), n): v for n, v in np.load(feeds_path).items()}
            # A scalar for an input declared [1] (the litert form's rank-0 inputs) goes in as [1].
            feeds = {n: v.reshape(1) if v.ndim == 0 and shapes.get(n) == [1] else v for n, v in feeds.items()}
            outputs = runner(**feeds)
            np.savez(out_path, **{name: np.asarray(v) for name, v in outputs.items()})
    except Exception as e:  # noqa: BLE001 (the interpreter's RuntimeError and ValueError)
        result["error"] = f"{type(e).__name__}: {e}"[:2000]
    return result


def main():
    jobs = json.loads(pathlib.Path(sys.argv[1]).read_text())
    pathlib.Path(sys.argv[2]).write_text(json.dumps([judge(job) for job in jobs]))


if __name__ == "__main__":
    main()
