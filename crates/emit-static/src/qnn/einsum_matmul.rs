//! Einsum as Transpose and MatMul, for `--target qnn`: QNN HTP takes an Einsum only in the
//! forms of a batched MatMul (`bcxd,bcyd->bcxy`, `bcwd,bcdh->bcwh`), not Longformer's
//! `blhd,bshd->blhs` (the model's own op: its queries against the global keys), whose batch
//! letter h sits between the others.
//!
//! Einsums already in a batched MatMul's form (the batch letters first, in the same order, in
//! both operands and the output) stay: HTP takes them, and a Transpose before the MatMul made of
//! `bcxd,bcyd->bcxy` fails an assertion in ONNX Runtime 1.32's QNN EP (it aborts the process).
//!
//! A two-operand Einsum whose letters are batch letters (in both operands and the output), one
//! contracted letter (in both, not the output) and one free letter of each operand (there and in
//! the output) is `MatMul(A', B')` with A' = A transposed to `[batch..., left, contracted]` and
//! B' = B to `[batch..., contracted, right]`, transposed to the output's order. The same dot
//! products, each over the contracted axis.

use crate::emit::{ints_attr, Emitter};
use crate::graph::{attr, is_onnx_op};
use crate::scope::Scope;
use nonzero_proto::onnx::GraphProto;

/// Rewrites every Einsum of `graph` of that form. Returns how many.
pub fn rewrite(graph: &mut GraphProto, scope: &Scope) -> usize {
    let mut done = 0;
    // From the last, so that the positions of the ones before stay valid.
    for at in (0..graph.node.len()).rev() {
        let node = &graph.node[at];
        if !is_onnx_op(node, "Einsum") || node.input.len() != 2 || node.output.len() != 1 {
            continue;
        }
        let equation = attr(node, "equation").and_then(|a| a.s.as_deref());
        let Some(plan) = equation
            .and_then(|e| std::str::from_utf8(e).ok())
            .and_then(plan)
        else {
            continue;
        };
        let leading = |perm: &[i64]| (0..plan.batch).all(|i| perm[i] == i as i64);
        if leading(&plan.a) && leading(&plan.b) && leading(&plan.out) {
            continue;
        }
        let node = node.clone();
        let prefix = node.name.clone().unwrap_or_else(|| node.output[0].clone());
        let mut e = Emitter::new(graph, scope, &format!("{prefix}/matmul"));
        let transposed = |e: &mut Emitter, x: &str, perm: &[i64]| {
            if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
                return x.to_string();
            }
            e.op("Transpose", &[x], vec![ints_attr("perm", perm)])
        };
        let a = transposed(&mut e, &node.input[0], &plan.a);
        let b = transposed(&mut e, &node.input[1], &plan.b);
        let product = e.op("MatMul", &[&a, &b], vec![]);
        transposed(&mut e, &product, &plan.out);
        e.finish_as(&node.output[0]);
        graph.node.remove(at);
        e.insert(graph, at);
        done += 1;
    }
    done
}

/// The permutations of a MatMul form: of each operand, and of the product to the output.
#[derive(Debug, PartialEq)]
struct Plan {
    batch: usize,
    a: Vec<i64>,
    b: Vec<i64>,
    out: Vec<i64>,
}

/// The MatMul form of `equation` (`"ab,cd->ef"`, no ellipsis), or `None`.
fn plan(equation: &str) -> Option<Plan> {
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (inputs, output) = equation.split_once("->")?;
    let (a, b) = inputs.split_once(',')?;
    let letters = |s: &str| -> Option<Vec<char>> {
        let v: Vec<char> = s.chars().collect();
        let distinct = v.iter().collect::<std::collections::HashSet<_>>().len() == v.len();
        (distinct && v.iter().all(char::is_ascii_alphabetic)).then_some(v)
    };
    let (a, b, out) = (letters(a)?, letters(b)?, letters(output)?);
    let batch: Vec<char> = out
        .iter()
        .copied()
        .filter(|c| a.contains(c) && b.contains(c))
        .collect();
    let only = |x: &[char], y: &[char], in_out: bool| -> Vec<char> {
        x.iter()
            .copied()
            .filter(|c| !y.contains(c) && out.contains(c) == in_out)
            .collect()
    };
    let contracted: Vec<char> = a
        .iter()
        .copied()
        .filter(|c| b.contains(c) && !out.contains(c))
        .collect();
    let (left, right) = (only(&a, &b, true), only(&b, &a, true));
    // Summed over one operand alone, or an output letter from nowhere: not a MatMul.
    let summed_alone = !only(&a, &b, false).is_empty() || !only(&b, &a, false).is_empty();
    let complete = batch.len() + left.len() + right.len() == out.len();
    let ([l], [r], [k]) = (left.as_slice(), right.as_slice(), contracted.as_slice()) else {
        return None;
    };
    if summed_alone || !complete {
        return None;
    }
    let position = |of: &[char], c: &char| of.iter().position(|x| x == c).map(|p| p as i64);
    let order_a: Vec<char> = batch.iter().chain([l, k]).copied().collect();
    let order_b: Vec<char> = batch.iter().chain([k, r]).copied().collect();
    let product: Vec<char> = batch.iter().chain([l, r]).copied().collect();
    Some(Plan {
        batch: batch.len(),
        a: order_a
            .iter()
            .map(|c| position(&a, c))
            .collect::<Option<_>>()?,
        b: order_b
            .iter()
            .map(|c| position(&b, c))
            .collect::<Option<_>>()?,
        out: out
            .iter()
            .map(|c| position(&product, c))
            .collect::<Option<_>>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::{plan, Plan};

    #[test]
    fn batch_letters_anywhere_become_a_matmul_between_transposes() {
        // Longformer's queries against its global keys: h between the others.
        assert_eq!(
            plan("blhd,bshd->blhs"),
            Some(Plan {
                batch: 2,
                a: vec![0, 2, 1, 3],
                b: vec![0, 2, 3, 1],
                out: vec![0, 2, 1, 3],
            })
        );
        // Already a batched MatMul (`rewrite` leaves it).
        assert_eq!(
            plan("bcwd,bcdh->bcwh"),
            Some(Plan {
                batch: 2,
                a: vec![0, 1, 2, 3],
                b: vec![0, 1, 2, 3],
                out: vec![0, 1, 2, 3],
            })
        );
    }

    #[test]
    fn other_forms_stay() {
        for equation in [
            "bld,bsd->b",   // two contracted and no free letters
            "ij,jk->ik,",   // malformed
            "i...j,jk->ik", // ellipsis
            "ii,ij->j",     // a repeated letter
            "ij,k->ik",     // an outer product with a letter summed alone
            "ijk,kl->il",   // j summed over one operand alone
            "ixj,jy->ixy",  // two free letters on one side
            "ij,jk->ikz",   // an output letter from nowhere
        ] {
            assert_eq!(plan(equation), None, "{equation}");
        }
    }
}
