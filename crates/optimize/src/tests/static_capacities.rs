//! Capacities named by the user (`--capacity NAME=N`, Python `capacity={NAME: N}`): each caps the
//! selections that reach that graph output, in place of `--capacity N`; a name that is no output,
//! a capacity below 1, and outputs of one selection given two capacities are refused by name.

use super::*;
use crate::{optimize_with, OptimizeError, Options};
use nonzero_proto::onnx::tensor_proto::DataType;

/// `ya = NonZero(a)`, `yb = NonZero(b)` (a, b float `[4, 3]`), and `yt = Transpose(yb)`.
fn two_selections() -> Vec<u8> {
    let g = graph(
        vec![
            node("NonZero", &["a"], &["ya"], vec![]),
            node("NonZero", &["b"], &["yb"], vec![]),
            node("Transpose", &["yb"], &["yt"], vec![ints("perm", &[1, 0])]),
        ],
        vec![
            value("a", DataType::Float, Some(&["4", "3"])),
            value("b", DataType::Float, Some(&["4", "3"])),
        ],
        &["ya", "yb", "yt"],
        vec![],
    );
    model(g, 17)
}

fn with(named: &[(&str, i64)], capacity: Option<i64>) -> Options {
    let mut options = static_options(&[]);
    options.capacity = capacity;
    options.output_capacities = named.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    options
}

fn output_shapes(bytes: &[u8]) -> Vec<(String, Option<Vec<Option<i64>>>)> {
    let m = ModelProto::decode(bytes).unwrap();
    m.graph
        .unwrap()
        .output
        .iter()
        .map(|o| {
            let name = o.name.clone().unwrap();
            (name, nonzero_emit_static::inputs::declared(o))
        })
        .collect()
}

fn refused(options: &Options) -> String {
    static_error(&two_selections(), options)
}

#[test]
fn a_named_capacity_caps_the_selections_that_reach_that_output() {
    let (out, report) = optimize_with(&two_selections(), &with(&[("ya", 2)], None)).unwrap();
    let shapes = output_shapes(&out);
    let shape = |name: &str| shapes.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(shape("ya"), Some(vec![Some(2), Some(2)]));
    assert_eq!(shape("yb"), Some(vec![Some(2), Some(12)]));
    assert_eq!(shape("yt"), Some(vec![Some(12), Some(2)]));
    let s = report.static_mode.unwrap();
    assert_eq!(s.output_capacities, [("ya".to_string(), 2)].into());
    assert!(s
        .to_json()
        .contains("\"capacity\": null, \"output_capacities\": {\"ya\": 2}"));
    // In place of --capacity N for those selections; the others keep N.
    let (out, _) = optimize_with(&two_selections(), &with(&[("ya", 5)], Some(3))).unwrap();
    let shapes = output_shapes(&out);
    let shape = |name: &str| shapes.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(shape("ya"), Some(vec![Some(2), Some(5)]));
    assert_eq!(shape("yb"), Some(vec![Some(2), Some(3)]));
    // One selection reaching two outputs: the same capacity for both is one capacity.
    let (out, _) = optimize_with(&two_selections(), &with(&[("yb", 4), ("yt", 4)], None)).unwrap();
    let shapes = output_shapes(&out);
    let shape = |name: &str| shapes.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(shape("yt"), Some(vec![Some(4), Some(2)]));
}

#[test]
fn named_capacities_are_refused_by_name() {
    assert_eq!(
        refused(&with(&[("nope", 2)], None)),
        "a capacity for 'nope', but the main graph has no output named 'nope' (its outputs: 'ya', 'yb', 'yt')"
    );
    assert_eq!(
        refused(&with(&[("yb", 2), ("yt", 3)], None)),
        "the outputs 'yb' and 'yt' come from one selection, but get the capacities 2 and 3; give them one"
    );
    assert_eq!(
        refused(&with(&[("ya", 0)], None)),
        "options: the capacity of the output 'ya' must be at least 1, got 0"
    );
    let mut dynamic = Options::default();
    dynamic.output_capacities.insert("ya".to_string(), 2);
    let why = optimize_with(&two_selections(), &dynamic).unwrap_err();
    assert_eq!(
        why,
        OptimizeError::Static(
            "options: capacity (--capacity) applies only with static (--static)".to_string()
        )
    );
    let json = Options::from_json(r#"{"static": true, "output_capacities": {"ya": 2}}"#).unwrap();
    assert_eq!(json.output_capacities, [("ya".to_string(), 2)].into());
}
