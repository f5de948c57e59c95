//! Benchmark (not a test: timing never decides pass/fail): writes a synthetic bundle of N
//! cases (default 100), times verifying it and the whole mutation self-test, and prints the
//! figures. `cargo run --release -p scopebox-receipts --example bench [-- CASES [DIR]]`.
//! With DIR, the bundle is left there (useful to try `scopebox-verify` by hand).

use scopebox_receipts::{selftest, synthetic, verify};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let cases: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100);
    let keep = args.next();
    let scratch = tempfile::tempdir()?;
    let dir = match &keep {
        Some(d) => std::path::PathBuf::from(d),
        None => scratch.path().join("bundle"),
    };
    synthetic::write_bundle(&dir, cases)?;

    let mut runs = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let report = verify::verify_dir(&dir, &verify::VerifyOptions::default())?;
        runs.push(start.elapsed());
        assert!(report.verified, "the synthetic bundle must verify");
    }
    runs.sort();
    println!(
        "verify {cases}-case bundle: median {:.1} ms (min {:.1}, max {:.1}, 5 runs)",
        runs[2].as_secs_f64() * 1e3,
        runs[0].as_secs_f64() * 1e3,
        runs[4].as_secs_f64() * 1e3
    );

    let start = Instant::now();
    let report = selftest::run(&dir)?;
    let elapsed = start.elapsed();
    println!(
        "self-test on the {cases}-case bundle: {} classes, all rejected: {}, {:.2} s",
        report.rows.len(),
        report.all_rejected(),
        elapsed.as_secs_f64()
    );
    Ok(())
}
