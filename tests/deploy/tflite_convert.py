"""Run by .venv-deploy-onnx2tf's Python (litert.py starts it): converts ONNX models to .tflite
with onnx2tf, one job after another in this process. argv[1] is a JSON file with a list of jobs
{"onnx": path, "backend": "flatbuffer_direct" or "tf_converter", "inputs": [input names],
"tflite": where the float32 .tflite goes, "error": where the failure's text goes, and "layout":
"onnx" or "onnx2tf"}. With "onnx", every input keeps its shape (`keep_shape_absolutely_input_names`);
with "onnx2tf", onnx2tf's own layout: rank-3+ inputs move their second axis last (NCW to NWC). onnx2tf converts a copy: it writes onnxsim's result over its input. Each job writes one of the two files, and a .json beside it with the seconds."""

import contextlib
import io
import json
import pathlib
import shutil
import sys
import tempfile
import time
import traceback


def convert(job):
    import onnx2tf

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="nz-onnx2tf-") as work:
        log = io.StringIO()
        # onnx2tf runs onnxsim on its input and writes the result over it: it gets a copy, so
        # that the judged model stays the one the CLI wrote.
        model = pathlib.Path(work) / "model.onnx"
        shutil.copyfile(job["onnx"], model)
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                onnx2tf.convert(input_onnx_file_path=str(model), output_folder_path=str(pathlib.Path(work) / "out"),
                                tflite_backend=job["backend"], non_verbose=True,
                                keep_shape_absolutely_input_names=job["inputs"] if job["layout"] == "onnx" else None)
            made = sorted((pathlib.Path(work) / "out").glob("*_float32.tflite"))
            if not made:
                raise RuntimeError("onnx2tf wrote no *_float32.tflite")
            shutil.copyfile(made[0], job["tflite"] + ".part")
            pathlib.Path(job["tflite"] + ".part").replace(job["tflite"])
        except BaseException as e:  # noqa: BLE001 (onnx2tf calls sys.exit on some failures)
            if isinstance(e, KeyboardInterrupt) or (isinstance(e, SystemExit) and e.code in (130, 143)):
                raise  # killed (onnx2tf turns SIGTERM into SystemExit(143)): not the model's fault, not cached
            text = log.getvalue()[-6000:] + "\n" + "".join(traceback.format_exception(e))[-4000:]
            pathlib.Path(job["error"]).write_text(f"{type(e).__name__}: {e}\n{text}")
    seconds = time.monotonic() - start
    pathlib.Path(job["tflite"]).with_suffix(".json").write_text(json.dumps({"seconds": round(seconds, 2)}))


def main():
    for job in json.loads(pathlib.Path(sys.argv[1]).read_text()):
        convert(job)
        print(f"converted {job['onnx']} ({job['backend']})", flush=True)


if __name__ == "__main__":
    main()
