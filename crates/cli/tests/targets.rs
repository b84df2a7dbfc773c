//! `nonzero optimize --static --target NAME` (issue 38, item 2): the portable forms that NPU
//! toolchains take. Each export below, made static for qnn, litert and rknn, is checked by
//! `--check` on ONNX Runtime (every output, cut to its count, exactly the original's), and holds
//! no integer Div or Mod, for qnn and rknn no GatherElements, and for rknn no Slice of its own;
//! `--target` outside static mode and an unknown name are refused. The deploy stages
//! (tests/deploy) run the same forms on QNN HTP (which reads a negative gather index wrongly),
//! LiteRT and RKNN. Needs ONNX Runtime (common::ort_dylib).

mod common;

use common::{nonzero, root, stderr, stdout};
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;

/// (export, its --input-shape arguments): a bare NonZero, `x[mask]` by positions (the flat
/// gather), by a coordinate column (Gather along an axis), GatherND of the coordinates,
/// opset 11 (no int64 Max), a masked select and a count.
const EXPORTS: [(&str, &[&str]); 7] = [
    ("models/exported/nonzero_ts17.onnx", &["input_0=6,7"]),
    (
        "models/exported/x_mask_ts17.onnx",
        &["input_0=4,5,3", "input_1=4,5"],
    ),
    ("models/exported/where_index_ts17.onnx", &[]),
    ("models/real/tf2onnx/where_gather_nd_tf2onnx.onnx", &[]),
    (
        "models/real/paddle2onnx/nonzero_gather_paddle2onnx.onnx",
        &[],
    ),
    ("models/exported/masked_select_ts17.onnx", &[]),
    ("models/real/torch_patterns/masked_any_ts17.onnx", &[]),
];

/// The shapes the deploy stage gives each export (tests/static/exports.py): the manifests'.
fn shapes(export: &str, given: &[&str]) -> Vec<String> {
    if !given.is_empty() {
        return given.iter().map(|s| s.to_string()).collect();
    }
    let model = ModelProto::decode(std::fs::read(root().join(export)).unwrap().as_slice()).unwrap();
    let graph = model.graph.unwrap();
    let initializers: Vec<String> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.clone())
        .collect();
    graph
        .input
        .iter()
        .filter(|i| !initializers.contains(i.name.as_ref().unwrap()))
        .map(|i| {
            let dims = match &i.r#type.as_ref().unwrap().value {
                Some(nonzero_proto::onnx::type_proto::Value::TensorType(t)) => {
                    t.shape.clone().unwrap().dim
                }
                _ => panic!("a tensor input"),
            };
            let sizes: Vec<String> = dims
                .iter()
                .map(|d| match &d.value {
                    Some(nonzero_proto::onnx::tensor_shape_proto::dimension::Value::DimValue(
                        v,
                    )) => v.to_string(),
                    _ => "6".to_string(),
                })
                .collect();
            format!("{}={}", i.name.as_ref().unwrap(), sizes.join(","))
        })
        .collect()
}

/// Every op of the model's graph and bodies, with each node's inputs.
fn nodes(model: &ModelProto) -> Vec<(String, Vec<String>)> {
    fn walk(g: &nonzero_proto::onnx::GraphProto, out: &mut Vec<(String, Vec<String>)>) {
        for n in &g.node {
            out.push((n.op_type.clone().unwrap_or_default(), n.input.clone()));
            for a in &n.attribute {
                for b in a.g.iter().chain(&a.graphs) {
                    walk(b, out);
                }
            }
        }
    }
    let mut out = vec![];
    walk(model.graph.as_ref().unwrap(), &mut out);
    out
}

