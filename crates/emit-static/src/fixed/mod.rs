//! Control flow over fixed-shape work, written out for the portable targets, which take none:
//! QNN HTP sends an If's or a Loop's body to the CPU EP, onnx2tf writes them as ops LiteRT cannot
//! run (or fails on them), and rknn-toolkit2 refuses them. An If becomes both branches and a
//! Where per output ([`ifs`]); a Loop that runs a known number of times, its body once per
//! iteration ([`loops`]).

mod ifs;
mod loops;

use crate::scope::Scope;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::dims::static_dims;

/// Writes out the main graph's Loops, then its Ifs; returns a report line (kind, line) for each.
pub fn write_out(graph: &mut GraphProto, scope: &Scope) -> Vec<(String, String)> {
    if !scope.target.portable() || scope.depth != 0 {
        return vec![];
    }
    let mut lines = loops::unroll(graph, scope);
    lines.extend(ifs::flatten(graph, scope));
    lines
}

/// The dims and element type of each output of `body` when it is fixed-shape work: every tensor
/// its nodes write has fixed dims, and none holds a body of its own. `scope` is the body's.
pub(crate) fn fixed_work(body: &GraphProto, scope: &Scope) -> Option<Vec<(Vec<i64>, i32)>> {
    let nested = body.node.iter().any(|n| {
        n.attribute
            .iter()
            .any(|a| a.g.is_some() || !a.graphs.is_empty())
    });
    let (_, table) = scope.shapes_of(body);
    let fixed = |name: &String| name.is_empty() || static_dims(&table, name).is_some();
    if nested || !body.node.iter().flat_map(|n| &n.output).all(fixed) {
        return None;
    }
    body.output
        .iter()
        .map(|o| {
            let name = o.name.as_deref()?;
            Some((static_dims(&table, name)?, table.info(name)?.elem_type?))
        })
        .collect()
}
