//! Target C: the model rewriter (`nonzero-optimize`) on models from strangers. It must never
//! panic or hang; its output is an error or a model that parses again and passes the same
//! validity check as its input, and rewriting that output again must not fail.
//!
//! The first byte picks the input. Below 128 (every ModelProto's first tag byte is), the whole
//! data is the model (the seed corpus in seeds/optimize holds the committed exporter models,
//! which libFuzzer mutates). From 128 up, one of the embedded real models with bytes
//! overwritten at offsets the rest of the data chooses (mutations that keep most of the protobuf
//! framing, so the graph-level code sees many valid-looking models). Bit 6 of that byte first
//! strips the model's `value_info` and output types, so the rewriter's own inference carries
//! the proofs (real TorchScript exports have none); bit 5 turns on `nonzero_domain`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonzero_fuzz::strip_value_info;
use nonzero_optimize::Options;
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;

const MODELS: [&[u8]; 5] = [
    include_bytes!("../../models/exported/boxes_scores_dynamo18.onnx"),
    include_bytes!("../../models/exported/detection_postprocess_ts17.onnx"),
    include_bytes!("../../models/exported/x_mask_ts17.onnx"),
    include_bytes!("../../models/rewrite-variants/loop_body.onnx"),
    include_bytes!("../../models/rewrite-variants/where_gather_opset9.onnx"),
];

fn check(model: &[u8], options: &Options) {
    if let Ok((out, report)) = nonzero_optimize::optimize_with(model, options) {
        let parsed = ModelProto::decode(out.as_slice()).expect("the rewriter's output parses");
        assert!(parsed.graph.is_some());
        // Input that was accepted passed the validity check; so must the output (issue 29).
        nonzero_optimize::check_model(&parsed)
            .expect("the rewriter's output passes the validity check its input passed");
        // Every NonZero is accounted for: rewritten, moved, or left with a reason.
        assert!(report.nonzero_left() + report.moved_to_domain <= report.nonzero_nodes);
        let _ = (report.summary(), report.to_json());
        nonzero_optimize::optimize_with(&out, options)
            .expect("the rewriter's output can be rewritten again");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode < 128 {
        check(data, &Options::default());
        return;
    }
    let options = Options {
        nonzero_domain: mode & 32 != 0,
        ..Options::default()
    };
    let embedded = MODELS[usize::from(mode) % MODELS.len()];
    let mut model = if mode & 64 != 0 {
        strip_value_info(embedded)
    } else {
        embedded.to_vec()
    };
    // Each 3-byte group: a 16-bit offset and the byte to write there.
    for edit in rest.chunks_exact(3) {
        let offset = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % model.len();
        model[offset] = edit[2];
    }
    check(&model, &options);
});
