//! Benchmark (not a test: timing never decides pass/fail). Times verifying a bundle (median
//! of 9 in-process runs) and the whole mutation self-test, and prints the figures.
//!
//! `cargo run --release -p scopebox-receipts --example bench [-- CASES | BUNDLE_DIR]`
//! With a number (default 100), a synthetic bundle of that many cases is written to a temp
//! dir; with a directory, that bundle is used as is (e.g. one from `scopebox run`).

use scopebox_receipts::{selftest, verify};

#[path = "../tests/synthetic.rs"]
mod synthetic;
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "100".into());
    let scratch = tempfile::tempdir()?;
    let (dir, label) = match arg.parse::<usize>() {
        Ok(cases) => {
            let dir = scratch.path().join("bundle");
            synthetic::write_bundle(&dir, cases)?;
            (dir, format!("synthetic {cases}-case bundle"))
        }
        Err(_) => (PathBuf::from(&arg), format!("bundle {arg}")),
    };

    let mut runs = Vec::new();
    let mut checks = 0;
    for _ in 0..9 {
        let start = Instant::now();
        let report = verify::verify_dir(&dir, &verify::VerifyOptions::default())?;
        runs.push(start.elapsed());
        if !report.verified {
            return Err(format!("{label} does not verify: {:?}", report.failed_ids()).into());
        }
        checks = report.checks.len();
    }
    runs.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "verify {label}: {checks} checks, median {:.1} ms (min {:.1}, max {:.1}; 9 runs, read + verify)",
        ms(runs[4]),
        ms(runs[0]),
        ms(runs[8])
    );

    let start = Instant::now();
    let report = selftest::run(&dir)?;
    println!(
        "self-test {label}: {} classes, all rejected: {}, {:.2} s",
        report.rows.len(),
        report.all_rejected(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
