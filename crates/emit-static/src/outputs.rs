//! The graph outputs of a static model: each padded output's declared capacity and its
//! `<name>_count`, and the fixed shapes the inference proves for the others (a compiler that
//! reads the declared output types, as IREE's importer does for a Loop's results, needs them).

use super::compact;
use super::scope::Scope;
use super::static_dims;
use crate::graph::{describe, GraphIndex};
use crate::StaticError;
use nonzero_proto::onnx::tensor_shape_proto::dimension::Value as DimValue;
use nonzero_proto::onnx::tensor_shape_proto::Dimension;
use nonzero_proto::onnx::{
    type_proto, GraphProto, NodeProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use nonzero_rewrite_analysis::findings::{Left, Reason};
use nonzero_rewrite_graph::MAX_SUBGRAPH_DEPTH;
use std::collections::{BTreeMap, HashSet};

/// Declares every tensor output and `value_info` of `graph` whose shape the inference proves
/// fixed with that shape (its element type too, where none is declared; a `value_info` written
/// before the rewrites, such as NonZero's `[2, u0]`, would say otherwise), and a body's inputs
/// proven fixed (a Loop's iteration number and condition, each carried value it keeps). Padded
/// outputs are already declared at their capacity; a declaration the inference disagrees with
/// is left as it is ([`not_fixed`] reports it).
pub fn declare_fixed(graph: &mut GraphProto, scope: &Scope) {
    let (_, shapes) = scope.shapes_of(graph);
    for out in graph.output.iter_mut().chain(&mut graph.value_info) {
        let Some(name) = out.name.clone() else {
            continue;
        };
        if shapes.conflict(&name).is_some() {
            continue;
        }
        if let Some(dims) = static_dims(&shapes, &name) {
            declare(out, &dims, shapes.get(&name).elem_type);
        }
    }
    // A body's inputs are known only as far as trusted: a Loop's iteration number and
    // condition, and the carried values it keeps (crate::infer::BodyInputs).
    if scope.depth > 0 {
        for input in &mut graph.input {
            if let Some(dims) = input.name.as_deref().and_then(|n| static_dims(&shapes, n)) {
                declare(input, &dims, None);
            }
        }
    }
}

/// A tensor's value info of `elem_type` and fixed `dims` (a Loop body's inputs and outputs).
/// Makes the Identity at `at` (writing a graph output) `Add(x, 0)` of an int64 or int32 zero
/// named apart from `names`: exact, and no toolchain drops or merges it as it does an Identity.
pub fn identity_as_add_of_zero(
    graph: &mut GraphProto,
    at: usize,
    elem_type: i32,
    names: &mut std::collections::HashSet<String>,
) {
    use nonzero_proto::onnx::tensor_proto::DataType;
    let output = graph.node[at].output[0].clone();
    let zero = (0..)
        .map(|i| format!("{output}/zero{i}"))
        .find(|n| !names.contains(n))
        .expect("a free name");
    names.insert(zero.clone());
    let int64 = elem_type == DataType::Int64 as i32;
    graph.initializer.push(nonzero_proto::onnx::TensorProto {
        name: Some(zero.clone()),
        data_type: Some(elem_type),
        int64_data: if int64 { vec![0] } else { vec![] },
        int32_data: if int64 { vec![] } else { vec![0] },
        ..Default::default()
    });
    let node = &mut graph.node[at];
    node.op_type = Some("Add".into());
    node.input.push(zero);
}

/// The names of `graph`'s outputs whose element type is one of `types`, in graph order.
pub fn outputs_of_type(
    graph: &GraphProto,
    types: &[nonzero_proto::onnx::tensor_proto::DataType],
) -> Vec<String> {
    graph
        .output
        .iter()
        .filter(|o| {
            matches!(o.r#type.as_ref().and_then(|t| t.value.as_ref()),
                Some(nonzero_proto::onnx::type_proto::Value::TensorType(t))
                    if types.iter().any(|&d| t.elem_type == Some(d as i32)))
        })
        .filter_map(|o| o.name.clone())
        .collect()
}

pub fn tensor_value(name: &str, elem_type: i32, dims: &[i64]) -> ValueInfoProto {
    let mut vi = ValueInfoProto {
        name: Some(name.to_string()),
        ..Default::default()
    };
    declare(&mut vi, dims, Some(elem_type));
    vi
}

/// Sets `vi`'s shape to `dims`, and its element type where it declares none.
fn declare(vi: &mut ValueInfoProto, dims: &[i64], elem_type: Option<i32>) {
    let r#type = vi.r#type.get_or_insert_with(TypeProto::default);
    let value = r#type
        .value
        .get_or_insert_with(|| type_proto::Value::TensorType(Default::default()));
    let type_proto::Value::TensorType(t) = value else {
        return;
    };
    if t.elem_type.is_none_or(|e| e == 0) {
        t.elem_type = elem_type;
    }
    t.shape = Some(TensorShapeProto {
        dim: dims
            .iter()
            .map(|&d| Dimension {
                value: Some(DimValue::DimValue(d)),
                ..Default::default()
            })
            .collect(),
    });
}

/// Declares `name` padded to the capacity along `axis`, and adds the output `<name>_count`.
pub fn add_count_output(
    graph: &mut GraphProto,
    name: &str,
    axis: usize,
    count: &str,
    capacity: i64,
) -> Result<(), StaticError> {
    let count_name = format!("{name}_count");
    let mut taken = HashSet::new();
    crate::graph::names_read_in(graph, &mut taken, 0);
    taken.extend(graph.node.iter().flat_map(|n| n.output.iter().cloned()));
    taken.extend(graph.input.iter().filter_map(|i| i.name.clone()));
    if taken.contains(&count_name) {
        return Err(StaticError::Refused(format!("the output '{name}' becomes padded and needs the output '{count_name}', but the model already has a tensor named '{count_name}'")));
    }
    for out in graph
        .output
        .iter_mut()
        .filter(|o| o.name.as_deref() == Some(name))
    {
        pad_declared(out, axis, capacity);
    }
    graph.node.push(NodeProto {
        input: vec![count.to_string()],
        output: vec![count_name.clone()],
        name: Some(format!("{count_name}/Identity")),
        op_type: Some("Identity".into()),
        domain: Some(String::new()),
        ..Default::default()
    });
    let mut vi = ValueInfoProto {
        name: Some(count_name),
        ..Default::default()
    };
    vi.r#type = Some(TypeProto {
        value: Some(nonzero_proto::onnx::type_proto::Value::TensorType(
            nonzero_proto::onnx::type_proto::Tensor {
                elem_type: Some(compact::count_output_type()),
                shape: Some(Default::default()),
            },
        )),
        ..Default::default()
    });
    graph.output.push(vi);
    Ok(())
}

