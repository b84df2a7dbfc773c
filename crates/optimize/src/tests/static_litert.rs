//! `--target litert`'s own forms (emit-static's litert/): a Split of a fixed shape as Slices,
//! an Identity writing an integer graph output from a tensor read elsewhere as `Add(x, 0)`,
//! transposed coordinates as a Gather of grid rows, and a Where of integers with its operands
//! at its shape, which onnx2tf converts right (tests/deploy runs them on LiteRT). The other
//! targets keep the model's own forms.

use super::*;
use crate::optimize_with;
use nonzero_emit_static::Target;
use nonzero_proto::onnx::{GraphProto, ModelProto};
use nonzero_proto::Message;

/// `nonzero(m, as_tuple=True)` as TorchScript writes it: NonZero, Transpose, a Split into the
/// two columns, each squeezed; `x` [6, 4] split as `split` (or into equal parts) along axis 1.
fn columns_and_split(split: Option<&[i64]>, parts: usize) -> Vec<u8> {
    let outputs: Vec<String> = (0..parts).map(|i| format!("x{i}")).collect();
    let out_refs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    let mut split_inputs = vec!["x"];
    let mut constants = vec![int64s("one", &[1])];
    if let Some(sizes) = split {
        constants.push(int64s("sizes", sizes));
        split_inputs.push("sizes");
    }
    let nodes = vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node(
            "Split",
            &["t", "ones"],
            &["r_col", "c_col"],
            vec![int("axis", 1)],
        ),
        node("Squeeze", &["r_col", "one"], &["r"], vec![]),
        node("Squeeze", &["c_col", "one"], &["c"], vec![]),
        node("Split", &split_inputs, &out_refs, vec![int("axis", 1)]),
    ];
    constants.push(int64s("ones", &[1, 1]));
    let mut names = vec!["r", "c"];
    names.extend(out_refs);
    let g = graph(
        nodes,
        vec![
            value("m", DataType::Bool, Some(&["3", "5"])),
            value("x", DataType::Float, Some(&["6", "4"])),
        ],
        &names,
        constants,
    );
    model(g, 13)
}

fn static_graph(bytes: &[u8], target: Target) -> GraphProto {
    let mut options = static_options(&[]);
    options.target = target;
    let (out, report) = optimize_with(bytes, &options).expect("static");
    assert_eq!(report.nonzero_left(), 0);
    ModelProto::decode(out.as_slice()).unwrap().graph.unwrap()
}

fn ops(g: &GraphProto) -> Vec<&str> {
    g.node
        .iter()
        .map(|n| n.op_type.as_deref().unwrap())
        .collect()
}

fn ints_of(g: &GraphProto, name: &str) -> Vec<i64> {
    let t = g
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some(name))
        .unwrap();
    nonzero_rewrite_graph::graph::tensor_ints(t).unwrap()
}

#[test]
fn splits_become_slices_of_each_part() {
    for (split, parts, want) in [
        (Some(&[1i64, 3][..]), 2, vec![(0, 1), (1, 4)]),
        (None, 2, vec![(0, 2), (2, 4)]),
        (None, 4, vec![(0, 1), (1, 2), (2, 3), (3, 4)]),
    ] {
        let g = static_graph(&columns_and_split(split, parts), Target::Litert);
        assert!(!ops(&g).contains(&"Split"), "{:?}", ops(&g));
        for (i, (start, end)) in want.into_iter().enumerate() {
            let slice = g
                .node
                .iter()
                .find(|n| n.output[0] == format!("x{i}"))
                .expect("each part written");
            assert_eq!(slice.op_type.as_deref(), Some("Slice"));
            assert_eq!(
                (
                    ints_of(&g, &slice.input[1]),
                    ints_of(&g, &slice.input[2]),
                    ints_of(&g, &slice.input[3])
                ),
                (vec![start], vec![end], vec![1]),
                "part {i}"
            );
        }
    }
}

#[test]
fn the_counts_of_one_selection_become_adds_of_zero() {
    let g = static_graph(&columns_and_split(None, 2), Target::Litert);
    for count in ["r_count", "c_count"] {
        let writer = g.node.iter().find(|n| n.output[0] == count).unwrap();
        assert_eq!(writer.op_type.as_deref(), Some("Add"), "{count}");
        assert_eq!(ints_of(&g, &writer.input[1]), vec![0]);
    }
}