#[test]
fn every_target_form_is_exact_on_onnx_runtime_and_has_no_div_or_mod() {
    let Some(ort) = common::ort_dylib() else {
        return;
    };
    for target in ["qnn", "litert", "rknn"] {
        for (export, given) in EXPORTS {
            let dir = tempfile::tempdir().unwrap();
            let mut args = vec!["optimize".to_string(), "--static".into(), "--check".into()];
            args.extend([
                "--ort-dylib".into(),
                ort.to_str().unwrap().into(),
                "--target".into(),
                target.into(),
            ]);
            for shape in shapes(export, given) {
                args.extend(["--input-shape".into(), shape]);
            }
            args.extend([
                root().join(export).to_str().unwrap().to_string(),
                "o.onnx".into(),
            ]);
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = nonzero(dir.path(), &refs);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{target} {export}: {}",
                stderr(&out)
            );
            assert!(
                stdout(&out).contains("exactly equal to the original's"),
                "{target} {export}: {}",
                stdout(&out)
            );
            assert!(stdout(&out).contains(&format!("static: {target}: coordinates gathered")));
            let bytes = std::fs::read(dir.path().join("o.onnx")).unwrap();
            let model = ModelProto::decode(bytes.as_slice()).unwrap();
            let ops = nodes(&model);
            // LiteRT keeps GatherElements (onnx2tf's tf_converter fails on that Gather).
            let refused: &[&str] = match target {
                "litert" => &["Div", "Mod", "NonZero"],
                _ => &["Div", "Mod", "GatherElements", "NonZero"],
            };
            for (op, _) in &ops {
                assert!(
                    !refused.contains(&op.as_str()),
                    "{target} {export}: {op} in the portable form"
                );
            }
            // RKNN: the compaction writes no Slice (rknn-toolkit2 fails on its 1-D Slices; a
            // Split and a ReduceSum stand in), so any Slice left is the export's own.
            if target == "rknn" {
                let original = std::fs::read(root().join(export)).unwrap();
                let original = nodes(&ModelProto::decode(original.as_slice()).unwrap());
                let slices = |ops: &[(String, Vec<String>)]| {
                    ops.iter().filter(|(op, _)| op == "Slice").count()
                };
                assert!(
                    slices(&ops) <= slices(&original),
                    "{export}: {} Slices in the rknn form, {} in the export",
                    slices(&ops),
                    slices(&original)
                );
            }
        }
    }
}

#[test]
fn a_bare_nonzero_gets_its_coordinates_from_a_grid() {
    // The generic form divides; the portable one gathers an int32 grid and casts.
    let dir = tempfile::tempdir().unwrap();
    let input = root().join("models/exported/nonzero_ts17.onnx");
    let input = input.to_str().unwrap();
    for (target, has_grid) in [("generic", false), ("qnn", true)] {
        let args = [
            "optimize",
            "--static",
            "--target",
            target,
            "--input-shape",
            "input_0=6,7",
            input,
            "o.onnx",
        ];
        let out = nonzero(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let model =
            ModelProto::decode(std::fs::read(dir.path().join("o.onnx")).unwrap().as_slice())
                .unwrap();
        let graph = model.graph.as_ref().unwrap();
        let grid = graph.initializer.iter().find(|t| t.dims == [2, 43]);
        assert_eq!(grid.is_some(), has_grid, "{target}");
        if let Some(grid) = grid {
            let raw = grid.raw_data.as_ref().unwrap();
            let values: Vec<i32> = raw
                .chunks(4)
                .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            // Row 0: position / 7; row 1: position % 7; -1 in the pad slot's column (42).
            assert_eq!(&values[..9], &[0, 0, 0, 0, 0, 0, 0, 1, 1]);
            assert_eq!(values[42], -1);
            assert_eq!(&values[43..52], &[0, 1, 2, 3, 4, 5, 6, 0, 1]);
            assert_eq!(values[85], -1);
        }
        let divides = nodes(&model).iter().any(|(op, _)| op == "Div");
        assert_eq!(divides, !has_grid, "{target}");
    }
}

#[test]
fn target_needs_static_and_a_known_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = root().join("models/exported/nonzero_ts17.onnx");
    let input = input.to_str().unwrap();
    let out = nonzero(
        dir.path(),
        &["optimize", "--target", "qnn", input, "o.onnx"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("options: target (--target) applies only with static (--static)"),
        "{}",
        stderr(&out)
    );
    let out = nonzero(
        dir.path(),
        &["optimize", "--static", "--target", "tpu", input, "o.onnx"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: --target tpu: expected cpu, cuda (ONNX Runtime's providers) or, with --static, generic, qnn, litert, rknn\n"
    );
    // --provider is the same flag (its old name).
    let out = nonzero(
        dir.path(),
        &["optimize", "--provider", "cuda", input, "o.onnx"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
