//! The rewritten model, serialized on demand: into one buffer ([`Optimized::to_bytes`]) or
//! streamed to a writer ([`Optimized::write_to`]) with the large `raw_data` of the main graph's
//! initializers written straight from the buffers they were decoded from. Streaming keeps
//! `nonzero optimize` near one copy of the model in memory instead of two (input + output).
//!
//! Both give the same bytes as prost's `encode_to_vec`. Streaming cuts a message's encoding
//! around one field: prost writes fields in tag order, so encoding the message without the
//! field and with it present but empty (key, length 0) differs by exactly those two bytes, at
//! the place where the field goes. The cut is checked before use; a message where the check
//! fails is written whole.

use nonzero_proto::onnx::{GraphProto, ModelProto, TensorProto};
use nonzero_proto::prost::encoding::{encode_varint, encoded_len_varint};
use nonzero_proto::{Bytes, Message};
use std::io::{self, Write};

/// Tensors with at least this much `raw_data` are written from their own buffer.
const STREAM_BYTES: usize = 1 << 20;

/// What [`crate::optimize_bytes`] produced.
#[derive(Debug)]
pub struct Optimized(Inner);

#[derive(Debug)]
enum Inner {
    /// Nothing was rewritten: the input bytes themselves.
    Unchanged(Bytes),
    Model(Box<ModelProto>),
}

impl Optimized {
    pub(crate) fn unchanged(bytes: Bytes) -> Self {
        Optimized(Inner::Unchanged(bytes))
    }

    pub(crate) fn model(model: ModelProto) -> Self {
        Optimized(Inner::Model(Box::new(model)))
    }

    /// The serialized model, in one buffer of its own.
    pub fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Inner::Unchanged(bytes) => bytes.into(),
            Inner::Model(model) => model.encode_to_vec(),
        }
    }

    /// The serialized model, in one buffer.
    pub fn to_bytes(&self) -> Bytes {
        match &self.0 {
            Inner::Unchanged(bytes) => bytes.clone(),
            Inner::Model(model) => model.encode_to_vec().into(),
        }
    }

    /// Writes the serialized model (the bytes of [`Self::to_bytes`]) to `out`, without
    /// building it in memory first. `out` gets many small writes: give it a buffered writer.
    pub fn write_to(self, out: &mut impl Write) -> io::Result<()> {
        match self.0 {
            Inner::Unchanged(bytes) => out.write_all(&bytes),
            Inner::Model(mut model) => write_model(&mut model, out),
        }
    }
}

/// `encoding` cut at the first byte where `with_empty` (the same message with the field
/// present and empty, encoded as `marker`) differs from it, if that is exactly the difference.
fn cut(mut encoding: Vec<u8>, with_empty: &[u8], marker: [u8; 2]) -> Option<(Vec<u8>, Vec<u8>)> {
    let at = encoding
        .iter()
        .zip(with_empty)
        .position(|(a, b)| a != b)
        .unwrap_or(encoding.len());
    let fits = with_empty.len() == encoding.len() + marker.len()
        && with_empty[at..at + marker.len()] == marker
        && with_empty[at + marker.len()..] == encoding[at..];
    fits.then(|| {
        let after = encoding.split_off(at);
        (encoding, after)
    })
}

/// A length-delimited field's key (wire type 2) and length.
fn header(field: u32, len: usize, buf: &mut Vec<u8>) {
    encode_varint(u64::from((field << 3) | 2), buf);
    encode_varint(len as u64, buf);
}

/// How many bytes `header` writes for `field` < 16.
fn header_len(len: usize) -> usize {
    1 + encoded_len_varint(len as u64)
}

fn write_model(model: &mut ModelProto, out: &mut impl Write) -> io::Result<()> {
    let Some(mut graph) = model.graph.take() else {
        return out.write_all(&model.encode_to_vec());
    };
    let without = model.encode_to_vec();
    model.graph = Some(GraphProto::default());
    let with_empty = model.encode_to_vec();
    // ModelProto.graph is field 7; GraphProto.initializer is field 5.
    let outer = cut(without, &with_empty, [(7 << 3) | 2, 0]);
    let initializers = std::mem::take(&mut graph.initializer);
    let without = graph.encode_to_vec();
    graph.initializer = vec![TensorProto::default()];
    let with_empty = graph.encode_to_vec();
    let inner = cut(without, &with_empty, [(5 << 3) | 2, 0]);
    graph.initializer = initializers;
    let (Some((model_head, model_tail)), Some((graph_head, graph_tail))) = (outer, inner) else {
        model.graph = Some(graph);
        return out.write_all(&model.encode_to_vec());
    };
    let tensors: Vec<Tensor> = graph.initializer.iter().map(Tensor::new).collect();
    let graph_len = graph_head.len()
        + tensors
            .iter()
            .map(|t| header_len(t.len) + t.len)
            .sum::<usize>()
        + graph_tail.len();
    let mut head = model_head;
    header(7, graph_len, &mut head);
    head.extend_from_slice(&graph_head);
    out.write_all(&head)?;
    for (t, proto) in tensors.iter().zip(&graph.initializer) {
        let mut buf = Vec::new();
        header(5, t.len, &mut buf);
        match &t.parts {
            None => proto.encode(&mut buf).expect("a Vec grows as needed"),
            Some((before, raw, after)) => {
                buf.extend_from_slice(before);
                header(9, raw.len(), &mut buf);
                out.write_all(&buf)?;
                out.write_all(raw)?;
                buf = after.clone();
            }
        }
        out.write_all(&buf)?;
    }
    out.write_all(&graph_tail)?;
    out.write_all(&model_tail)
}

/// One initializer: the length of its encoding and, for a large `raw_data`, the encoding
/// before that field's key (TensorProto field 9), the data, and the encoding after it.
struct Tensor {
    len: usize,
    parts: Option<(Vec<u8>, Bytes, Vec<u8>)>,
}

impl Tensor {
    fn new(t: &TensorProto) -> Self {
        let whole = Tensor {
            len: t.encoded_len(),
            parts: None,
        };
        let Some(raw) = t.raw_data.clone().filter(|r| r.len() >= STREAM_BYTES) else {
            return whole;
        };
        let mut shell = TensorProto {
            raw_data: None,
            ..t.clone()
        };
        let without = shell.encode_to_vec();
        shell.raw_data = Some(Bytes::new());
        let Some((before, after)) = cut(without, &shell.encode_to_vec(), [(9 << 3) | 2, 0]) else {
            return whole;
        };
        Tensor {
            len: before.len() + header_len(raw.len()) + raw.len() + after.len(),
            parts: Some((before, raw, after)),
        }
    }
}
