//! Which op definitions the rewriter knows. As ONNX Runtime's graph transformers do
//! (`IsSupportedOptypeVersionAndDomain`), a default-domain op is matched, inferred or emitted
//! only at a since-version listed in [`table`], the versions the patterns and the shape
//! inference were written for. A NonZero under an opset where ONNX does not define it (before 9,
//! or past [`NEWEST_KNOWN_OPSET`]) is never rewritten. See docs/optimize.md, "Known versions".

// Generated (scripts/gen-known-ops): one line per definition, as written.
#[rustfmt::skip]
mod table;

pub use table::NEWEST_KNOWN_OPSET;

use nonzero_proto::onnx::{NodeProto, OperatorSetIdProto};

/// One definition (schema) of an op: from which opset it holds, and what a node of it may have.
#[derive(Debug)]
pub struct Definition {
    pub since: i64,
    /// Least and most inputs (optional trailing ones included), and outputs.
    pub inputs: (u32, u32),
    pub outputs: (u32, u32),
    pub attributes: &'static [&'static str],
    pub required: &'static [&'static str],
}

/// The first opset that defines NonZero.
pub const NONZERO_FIRST_OPSET: i64 = 9;

/// True for the default ONNX domain's names.
pub fn is_onnx_domain(domain: Option<&str>) -> bool {
    matches!(domain, None | Some("") | Some("ai.onnx"))
}

/// The `ai.onnx` opset that `imports` name (`None` when they import none).
pub fn onnx_opset(imports: &[OperatorSetIdProto]) -> Option<i64> {
    imports
        .iter()
        .find(|o| is_onnx_domain(o.domain.as_deref()))
        .map(|o| o.version.unwrap_or(1))
}

/// The definition of `op` in effect at `opset`, when the rewriter knows both.
pub fn definition(op: &str, opset: i64) -> Option<&'static Definition> {
    if !(1..=NEWEST_KNOWN_OPSET).contains(&opset) {
        return None;
    }
    let i = table::DEFINITIONS
        .binary_search_by(|(name, _)| name.cmp(&op))
        .ok()?;
    table::DEFINITIONS[i]
        .1
        .iter()
        .rev()
        .find(|d| d.since <= opset)
}

/// The since-version of `op` in effect at `opset`, when the rewriter knows both.
pub fn since_version(op: &str, opset: i64) -> Option<i64> {
    definition(op, opset).map(|d| d.since)
}

/// Where a default-domain `node` does not fit the definition of its op at `opset` (ONNX
/// Runtime refuses such a node: "Unrecognized attribute", "input size not in range"). `Ok` for
/// ops and opsets outside the table: nothing is known of them, and nothing reads them.
pub fn conformance(node: &NodeProto, opset: i64) -> Result<(), String> {
    let op = node.op_type.as_deref().unwrap_or("");
    let Some(d) = definition(op, opset) else {
        return Ok(());
    };
    let name = format!("{op}-{}", d.since);
    // Trailing empty names are absent optional inputs (outputs likewise).
    let count =
        |names: &[String]| names.len() - names.iter().rev().take_while(|n| n.is_empty()).count();
    let (inputs, outputs) = (count(&node.input), count(&node.output));
    if inputs < d.inputs.0 as usize || inputs > d.inputs.1 as usize {
        return Err(format!(
            "has {inputs} inputs; {name} (the definition at opset {opset}) takes {} to {}",
            d.inputs.0, d.inputs.1
        ));
    }
    if outputs < d.outputs.0 as usize || outputs > d.outputs.1 as usize {
        return Err(format!(
            "has {outputs} outputs; {name} (the definition at opset {opset}) gives {} to {}",
            d.outputs.0, d.outputs.1
        ));
    }
    for a in &node.attribute {
        let attr = a.name.as_deref().unwrap_or("");
        if !d.attributes.contains(&attr) {
            return Err(format!(
                "has the attribute '{attr}', which {name} (the definition at opset {opset}) does not define"
            ));
        }
    }
    // A rule ONNX states in Split-18's shape inference rather than its schema.
    let split_sizes = inputs >= 2
        || node
            .attribute
            .iter()
            .any(|a| a.name.as_deref() == Some("num_outputs"));
    if op == "Split" && d.since >= 18 && !split_sizes {
        return Err(format!(
            "has neither the input 'split' nor the attribute 'num_outputs', one of which {name} (the definition at opset {opset}) requires"
        ));
    }
    if let Some(missing) = d
        .required
        .iter()
        .find(|r| !node.attribute.iter().any(|a| a.name.as_deref() == Some(r)))
    {
        return Err(format!(
            "lacks the attribute '{missing}', which {name} (the definition at opset {opset}) requires"
        ));
    }
    Ok(())
}

