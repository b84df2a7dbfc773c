//! Prints what the analysis proves about every tensor of a model's main graph, one per line:
//! `name<TAB>elem_type<TAB>[sizes]`, `?` for a size not fixed, then `<TAB>= [values...]` where
//! the constants and fixed shapes decide its value. The graph inputs named on the
//! command line are fixed first, as `--static` fixes them.
//!
//!     cargo run --release -p nonzero-rewrite-analysis --example shapes -- MODEL [NAME=D,D,...]...
//!
//! tests/static/test_folded_shapes.py compares these shapes with OpenVINO's.

use nonzero_proto::onnx::tensor_shape_proto::dimension::Value;
use nonzero_proto::onnx::{type_proto, ModelProto};
use nonzero_proto::Message;
use nonzero_rewrite_analysis::infer::{BodyInputs, ShapeTable};
use nonzero_rewrite_graph::graph::GraphIndex;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: shapes MODEL [NAME=D,D,...]...");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("shapes: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut model = match ModelProto::decode(bytes.as_slice()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("shapes: {path}: not an ONNX model: {e}");
            return ExitCode::FAILURE;
        }
    };
    let opset = nonzero_rewrite_graph::versions::onnx_opset(&model.opset_import);
    let Some(graph) = model.graph.as_mut() else {
        eprintln!("shapes: {path}: the model has no graph");
        return ExitCode::FAILURE;
    };
    for arg in &args[1..] {
        let Some((name, dims)) = arg.split_once('=') else {
            eprintln!("shapes: '{arg}' is not NAME=D,D,...");
            return ExitCode::from(2);
        };
        let Ok(dims) = dims
            .split(',')
            .map(str::parse::<i64>)
            .collect::<Result<Vec<_>, _>>()
        else {
            eprintln!("shapes: '{arg}': the sizes are not integers");
            return ExitCode::from(2);
        };
        let Some(input) = graph
            .input
            .iter_mut()
            .find(|i| i.name.as_deref() == Some(name))
        else {
            eprintln!("shapes: the model has no input named '{name}'");
            return ExitCode::from(2);
        };
        if let Some(type_proto::Value::TensorType(t)) =
            input.r#type.as_mut().and_then(|t| t.value.as_mut())
        {
            let shape = t.shape.get_or_insert_with(Default::default);
            shape.dim = dims
                .iter()
                .map(|&d| nonzero_proto::onnx::tensor_shape_proto::Dimension {
                    value: Some(Value::DimValue(d)),
                    ..Default::default()
                })
                .collect();
        }
    }
    let index = GraphIndex::new(graph);
    let root = ShapeTable::scope(opset);
    let table = ShapeTable::for_graph(graph, &index, Some(&root), &BodyInputs::Declared);
    for node in &graph.node {
        for out in node.output.iter().filter(|o| !o.is_empty()) {
            let info = table.get(out);
            let sizes = match &info.dims {
                None => "unknown rank".to_string(),
                Some(d) => {
                    let parts: Vec<String> = d
                        .iter()
                        .map(|x| match x.as_static() {
                            Some(v) => v.to_string(),
                            // A symbolic size, cut short (shape arithmetic can be long).
                            None => x.to_string().chars().take(60).collect(),
                        })
                        .collect();
                    format!("[{}]", parts.join(","))
                }
            };
            // A value the constants and fixed shapes decide: its first elements.
            let value = table.constant(out).map_or(String::new(), |c| {
                let all = c.data.as_f64();
                let shown: Vec<String> = all.iter().take(8).map(f64::to_string).collect();
                let more = if all.len() > 8 { ",..." } else { "" };
                format!("\t= [{}{more}]", shown.join(","))
            });
            println!("{out}\t{}\t{sizes}{value}", info.elem_type.unwrap_or(0));
        }
    }
    ExitCode::SUCCESS
}
