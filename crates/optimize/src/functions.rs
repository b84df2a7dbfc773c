//! Model-local functions (`ModelProto.functions`) are searched like subgraphs. A function body
//! has one node list for every call, so a rewrite inside it must hold at every call site: the
//! body is rewritten once per call site, with that site's input shapes, and the result is kept
//! only when all agree; otherwise it is rewritten knowing nothing of its inputs.

use crate::infer::{BodyInputs, ShapeTable, TensorInfo};
use crate::report::Report;
use crate::rewrite::{FunctionKey, Pass};
use crate::{OptimizeError, DOMAIN, DOMAIN_VERSION};
use nonzero_proto::onnx::{
    FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, ValueInfoProto,
};
use std::collections::HashMap;

pub fn key(f: &FunctionProto) -> FunctionKey {
    (
        f.domain.clone().unwrap_or_default(),
        f.name.clone().unwrap_or_default(),
    )
}

fn calls(node: &NodeProto, key: &FunctionKey) -> bool {
    node.domain.as_deref().unwrap_or("") == key.0 && node.op_type.as_deref().unwrap_or("") == key.1
}

/// Rewrites every function body of `model`, after the main graph has recorded its call sites.
pub fn optimize_functions(pass: &mut Pass, model: &mut ModelProto) -> Result<(), OptimizeError> {
    for i in 0..model.functions.len() {
        let key = key(&model.functions[i]);
        // The library's fallback bodies (nonzero-rewrite-graph's `library`): never searched, rewritten or counted.
        if key.0 == DOMAIN {
            continue;
        }
        let label = format!("function {}.{}", key.0, key.1);
        let mut sites: Vec<Option<Vec<TensorInfo>>> = pass
            .call_sites
            .get(&key)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(Some)
            .collect();
        // Calls from other function bodies, and no call at all: nothing known of the inputs.
        let called_from_functions = model
            .functions
            .iter()
            .any(|f| f.node.iter().any(|n| calls(n, &key)));
        if called_from_functions || sites.is_empty() {
            sites.push(None);
        }
        let function = &model.functions[i];
        let mut trials = vec![];
        for site in &sites {
            trials.push(rewrite_body(pass, function, site.as_deref(), &label)?);
        }
        let agreed = trials.windows(2).all(|w| w[0].0 == w[1].0);
        let (nodes, report) = if agreed {
            trials.swap_remove(0)
        } else {
            rewrite_body(pass, function, None, &label)?
        };
        let changed = !report.rewrites.is_empty() || report.moved_to_domain > 0;
        merge(&mut pass.report, report);
        let function = &mut model.functions[i];
        function.node = nodes;
        let imported = function
            .opset_import
            .iter()
            .any(|o| o.domain.as_deref() == Some(DOMAIN));
        if changed && !imported {
            function.opset_import.push(OperatorSetIdProto {
                domain: Some(DOMAIN.to_string()),
                version: Some(DOMAIN_VERSION),
            });
        }
    }
    Ok(())
}

/// The body rewritten with `inputs` as what is known at one call site.
fn rewrite_body(
    pass: &Pass,
    function: &FunctionProto,
    inputs: Option<&[TensorInfo]>,
    label: &str,
) -> Result<(Vec<NodeProto>, Report), OptimizeError> {
    let mut graph = GraphProto {
        node: function.node.clone(),
        name: function.name.clone(),
        output: function
            .output
            .iter()
            .map(|o| ValueInfoProto {
                name: Some(o.clone()),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let opset = crate::versions::onnx_opset(&function.opset_import);
    let outer = ShapeTable::for_call(&function.input, inputs, label, opset);
    let mut trial = Pass {
        options: pass.options,
        onnx_opset: opset,
        report: Report::default(),
        call_sites: HashMap::new(),
    };
    trial.optimize_graph(&mut graph, Some(&outer), BodyInputs::Declared, label, 1)?;
    Ok((graph.node, trial.report))
}

fn merge(into: &mut Report, from: Report) {
    into.rewrites.extend(from.rewrites);
    into.left.extend(from.left);
    into.coordinates_used.extend(from.coordinates_used);
    into.nonzero_nodes += from.nonzero_nodes;
    into.moved_to_domain += from.moved_to_domain;
    into.removed_nodes += from.removed_nodes;
    into.graphs += from.graphs;
}