/// Sets the declared size of `axis` of an output to the capacity (other sizes as declared).
fn pad_declared(vi: &mut ValueInfoProto, axis: usize, capacity: i64) {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_mut().and_then(|t| t.value.as_mut())
    else {
        return;
    };
    if let Some(d) = t.shape.as_mut().and_then(|s| s.dim.get_mut(axis)) {
        d.value = Some(DimValue::DimValue(capacity));
    }
}

/// Refuses a capacity for a name that is no output of the main graph (`--capacity NAME=N`,
/// Python `capacity={NAME: N}`), naming the outputs there are.
pub fn check_named_capacities(
    graph: &GraphProto,
    named: &BTreeMap<String, i64>,
) -> Result<(), StaticError> {
    let outputs: Vec<&str> = graph
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    for name in named.keys() {
        if !outputs.contains(&name.as_str()) {
            let list: Vec<String> = outputs.iter().map(|o| format!("'{o}'")).collect();
            return Err(StaticError::Refused(format!(
                "a capacity for '{name}', but the main graph has no output named '{name}' (its outputs: {})",
                list.join(", ")
            )));
        }
    }
    Ok(())
}

/// Every graph output and `value_info` of `graph` and its bodies still declared without a fixed
/// shape (every size a `dim_value`), as a node left `shape-not-fixed`: the inference proves no
/// fixed shape for it, or contradicts its declaration. Asked only when nothing else is left
/// dynamic, so that a static model never declares a shape it does not fix.
pub fn not_fixed(graph: &GraphProto, label: &str, depth: usize, left: &mut Vec<Left>) {
    let index = GraphIndex::new(graph);
    for vi in graph.output.iter().chain(&graph.value_info) {
        let name = vi.name.as_deref().unwrap_or("");
        let dims = crate::inputs::declared(vi);
        if dims.as_ref().is_some_and(|d| d.iter().all(Option::is_some)) {
            continue;
        }
        let producer = index.producer_of(graph, name);
        let shape = dims.map_or("no tensor shape".to_string(), |d| {
            let sizes: Vec<String> = d
                .iter()
                .map(|s| s.map_or("?".to_string(), |s| s.to_string()))
                .collect();
            format!("[{}]", sizes.join(", "))
        });
        left.push(Left {
            graph: label.to_string(),
            node: producer.map_or_else(|| format!("'{name}'"), describe),
            op: producer.and_then(|n| n.op_type.clone()).unwrap_or_default(),
            reason: Reason::ShapeNotFixed,
            detail: format!("'{name}' is declared with {shape}; the inference proves no fixed shape for it, or contradicts its declaration"),
        });
    }
    for node in graph.node.iter().filter(|_| depth < MAX_SUBGRAPH_DEPTH) {
        for a in &node.attribute {
            for body in a.g.iter().chain(&a.graphs) {
                let attr = a.name.as_deref().unwrap_or("");
                let sub = format!("{label}/{}.{attr}", describe(node));
                not_fixed(body, &sub, depth + 1, left);
            }
        }
    }
}
