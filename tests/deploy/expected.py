"""What each judge is known to refuse or get wrong, per form and model (issue 38): these tests
are xfail(strict=True), so that each flips to a failure the day it is fixed, and none passes
silently. Imports nothing."""

# Faults of the default (generic) form on QNN HTP, and the item of issue 38 that fixes each.
HTP_DIV_MOD = ("QNN HTP computes integer arithmetic in fp16, exact only to 2048: the generic form's "
               "coordinates by integer Div and Mod of a linear index come out wrong past it "
               "(issue 38 item 2: --target qnn gathers per-axis index grids instead)")
HTP_NEGATIVE_GATHER = ("QNN HTP does not read a Gather index of -1 as the last row: the generic form's padded "
                       "rows read real data instead of the zero slab (issue 38 item 2: --target qnn points "
                       "padding at a pad slot, never at -1)")
HTP_CONTROL_FLOW = ("QNN HTP takes no If or Loop: the nodes of the body go to the CPU EP (a toolchain limit; "
                    "no static form changes it)")
HTP_REDUCE_PROD = "QNN HTP takes no ReduceProd: it goes to the CPU EP (a toolchain limit)"
HTP_EMPTY_ALL = ("QNN HTP: torch's all() of an empty selection (ReduceMin over the padding read as the "
                 "type's highest value) gives False, where the original gives True")

# (judge, form, model id[, backend]): why it fails.
FAULTS = {
    ("qnn", "generic", "handmade/nonzero_8x320"): HTP_DIV_MOD,
    ("qnn", "generic", "exported/masked_select_ts17.onnx"): HTP_NEGATIVE_GATHER,
    ("qnn", "generic", "torch_patterns/masked_all_dynamo18.onnx"): HTP_EMPTY_ALL,
}
for _form in ("generic", "qnn", "litert"):
    for _model in ("torch_patterns/if_masked_scatter_dynamo18.onnx", "torch_patterns/loop_count_ts17.onnx",
                   "torch_patterns/loop_masked_write_ts17.onnx"):
        FAULTS["qnn", _form, _model] = HTP_CONTROL_FLOW
    for _model in ("torch_patterns/masked_prod_dynamo18.onnx", "torch_patterns/masked_prod_ts17.onnx"):
        FAULTS["qnn", _form, _model] = HTP_REDUCE_PROD


def fault(judge, form, model_id, backend=None):
    return FAULTS.get((judge, form, model_id, backend) if backend else (judge, form, model_id))
