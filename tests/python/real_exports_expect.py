"""Writes models/real/expected.json: for each real export, the op counts after `nonzero optimize`
once `onnx.shape_inference.infer_shapes(data_prop=True)` has run. That is issue 19's target for
the tool on the file as exported and without its value_info (test_real_exports.py). Only op
types whose count the rewrite changes are listed, with NonZero and the library ops always.

    .venv/bin/python tests/python/real_exports_expect.py     (after a release build of the CLI)
"""

import json
import sys
import tempfile

import real_exports as rx


def main():
    expected = {}
    for entry in rx.EXPORTS:
        original = rx.variant(entry, "exported")
        with tempfile.TemporaryDirectory() as tmp:
            proc, rewritten = rx.optimize(rx.variant(entry, "inferred"), tmp)
        if rewritten is None:
            sys.exit(f"{entry['file']}: nonzero optimize failed: {proc.stderr}")
        before, after = rx.op_counts(original), rx.op_counts(rewritten)
        changed = {op for op in before.keys() | after.keys() if before[op] != after[op]}
        changed |= {"NonZero", "ArgWhere", "BooleanMask", "BooleanMaskAxis", "MaskedFill", "MaskedScatter"}
        expected[entry["file"]] = {op: after[op] for op in sorted(changed)}
        print(entry["file"], expected[entry["file"]])
    (rx.REAL / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
