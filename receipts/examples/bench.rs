//! Benchmark (not a test: timing never decides pass/fail). Times verifying a bundle (median
//! of 9 in-process runs) and the whole mutation self-test, and prints the figures; with
//! `--hostile`, times every hostile shape of issue 14 built from a base bundle.
//!
//! `cargo run --release -p scopebox-receipts --example bench [-- CASES | BUNDLE_DIR]`
//! With a number (default 100), a synthetic bundle of that many cases is written to a temp
//! dir; with a directory, that bundle is used as is (e.g. one from `scopebox run`).
//!
//! `cargo run --release -p scopebox-receipts --example bench -- --hostile BUNDLE_DIR`
//! builds each shape (`tests/hostile.rs`) from BUNDLE_DIR in a temp dir and prints the
//! median of 3 runs of read + verify, the outcome and the failed checks.

use scopebox_receipts::{selftest, verify};

#[path = "../tests/synthetic.rs"]
mod synthetic;

#[path = "../tests/hostile.rs"]
mod hostile;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--scaled") {
        let cases: usize = args.get(1).ok_or("--scaled CASES BUNDLE_DIR")?.parse()?;
        let base = PathBuf::from(args.get(2).ok_or("--scaled CASES BUNDLE_DIR")?);
        let scratch = tempfile::tempdir()?;
        // An optional third argument keeps the scaled bundle there (for perf stat).
        let out = args
            .get(3)
            .map(PathBuf::from)
            .unwrap_or_else(|| scratch.path().join("scaled"));
        let dir = hostile::scaled(&base, &out, cases)?;
        let mut runs = Vec::new();
        let mut failed = Vec::new();
        for _ in 0..9 {
            let start = Instant::now();
            let report = verify::verify_dir(&dir, &verify::VerifyOptions::default())?;
            runs.push(start.elapsed());
            failed = report.failed_ids().iter().map(|s| s.to_string()).collect();
        }
        runs.sort();
        println!(
            "verify {} scaled to {cases} cases per platform: median {:.1} ms (min {:.1}); failed (the layer holds the original matrix): {failed:?}",
            base.display(),
            ms(runs[4]),
            ms(runs[0])
        );
        return Ok(());
    }
    if args.first().map(String::as_str) == Some("--build-hostile") {
        // `--build-hostile SHAPE BASE OUT`: only write the shape (to time another binary on it).
        let usage = "--build-hostile SHAPE BASE OUT";
        let shape = args.get(1).ok_or(usage)?;
        let base = PathBuf::from(args.get(2).ok_or(usage)?);
        let out = PathBuf::from(args.get(3).ok_or(usage)?);
        hostile::build(shape, &base, &out)?;
        return Ok(());
    }
    if args.first().map(String::as_str) == Some("--hostile") {
        let base = PathBuf::from(args.get(1).ok_or("--hostile BUNDLE_DIR")?);
        return hostile_shapes(&base);
    }
    let arg = args.first().cloned().unwrap_or_else(|| "100".into());
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
    println!(
        "verify {label}: {checks} checks, median {:.1} ms (min {:.1}, max {:.1}; 9 runs, read + verify)",
        ms(runs[4]),
        ms(runs[0]),
        ms(runs[8])
    );
    if std::env::var_os("BENCH_SKIP_SELFTEST").is_some() {
        return Ok(());
    }
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

fn hostile_shapes(base: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let mut shapes: Vec<&str> = hostile::SHAPES.to_vec();
    shapes.extend(["receipt-unknown-key", "sparse"]);
    for name in shapes {
        let dir = hostile::build(name, base, &scratch.path().join(name))?;
        let mut runs = Vec::new();
        let mut outcome = String::new();
        for _ in 0..3 {
            let start = Instant::now();
            let result = verify::verify_dir(&dir, &verify::VerifyOptions::default());
            runs.push(start.elapsed());
            outcome = match result {
                Ok(r) if r.verified => "VERIFIED".into(),
                Ok(r) => {
                    let ids = r.failed_ids();
                    let shown: Vec<&str> = ids.iter().take(4).copied().collect();
                    format!(
                        "rejected by {}{}",
                        shown.join(", "),
                        if ids.len() > 4 { ", …" } else { "" }
                    )
                }
                Err(e) => format!("unreadable: {}", e.kind).chars().take(90).collect(),
            };
        }
        runs.sort();
        println!(
            "{name:<20} {:>8.1} ms  {}",
            ms(runs[1]),
            scopebox_terminal::escape(&outcome)
        );
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}
