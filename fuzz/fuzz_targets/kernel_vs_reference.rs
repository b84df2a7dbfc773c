//! Target A: op-core's two-pass kernel against the naive reference, over arbitrary fixed-size
//! types, small shapes (rank 0-5, sizes 0-6), arbitrary strides (0 broadcasts), arbitrary data
//! bytes, arbitrary chunk counts and three executors (inline, out of order, rayon's pool).
//!
//! Input bytes: [dtype, rank, flags, tasks, size*rank, stride*rank, data...].
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonzero_core::{reference, Counted, Executor, Layout, NumericSlice, Rayon, Sequential};
use nonzero_fuzz::{aligned, as_bytes, bits_nonzero, size_of, Bytes, Reversed, FIXED};

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let dtype = FIXED[b.u8() as usize % FIXED.len()];
    let rank = b.u8() as usize % 6;
    let flags = b.u8();
    let tasks = b.u8() as usize % 12; // 0 is clamped to 1 by the kernel
    let sizes: Vec<usize> = (0..rank).map(|_| b.u8() as usize % 7).collect();
    let strides: Vec<usize> = (0..rank).map(|_| b.u8() as usize % 9).collect();
    let packed = flags & 1 != 0;
    let exec: &dyn Executor = match (flags >> 1) % 3 {
        0 => &Sequential,
        1 => &Reversed(1 + (flags >> 3) as usize % 8),
        // rayon's persistent pool: real threads without per-input spawns (which LeakSanitizer
        // reports as transient leaks while an exiting thread frees its state).
        _ => &Rayon,
    };
    let raw = b.rest();

    let layout = if packed {
        Layout::packed(&sizes)
    } else {
        Layout::strided(&sizes, &strides)
    }
    .expect("sizes below 7 and rank below 6 cannot overflow");
    let strides = layout.strides().to_vec();
    let needed = layout.required_len().expect("small shape");
    let elem = size_of(dtype);

    // The data: the fuzzer's bytes, repeated to cover the view unless flag 0x80 asks for a buffer
    // that is (possibly) too short, to exercise the error path.
    let mut bytes: Vec<u8> = raw.to_vec();
    if flags & 0x80 == 0 && !raw.is_empty() {
        while bytes.len() < needed * elem {
            bytes.extend_from_slice(raw);
        }
    }
    bytes.truncate(bytes.len() / elem * elem);
    let buf = aligned(&bytes);
    let bytes = as_bytes(&buf, bytes.len());
    let src = NumericSlice::from_bytes(dtype, bytes).expect("aligned, whole elements");
    let elems = bytes.len() / elem;

    let counted = Counted::count_in_tasks(&src, &layout, exec, tasks);
    if elems < needed {
        assert!(
            counted.is_err(),
            "a short buffer ({elems} < {needed}) must be refused"
        );
        assert!(nonzero_core::nonzero_with(&src, &layout, exec).is_err());
        return;
    }
    let counted = counted.expect("buffer covers the view");
    let (nnz, expected) = reference::nonzero_strided(&sizes, &strides, |o| {
        bits_nonzero(dtype, &bytes[o * elem..(o + 1) * elem])
    });
    assert_eq!(
        counted.nnz(),
        nnz,
        "nnz: {dtype:?} sizes {sizes:?} strides {strides:?}"
    );
    assert_eq!(counted.rank(), rank);
    let mut out = vec![i64::MIN; rank * nnz];
    counted
        .write_onnx(&src, &mut out, exec)
        .expect("output sized rank * nnz");
    assert_eq!(
        out, expected,
        "{dtype:?} sizes {sizes:?} strides {strides:?} tasks {tasks}"
    );

    // A wrong output length is an error, not a panic or a partial write.
    let mut wrong = vec![7i64; rank * nnz + 1];
    assert!(counted.write_onnx(&src, &mut wrong, exec).is_err());
    assert!(wrong.iter().all(|&x| x == 7));

    // The public entry point agrees.
    let y = nonzero_core::nonzero_with(&src, &layout, exec).expect("valid");
    assert_eq!((y.rank, y.nnz, &y.data), (rank, nnz, &expected));
});