/// True when `op` at `opset` is a definition the rewriter knows.
pub fn is_known(op: &str, opset: Option<i64>) -> bool {
    opset.is_some_and(|v| since_version(op, v).is_some())
}

/// Why NonZero cannot be rewritten under `opset`, if it cannot.
pub fn nonzero_opset_problem(opset: Option<i64>) -> Option<String> {
    match opset {
        None => Some("the graph imports no ai.onnx opset".to_string()),
        Some(v) if v < NONZERO_FIRST_OPSET => Some(format!(
            "opset {v} does not define NonZero (ONNX defines it from opset {NONZERO_FIRST_OPSET})"
        )),
        Some(v) if v > NEWEST_KNOWN_OPSET => Some(format!(
            "opset {v} is newer than this rewriter knows (newest: {NEWEST_KNOWN_OPSET})"
        )),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_for_binary_search() {
        assert!(table::DEFINITIONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(table::DEFINITIONS
            .iter()
            .all(|(_, v)| v.windows(2).all(|w| w[0].since < w[1].since)
                && v.iter().all(|d| d.since <= NEWEST_KNOWN_OPSET)));
    }

    #[test]
    fn conformance_names_what_the_definition_lacks() {
        let node = |inputs: &[&str], attrs: &[&str]| NodeProto {
            op_type: Some("Squeeze".into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec!["y".into()],
            attribute: attrs
                .iter()
                .map(|a| nonzero_proto::onnx::AttributeProto {
                    name: Some(a.to_string()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        assert_eq!(conformance(&node(&["x", "axes"], &[]), 13), Ok(()));
        assert_eq!(
            conformance(&node(&["x", "axes"], &[]), 11).unwrap_err(),
            "has 2 inputs; Squeeze-11 (the definition at opset 11) takes 1 to 1"
        );
        assert_eq!(
            conformance(&node(&["x"], &["axes"]), 13).unwrap_err(),
            "has the attribute 'axes', which Squeeze-13 (the definition at opset 13) does not define"
        );
        // An absent optional input at the end is not counted.
        assert_eq!(conformance(&node(&["x", ""], &["axes"]), 11), Ok(()));
        let split = NodeProto {
            op_type: Some("Split".into()),
            ..node(&["x"], &[])
        };
        assert_eq!(
            conformance(&split, 18).unwrap_err(),
            "has neither the input 'split' nor the attribute 'num_outputs', one of which Split-18 (the definition at opset 18) requires"
        );
        assert_eq!(conformance(&split, 17), Ok(()));
    }

    #[test]
    fn since_version_picks_the_definition_in_effect() {
        assert_eq!(since_version("NonZero", 9), Some(9));
        assert_eq!(since_version("NonZero", 12), Some(9));
        assert_eq!(since_version("NonZero", 13), Some(13));
        assert_eq!(since_version("NonZero", 8), None);
        assert_eq!(since_version("NonZero", NEWEST_KNOWN_OPSET + 1), None);
        assert_eq!(since_version("Squeeze", 17), Some(13));
        assert_eq!(since_version("NoSuchOp", 17), None);
        assert!(!is_known("Transpose", None));
    }

    #[test]
    fn nonzero_opset_problems_name_the_opset() {
        assert_eq!(nonzero_opset_problem(Some(9)), None);
        assert_eq!(nonzero_opset_problem(Some(NEWEST_KNOWN_OPSET)), None);
        assert_eq!(
            nonzero_opset_problem(Some(99)).unwrap(),
            format!("opset 99 is newer than this rewriter knows (newest: {NEWEST_KNOWN_OPSET})")
        );
        assert!(nonzero_opset_problem(Some(8))
            .unwrap()
            .starts_with("opset 8 does not define NonZero"));
    }
}
