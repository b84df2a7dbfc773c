//! Target B: DirectML NonZeroCoordinates over arbitrary descriptions and buffers. It must never
//! panic; on `Ok` the outputs must equal the naive reference (count, the first nnz rows, and
//! nothing written past them); on `Err` neither output may have been touched, and `validate`
//! must agree with `nonzero_coordinates` about the verdict.
//!
//! Half of the inputs build consistent output descriptions from the input's sizes (so valid
//! calls are common), the other half take every size from the fuzzer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonzero_core::dml::{
    nonzero_coordinates, validate, DmlDataType, FeatureLevel, NonZeroCoordinatesDesc, TensorDesc,
};
use nonzero_core::{reference, row_major_strides, NumericSlice, Sequential};
use nonzero_fuzz::{aligned, as_bytes, bits_nonzero, size_of, Bytes, Reversed, FIXED};

const DML_TYPES: [DmlDataType; 11] = [
    DmlDataType::Float32,
    DmlDataType::Float16,
    DmlDataType::Uint32,
    DmlDataType::Uint16,
    DmlDataType::Uint8,
    DmlDataType::Int32,
    DmlDataType::Int16,
    DmlDataType::Int8,
    DmlDataType::Float64,
    DmlDataType::Uint64,
    DmlDataType::Int64,
];
/// Largest output buffer the target allocates (keeps every valid call small).
const MAX_COORDS: usize = 1 << 16;
const MAX_INPUT: usize = 1 << 14;
const SENTINEL: u32 = 0xDEAD_BEEF;

/// A size: usually small, sometimes one of the values that stress u32/u64 arithmetic.
fn size(b: &mut Bytes) -> u32 {
    let x = b.u8();
    match x >> 5 {
        0..=5 => (x & 7) as u32,
        6 => [0, 1, 1 << 16, 65537, 1 << 31, u32::MAX - 1, u32::MAX, 3][(x & 7) as usize],
        _ => b.u32(),
    }
}

fn stride(b: &mut Bytes) -> u32 {
    let x = b.u8();
    if x >= 0xF0 {
        b.u32()
    } else {
        (x % 9) as u32
    }
}

