//! The buffers the host path keeps from call to call (src/kept.rs): a smaller input after a
//! larger one never reads the larger one's stale bytes, `release_kept` starts afresh, calls
//! from several threads at once (one gets the kept buffers, the others new ones) all agree with
//! the oracle, and `nonzero_bytes_into` passes the caller's error on and checks its length.

// This binary uses a part of what the GPU tests share.
#[allow(dead_code)]
mod support;

use nonzero_core::DataType;
use nonzero_gpu::{GpuConfig, GpuError, GpuNonZero};
use rand::rngs::StdRng;
use rand::SeedableRng;
use support::*;

fn context() -> Option<GpuNonZero> {
    make(GpuConfig::default())
}

#[test]
fn a_smaller_input_never_reads_a_larger_ones_bytes() {
    let Some(ctx) = context() else { return };
    let mut rng = StdRng::seed_from_u64(7);
    // All non-zero first, so any stale byte read as an element would be counted.
    let ones = vec![1u8; 4099];
    check(&ctx, DataType::Uint8, &ones, &[4099], "all ones");
    for n in [7usize, 1, 0, 5, 6000, 3, 4099, 2] {
        for t in [
            DataType::Uint8,
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
        ] {
            let bytes = gen_bytes(t, n, 0.5, &mut rng);
            check(&ctx, t, &bytes, &[n], &format!("{n} after larger"));
        }
        if n == 0 {
            ctx.release_kept();
        }
    }
    check(
        &ctx,
        DataType::Uint8,
        &[0, 0, 0, 0, 0, 1],
        &[2, 3],
        "2x3 after release",
    );
}

#[test]
fn calls_from_several_threads_agree_with_the_oracle() {
    let Some(ctx) = context() else { return };
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let ctx = &ctx;
            s.spawn(move || {
                let mut rng = StdRng::seed_from_u64(thread);
                for call in 0..12 {
                    let n = 1 + (thread as usize * 977 + call * 131) % 3000;
                    let bytes = gen_bytes(DataType::Int32, n, 0.3, &mut rng);
                    check(
                        ctx,
                        DataType::Int32,
                        &bytes,
                        &[n],
                        &format!("thread {thread} call {call}"),
                    );
                }
            });
        }
    });
}

#[derive(Debug, PartialEq)]
enum CallerError {
    Gpu(String),
    Refused([usize; 2]),
}

impl From<GpuError> for CallerError {
    fn from(e: GpuError) -> Self {
        CallerError::Gpu(e.to_string())
    }
}

#[test]
fn into_passes_the_callers_error_on_and_checks_the_length() {
    let Some(ctx) = context() else { return };
    let x = [0.0f32, 2.0, 0.0, -1.0, 0.0, 3.0];
    let bytes: &[u8] = bytemuck::cast_slice(&x);
    let refused = ctx.nonzero_bytes_into(DataType::Float32, bytes, &[2, 3], |dims| {
        Err::<&mut [i64], _>(CallerError::Refused(dims))
    });
    assert_eq!(refused, Err(CallerError::Refused([2, 3])));
    let mut short = [0i64; 5];
    let wrong = ctx.nonzero_bytes_into(DataType::Float32, bytes, &[2, 3], |_| {
        Ok::<_, GpuError>(&mut short[..])
    });
    assert!(
        matches!(
            wrong,
            Err(GpuError::OutputLength {
                expected: 6,
                actual: 5
            })
        ),
        "{wrong:?}"
    );
    let mut out = [-7i64; 6];
    ctx.nonzero_bytes_into(DataType::Float32, bytes, &[2, 3], |dims| {
        assert_eq!(dims, [2, 3]);
        Ok::<_, GpuError>(&mut out[..])
    })
    .unwrap();
    assert_eq!(out, [0, 1, 1, 1, 0, 2]);
}