#[test]
fn the_other_targets_keep_the_split_and_the_identities() {
    for target in [Target::Generic, Target::Qnn] {
        let g = static_graph(&columns_and_split(None, 2), target);
        assert!(ops(&g).contains(&"Split"), "{target:?}");
        let writer = g.node.iter().find(|n| n.output[0] == "r_count").unwrap();
        assert_eq!(writer.op_type.as_deref(), Some("Identity"), "{target:?}");
    }
}

/// `torch.argwhere(m)` (NonZero, Transpose) of a `[1, 1, 3]` mask: its rows are `[3, 3]`, as
/// square as onnx2tf's tf_converter needs to drop a Transpose.
fn argwhere_square() -> Vec<u8> {
    let nodes = vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["rows"], vec![ints("perm", &[1, 0])]),
    ];
    let g = graph(
        nodes,
        vec![value("m", DataType::Bool, Some(&["1", "1", "3"]))],
        &["rows"],
        vec![],
    );
    model(g, 13)
}

#[test]
fn transposed_coordinates_are_gathered_by_rows_of_the_grid() {
    let g = static_graph(&argwhere_square(), Target::Litert);
    assert!(!ops(&g).contains(&"Transpose"), "{:?}", ops(&g));
    let gather = g
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some("Gather"))
        .unwrap();
    assert_eq!(gather.attribute[0].i, Some(0), "a Gather of rows");
    let grid = g
        .initializer
        .iter()
        .find(|t| Some(&t.name.clone().unwrap()) == gather.input.first())
        .unwrap();
    assert_eq!(
        grid.dims,
        vec![4, 3],
        "a row per position, and the pad slot's"
    );
    let rows = vec![0, 0, 0, 0, 0, 1, 0, 0, 2, -1, -1, -1];
    assert_eq!(ints_of(&g, grid.name.as_deref().unwrap()), rows);
    // The generic and qnn forms keep the Transpose (generic: Div and Mod, no grid).
    for target in [Target::Generic, Target::Qnn] {
        let g = static_graph(&argwhere_square(), target);
        assert!(ops(&g).contains(&"Transpose"), "{target:?}");
    }
}

/// A NonZero beside the model's own Wheres: of int64 `y` `[4]` and a scalar 0 under a `[4]`
/// condition, and of floats alike.
fn wheres_beside_a_nonzero() -> Vec<u8> {
    let nodes = vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node("Where", &["c", "y", "zero"], &["w"], vec![]),
        node("Where", &["c", "f", "zero_f"], &["wf"], vec![]),
    ];
    let g = graph(
        nodes,
        vec![
            value("m", DataType::Bool, Some(&["3"])),
            value("c", DataType::Bool, Some(&["4"])),
            value("y", DataType::Int64, Some(&["4"])),
            value("f", DataType::Float, Some(&["4"])),
        ],
        &["nz", "w", "wf"],
        vec![scalar("zero", 0), float_tensor("zero_f", &[], &[0.0])],
    );
    model(g, 13)
}

#[test]
fn an_integer_where_reads_its_operands_at_its_shape() {
    let g = static_graph(&wheres_beside_a_nonzero(), Target::Litert);
    let writer = |name: &str| {
        g.node
            .iter()
            .find(|n| n.output.first().map(String::as_str) == Some(name))
            .unwrap()
    };
    let w = writer("w");
    assert_eq!(&w.input[..2], ["c", "y"]);
    let expand = writer(&w.input[2]);
    assert_eq!(expand.op_type.as_deref(), Some("Expand"));
    assert_eq!(expand.input[0], "zero");
    assert_eq!(ints_of(&g, &expand.input[1]), vec![4]);
    // A float Where becomes arithmetic on that backend, which broadcasts: left as it is.
    assert_eq!(writer("wf").input, ["c", "f", "zero_f"]);
    for target in [Target::Generic, Target::Qnn] {
        let g = static_graph(&wheres_beside_a_nonzero(), target);
        let w = g
            .node
            .iter()
            .find(|n| n.output.first().map(String::as_str) == Some("w"));
        assert_eq!(w.unwrap().input, ["c", "y", "zero"], "{target:?}");
    }
}
