//! Target D: the rewriter's static mode (`nonzero optimize --static`, docs/static.md) on models
//! from strangers, with `--input-shape` and `--capacity` drawn from the data. It must never panic
//! or hang; its output is an error, or a model that
//! - parses and passes `check_model`;
//! - declares a fixed shape (every dim a `dim_value`) for every graph output and every
//!   `value_info`, unless the report leaves nodes dynamic (`allow_dynamic` writes those);
//! - comes back byte for byte when made static again with the same options (the input shapes
//!   now fixed in the model: given again, or not at all).
//!
//! Data: byte 0 holds flags, byte 1 the capacity, bytes 2..16 the sizes; the rest is the model.
//! Flags: bit 7 takes one of the embedded models (bits 0-2 pick it; bit 6 strips its
//! `value_info` and output types) with bytes overwritten at offsets the rest chooses, as target
//! C does; without it the rest is the whole model (seeds/optimize_static: each exporter model
//! behind a 16-byte header). Bit 5 is `allow_dynamic`; bit 4 draws every size of every input
//! on its own (a changed fixed size, or one name given two sizes, is an error); bit 3 leaves
//! the shapes out of the second run.
//!
//! Sizes and capacities: mostly 0-8 (1-239 for the capacity), else edge values up to
//! `i64::MAX` (2^31 and 2^32 elements, past int64's count). The rewriter allocates nothing in
//! proportion to a size (the padded tensors exist only when the model runs, and static mode
//! refuses those past 2^31 elements), so these are numbers for its checked arithmetic, and
//! libFuzzer's `-rss_limit_mb` (2 GiB) catches any allocation that grew with them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonzero_fuzz::strip_value_info;
use nonzero_optimize::Options;
use nonzero_proto::onnx::tensor_shape_proto::dimension::Value as DimValue;
use nonzero_proto::onnx::{type_proto, GraphProto, ModelProto, ValueInfoProto};
use nonzero_proto::Message;
use std::collections::BTreeMap;

const MODELS: [&[u8]; 8] = [
    include_bytes!("../../models/exported/nonzero_ts17.onnx"),
    include_bytes!("../../models/exported/x_mask_dynamo18.onnx"),
    include_bytes!("../../models/exported/index_put_ts17.onnx"),
    include_bytes!("../../models/exported/boxes_scores_dynamo18.onnx"),
    include_bytes!("../../models/exported/where_index_ts17.onnx"),
    include_bytes!("../../models/real/torch_patterns/mask_nms_ts17.onnx"),
    include_bytes!("../../models/real/torch_patterns/loop_masked_write_ts17.onnx"),
    include_bytes!("../../models/real/torch_patterns/if_select_ts17.onnx"),
];

/// Sizes past the small ones: a few elements more, 2^31 and 2^32 (the padded limit, u32),
/// and past what an int64 counts in one size or in a product.
const EDGE_SIZES: [i64; 8] = [
    16,
    100,
    65_537,
    1 << 31,
    1 << 32,
    1 << 40,
    1 << 62,
    i64::MAX,
];

const HEADER: usize = 16;

fn size(byte: u8) -> i64 {
    match byte {
        0..=199 => i64::from(byte % 9),
        _ => EDGE_SIZES[usize::from(byte) % EDGE_SIZES.len()],
    }
}

fn capacity(byte: u8) -> Option<i64> {
    match byte {
        0 => None,
        1..=239 => Some(i64::from(byte)),
        _ => Some(EDGE_SIZES[usize::from(byte) % EDGE_SIZES.len()]),
    }
}

fn tensor_dims(vi: &ValueInfoProto) -> Option<Vec<Option<i64>>> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    let dims = t.shape.as_ref()?.dim.iter().map(|d| match d.value {
        Some(DimValue::DimValue(v)) if v >= 0 => Some(v),
        _ => None,
    });
    Some(dims.collect())
}

/// Each size of a tensor value info: fixed, or its `dim_param` (empty when it has none).
fn sizes_and_names(vi: &ValueInfoProto) -> Option<Vec<Result<i64, String>>> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    let dims = t.shape.as_ref()?.dim.iter().map(|d| match &d.value {
        Some(DimValue::DimValue(v)) if *v >= 0 => Ok(*v),
        Some(DimValue::DimParam(p)) => Err(p.clone()),
        _ => Err(String::new()),
    });
    Some(dims.collect())
}

