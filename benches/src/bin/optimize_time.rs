//! In-process time of `nonzero optimize` on one model: the median of `--runs` calls of
//! `optimize_bytes` plus the streamed serialization (what the CLI does after reading the file),
//! without the process start-up and file IO that dominate the CLI's wall time on small models.
//! benches/optimize_layers.py builds it from two trees and runs the two in turns.
//!
//!     optimize_time MODEL [--static --input-shape NAME=D0,D1 ... --allow-dynamic] [--runs 7]
//!
//! Prints one line: `median_s=<seconds> runs=<n>`.

use nonzero_optimize::{optimize_bytes, Options};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: optimize_time MODEL [--static] [--input-shape NAME=D0,D1] [--allow-dynamic] [--runs N]");
        std::process::exit(2);
    };
    let mut options = Options::default();
    let mut runs = 7;
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--static" => options.static_shapes = true,
            "--allow-dynamic" => options.allow_dynamic = true,
            "--runs" => runs = rest.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--input-shape" => {
                let spec = rest.next().expect("--input-shape NAME=D0,D1");
                let (name, dims) = spec.split_once('=').expect("NAME=D0,D1");
                let dims = dims
                    .split(',')
                    .map(|d| d.parse().expect("a size"))
                    .collect();
                options.input_shapes.insert(name.to_string(), dims);
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let bytes = nonzero_proto::Bytes::from(std::fs::read(path).expect("the model file"));
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let (optimized, _report) = optimize_bytes(bytes.clone(), &options).expect("optimize");
        optimized.write_to(&mut std::io::sink()).expect("serialize");
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!("median_s={:.6} runs={runs}", times[runs / 2]);
}
