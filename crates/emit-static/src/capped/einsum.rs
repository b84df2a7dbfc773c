//! Einsum on capped frames ([`super::follow`]): Longformer's `blhd,bshd->blhs` of the queries
//! and the global keys written into the slots. The padded axis is one letter of the equation:
//! kept in the output, the output is padded along it; summed over, each operand holding it
//! reads its padding as zero first, as a MatMul summing over the frames does
//! ([`super::ops::matmul`]), and the output holds no padding. Explicit equations only (`->`, no
//! `...`), each letter at most once per term.

use super::follow::{frames, refuse, Fill, Flow, Masked, Reach};
use super::length::Steps;
use crate::graph::attr;
use nonzero_proto::onnx::NodeProto;

pub(super) fn einsum(
    node: &NodeProto,
    reads: &[Option<&Reach>],
    flow: &mut Flow,
) -> Result<Vec<Option<Reach>>, String> {
    let equation = attr(node, "equation")
        .and_then(|a| a.s.as_deref())
        .and_then(|s| std::str::from_utf8(s).ok())
        .map(|s| s.replace(' ', ""))
        .ok_or("")?;
    let Some((inputs, output)) = equation.split_once("->") else {
        return refuse("an Einsum without an explicit output");
    };
    let terms: Vec<&str> = inputs.split(',').collect();
    let once = |t: &str| {
        t.chars()
            .all(|c| c.is_ascii_alphabetic() && t.matches(c).count() == 1)
    };
    if terms.len() != node.input.len() || !terms.iter().all(|t| once(t)) || !once(output) {
        return refuse("an Einsum with an ellipsis or a repeated letter");
    }
    // The padded letter: the same in every padded operand, at the same length.
    let mut found: Option<(char, Steps)> = None;
    let mut padded = vec![];
    for (slot, (term, read)) in terms.iter().zip(reads).enumerate() {
        let Some((axis, rank, steps)) = frames(*read) else {
            continue;
        };
        if term.len() != rank {
            return refuse("an Einsum whose term does not match its operand's rank");
        }
        let letter = term.chars().nth(axis).ok_or("")?;
        match &found {
            Some((l, s)) if (*l, s) != (letter, steps) => {
                return refuse(
                    "Einsum operands padded along different letters, or to different lengths",
                )
            }
            _ => found = Some((letter, steps.clone())),
        }
        padded.push((slot, axis, rank));
    }
    let (letter, steps) = found.ok_or("")?;
    // An operand that is not padded cannot hold the padded letter (its size would be the length).
    let unpadded_holds = terms
        .iter()
        .zip(reads)
        .any(|(t, r)| r.is_none() && t.contains(letter));
    if unpadded_holds {
        return refuse("an Einsum of an operand not padded along the padded letter");
    }
    if let Some(at) = output.chars().position(|c| c == letter) {
        return Ok(vec![Some(Reach::Frames {
            axis: at,
            rank: output.len(),
            steps,
        })]);
    }
    for (slot, axis, rank) in padded {
        flow.masked
            .push(Masked::of(node, slot, (axis, rank, &steps), Fill::Zero));
    }
    Ok(vec![None])
}