/// A shape for the graph inputs that declare one (every input with `all`, else those with a
/// symbolic size), of the declared rank: each symbolic size drawn in turn from `sizes`, one
/// size per `dim_param` name, the fixed sizes kept. With `all`, every size is drawn, each on
/// its own (a changed fixed size, or one name given two sizes, is an error).
fn input_shapes(model: &[u8], sizes: &[u8], all: bool) -> BTreeMap<String, Vec<i64>> {
    let mut shapes = BTreeMap::new();
    let Some(graph) = ModelProto::decode(model).ok().and_then(|m| m.graph) else {
        return shapes;
    };
    let mut drawn = sizes.iter().cycle().map(|&b| size(b));
    let mut named: BTreeMap<String, i64> = BTreeMap::new();
    for input in &graph.input {
        let (Some(name), Some(dims)) = (input.name.clone(), sizes_and_names(input)) else {
            continue;
        };
        let initializer = graph.initializer.iter().any(|t| t.name == input.name);
        if initializer || !(all || dims.iter().any(Result::is_err)) {
            continue;
        }
        let mut shape = vec![];
        for dim in dims {
            let size = match dim {
                Ok(fixed) if !all => fixed,
                Err(param) if !all && !param.is_empty() => *named
                    .entry(param)
                    .or_insert_with(|| drawn.next().unwrap_or(1)),
                _ => drawn.next().unwrap_or(1),
            };
            shape.push(size);
        }
        shapes.insert(name, shape);
    }
    shapes
}

/// Every graph output and `value_info` of `graph` and of its bodies declares a fixed shape.
fn assert_fixed(graph: &GraphProto, label: &str) {
    for vi in graph.output.iter().chain(&graph.value_info) {
        let dims = tensor_dims(vi);
        assert!(
            dims.as_ref().is_some_and(|d| d.iter().all(Option::is_some)),
            "{label}: '{}' is declared without a fixed shape: {:?}",
            vi.name.as_deref().unwrap_or(""),
            vi.r#type
        );
    }
    for node in &graph.node {
        for a in &node.attribute {
            for body in a.g.iter().chain(&a.graphs) {
                assert_fixed(
                    body,
                    &format!("{label}/{}", node.name.as_deref().unwrap_or("")),
                );
            }
        }
    }
}

fn check(model: &[u8], options: &Options, again: &Options) {
    let Ok((out, report)) = nonzero_optimize::optimize_with(model, options) else {
        return;
    };
    let parsed = ModelProto::decode(out.as_slice()).expect("the static model parses");
    nonzero_optimize::check_model(&parsed)
        .expect("the static model passes the validity check its input passed");
    let _ = (report.summary(), report.to_json());
    if report.left.is_empty() {
        assert_fixed(parsed.graph.as_ref().expect("a graph"), "main");
    }
    let (twice, _) = nonzero_optimize::optimize_with(&out, again)
        .expect("the static model can be made static again");
    assert!(
        twice == out,
        "made static again, the model changed ({} bytes, then {})",
        out.len(),
        twice.len()
    );
}

fuzz_target!(|data: &[u8]| {
    if data.len() < HEADER {
        return;
    }
    let (header, rest) = data.split_at(HEADER);
    let flags = header[0];
    let model = if flags & 128 != 0 {
        let embedded = MODELS[usize::from(flags & 7) % MODELS.len()];
        let mut model = if flags & 64 != 0 {
            strip_value_info(embedded)
        } else {
            embedded.to_vec()
        };
        // Each 3-byte group: a 16-bit offset and the byte to write there.
        for edit in rest.chunks_exact(3) {
            let offset = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % model.len();
            model[offset] = edit[2];
        }
        model
    } else {
        rest.to_vec()
    };
    let options = Options {
        static_shapes: true,
        input_shapes: input_shapes(&model, &header[2..], flags & 16 != 0),
        capacity: capacity(header[1]),
        allow_dynamic: flags & 32 != 0,
        ..Options::default()
    };
    let again = Options {
        input_shapes: if flags & 8 != 0 {
            BTreeMap::new()
        } else {
            options.input_shapes.clone()
        },
        ..options.clone()
    };
    check(&model, &options, &again);
});
