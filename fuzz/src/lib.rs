//! Shared pieces of the fuzz targets: a byte reader that never fails (missing bytes read as 0),
//! an independent zero test straight from the element bytes, and executors that run tasks out of
//! order so a kernel relying on task order would be caught; for the rewriter targets, a model
//! stripped of its declared shapes.

use nonzero_core::{DataType, Executor};
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;

/// Reads the fuzzer's bytes front to back; past the end every read is 0.
#[derive(Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
}

/// The fixed-size types (everything but strings), indexed by a fuzzer byte.
pub const FIXED: [DataType; 15] = DataType::FIXED_SIZE;

/// Element size in bytes.
pub fn size_of(t: DataType) -> usize {
    t.size_of().expect("strings have no fixed size")
}

/// The oracle's zero test, written from the ONNX/IEEE rules on raw little-endian bits and sharing
/// no code with op-core: integers and bools are zero when every byte is; a float is zero when all
/// bits but the sign are (so -0.0 is zero, NaN is not); a complex number when both parts are.
pub fn bits_nonzero(t: DataType, e: &[u8]) -> bool {
    let word = |b: &[u8]| b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | x as u64);
    match t {
        DataType::Float16 | DataType::Bfloat16 => word(e) & 0x7FFF != 0,
        DataType::Float32 => word(e) & 0x7FFF_FFFF != 0,
        DataType::Float64 => word(e) & 0x7FFF_FFFF_FFFF_FFFF != 0,
        DataType::Complex64 => word(&e[..4]) & 0x7FFF_FFFF != 0 || word(&e[4..]) & 0x7FFF_FFFF != 0,
        DataType::Complex128 => {
            word(&e[..8]) & 0x7FFF_FFFF_FFFF_FFFF != 0 || word(&e[8..]) & 0x7FFF_FFFF_FFFF_FFFF != 0
        }
        _ => e.iter().any(|&b| b != 0),
    }
}

/// A 16-byte aligned copy of `bytes`, so that `NumericSlice::from_bytes` accepts every type.
pub fn aligned(bytes: &[u8]) -> Vec<u128> {
    let mut v = vec![0u128; bytes.len().div_ceil(16)];
    bytemuck_copy(&mut v, bytes);
    v
}

fn bytemuck_copy(dst: &mut [u128], src: &[u8]) {
    for (i, &b) in src.iter().enumerate() {
        let w = &mut dst[i / 16];
        let shift = 8 * (i % 16);
        *w |= (b as u128) << shift;
    }
}

/// The bytes of an aligned buffer (little-endian host).
pub fn as_bytes(v: &[u128], len: usize) -> &[u8] {
    let bytes: &[u8] = bytemuck::cast_slice(v);
    &bytes[..len.min(bytes.len())]
}

/// Runs tasks last to first on the calling thread, claiming `parallelism` workers.
#[derive(Debug)]
pub struct Reversed(pub usize);

impl Executor for Reversed {
    fn parallelism(&self) -> usize {
        self.0
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..tasks).rev().for_each(task);
    }
}

/// The model without `value_info` and without output types, so that the rewriter's own inference
/// carries the proofs (real TorchScript exports declare none): for the rewriter targets.
pub fn strip_value_info(model: &[u8]) -> Vec<u8> {
    let mut m = ModelProto::decode(model).expect("embedded models parse");
    if let Some(g) = m.graph.as_mut() {
        g.value_info.clear();
        for output in &mut g.output {
            output.r#type = None;
        }
    }
    m.encode_to_vec()
}
