//! Which op definitions the rewriter knows. As ONNX Runtime's graph transformers do
//! (`IsSupportedOptypeVersionAndDomain`), a default-domain op is matched, inferred or emitted
//! only at a since-version listed in [`table`], the versions the patterns and the shape
//! inference were written for. A NonZero under an opset where ONNX does not define it (before 9,
//! or past [`NEWEST_KNOWN_OPSET`]) is never rewritten. See docs/optimize.md, "Known versions".

mod table;

pub use table::NEWEST_KNOWN_OPSET;

use nonzero_proto::onnx::OperatorSetIdProto;

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

/// The since-version of `op` in effect at `opset`, when the rewriter knows both.
pub fn since_version(op: &str, opset: i64) -> Option<i64> {
    if !(1..=NEWEST_KNOWN_OPSET).contains(&opset) {
        return None;
    }
    let i = table::SINCE_VERSIONS
        .binary_search_by(|(name, _)| name.cmp(&op))
        .ok()?;
    let versions = table::SINCE_VERSIONS[i].1;
    versions.iter().rev().find(|&&v| v <= opset).copied()
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

/// The table as JSON (`nonzero optimize --known-ops`), for tests and users.
pub fn table_json() -> String {
    let ops: Vec<String> = table::SINCE_VERSIONS
        .iter()
        .map(|(op, versions)| {
            let list: Vec<String> = versions.iter().map(i64::to_string).collect();
            format!("\"{op}\":[{}]", list.join(","))
        })
        .collect();
    format!(
        "{{\"newest_opset\":{NEWEST_KNOWN_OPSET},\"ops\":{{{}}}}}",
        ops.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_for_binary_search() {
        assert!(table::SINCE_VERSIONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(table::SINCE_VERSIONS
            .iter()
            .all(|(_, v)| v.windows(2).all(|w| w[0] < w[1])
                && v.iter().all(|&x| x <= NEWEST_KNOWN_OPSET)));
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