fn tensor(b: &mut Bytes, dims: usize) -> TensorDesc {
    let data_type = DML_TYPES[b.u8() as usize % DML_TYPES.len()];
    let sizes: Vec<u32> = (0..dims).map(|_| size(b)).collect();
    let strides = match b.u8() % 4 {
        0 => Some((0..dims).map(|_| stride(b)).collect()),
        1 => Some((0..(b.u8() as usize % 10)).map(|_| stride(b)).collect()),
        _ => None,
    };
    TensorDesc {
        data_type,
        sizes,
        strides,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let level = FeatureLevel {
        major: (b.u8() % 7) as u32,
        minor: (b.u8() % 3) as u32,
    };
    let flags = b.u8();
    let dims = b.u8() as usize % 10;
    let input = tensor(&mut b, dims);
    let consistent = flags & 1 != 0;
    let (output_count, output_coordinates) = if consistent {
        let d = dims.max(2);
        let m = input.sizes.iter().fold(1u32, |a, &s| a.wrapping_mul(s));
        let n = (d - (b.u8() as usize % 3)).min(d) as u32;
        let mut coords = vec![1u32; d];
        coords[d - 2] = m;
        coords[d - 1] = n;
        let mut count = TensorDesc::packed(DmlDataType::Uint32, &vec![1; d]);
        let mut coordinates = TensorDesc::packed(DmlDataType::Uint32, &coords);
        if flags & 2 != 0 {
            count.strides = Some(
                row_major_strides(&vec![1; d])
                    .iter()
                    .map(|&s| s as u32)
                    .collect(),
            );
            coordinates.strides = Some((0..d).map(|_| stride(&mut b)).collect());
        }
        (count, coordinates)
    } else {
        let cd = b.u8() as usize % 10;
        let kd = b.u8() as usize % 10;
        (tensor(&mut b, cd), tensor(&mut b, kd))
    };
    let desc = NonZeroCoordinatesDesc {
        input,
        output_count,
        output_coordinates,
    };

    // The buffers: the input's type matches its description unless flag 4 says otherwise.
    let buffer_type = if flags & 4 == 0 {
        desc.input.data_type.to_data_type()
    } else {
        FIXED[b.u8() as usize % FIXED.len()]
    };
    let elem = size_of(buffer_type);
    let sizes: Vec<usize> = desc.input.sizes.iter().map(|&s| s as usize).collect();
    let input_strides: Vec<usize> = match &desc.input.strides {
        Some(s) if s.len() == sizes.len() => s.iter().map(|&s| s as usize).collect(),
        _ => row_major_strides(&sizes),
    };
    // Elements the input view addresses (None when that overflows or is too large to allocate).
    let needed: Option<usize> = if sizes.contains(&0) {
        Some(0)
    } else {
        sizes
            .iter()
            .zip(&input_strides)
            .try_fold(0usize, |last, (&n, &s)| {
                (n - 1).checked_mul(s)?.checked_add(last)
            })
            .and_then(|l| l.checked_add(1))
    };
    let input_len = match (flags & 8 == 0, needed) {
        (true, Some(n)) if n <= MAX_INPUT => n,
        _ => b.u8() as usize % 64,
    };
    let count_len = (b.u8() % 3) as usize;
    let m_n = desc.output_coordinates.sizes.len().checked_sub(2).map(|d| {
        desc.output_coordinates.sizes[d] as usize * desc.output_coordinates.sizes[d + 1] as usize
    });
    let coords_len = match (flags & 16 == 0, m_n) {
        (true, Some(mn)) if mn <= MAX_COORDS => mn + (b.u8() % 3) as usize,
        _ => b.u8() as usize % 64,
    };

    let raw = b.rest();
    let mut bytes = Vec::with_capacity(input_len * elem);
    while bytes.len() < input_len * elem {
        if raw.is_empty() {
            bytes.push(1);
        } else {
            bytes.extend_from_slice(raw);
        }
    }
    bytes.truncate(input_len * elem);
    let buf = aligned(&bytes);
    let bytes = as_bytes(&buf, bytes.len());
    let src = NumericSlice::from_bytes(buffer_type, bytes).expect("aligned, whole elements");

    let verdict = validate(level, &desc, src, count_len, coords_len);
    let mut count = vec![SENTINEL; count_len];
    let mut coords = vec![SENTINEL; coords_len];
    let exec = Reversed(1 + (flags >> 5) as usize);
    let result = if flags & 0x80 == 0 {
        nonzero_coordinates(level, &desc, src, &mut count, &mut coords, &Sequential)
    } else {
        nonzero_coordinates(level, &desc, src, &mut count, &mut coords, &exec)
    };
    match result {
        Err(e) => {
            assert_eq!(
                verdict.err(),
                Some(e.clone()),
                "validate and the operator disagree"
            );
            assert!(count.iter().all(|&x| x == SENTINEL), "{e}: count written");
            assert!(
                coords.iter().all(|&x| x == SENTINEL),
                "{e}: coordinates written"
            );
        }
        Ok(nnz) => {
            let v = verdict.expect("the operator ran, so the description is valid");
            assert!(level >= FeatureLevel::V3_0);
            assert_eq!(buffer_type, desc.input.data_type.to_data_type());
            let (want, expected) = reference::nonzero_strided(&sizes, v.layout.strides(), |o| {
                bits_nonzero(buffer_type, &bytes[o * elem..(o + 1) * elem])
            });
            assert_eq!(nnz as usize, want, "nnz");
            assert_eq!(count[0], nnz);
            assert!(count[1..].iter().all(|&x| x == SENTINEL));
            let n = v.columns;
            let skipped = sizes.len() - n;
            for j in 0..want {
                for c in 0..n {
                    assert_eq!(
                        coords[j * n + c] as i64,
                        expected[(skipped + c) * want + j],
                        "row {j} column {c}: sizes {sizes:?}"
                    );
                }
            }
            assert!(
                coords[want * n..].iter().all(|&x| x == SENTINEL),
                "written past nnz rows"
            );
        }
    }
});
