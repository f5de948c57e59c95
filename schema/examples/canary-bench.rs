//! Benchmark of the canary search over a real run's captures (figures, not a test):
//!
//!   cargo run --release -p scopebox-schema --example canary-bench -- BUNDLE [ROUNDS]
//!
//! Reads `inputs/matrix.json` and every `platforms/*/evidence/cases/*/{stdout,stderr}` of the
//! bundle, then times, over all captures, the old raw-only search (one memmem pass per canary
//! per capture) against `canary::CanarySearch` (one Aho–Corasick pass per capture over every
//! encoded form of every canary), and the automaton's compile time. Prints the median of ROUNDS.

use scopebox_schema::canary::CanarySearch;
use scopebox_schema::matrix::Matrix;
use std::path::Path;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let bundle = args.next().expect("usage: canary-bench BUNDLE [ROUNDS]");
    let rounds: usize = args
        .next()
        .map_or(21, |r| r.parse().expect("ROUNDS is a number"));
    let bundle = Path::new(&bundle);
    let matrix: Matrix =
        serde_json::from_slice(&std::fs::read(bundle.join("inputs/matrix.json")).unwrap())
            .expect("the bundled matrix parses");
    let mut captures: Vec<Vec<u8>> = Vec::new();
    for platform in std::fs::read_dir(bundle.join("platforms"))
        .unwrap()
        .flatten()
    {
        let cases = platform.path().join("evidence/cases");
        for case in std::fs::read_dir(&cases).unwrap().flatten() {
            for stream in ["stdout", "stderr"] {
                captures.push(std::fs::read(case.path().join(stream)).unwrap());
            }
        }
    }
    let bytes: usize = captures.iter().map(Vec::len).sum();
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let time = |f: &dyn Fn() -> usize| {
        median(
            (0..rounds)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(f());
                    start.elapsed()
                })
                .collect(),
        )
    };
    let finders: Vec<memchr::memmem::Finder> = matrix
        .canaries
        .iter()
        .map(|c| memchr::memmem::Finder::new(c.as_bytes()))
        .collect();
    let raw = time(&|| {
        captures
            .iter()
            .map(|c| finders.iter().filter(|f| f.find(c).is_some()).count())
            .sum()
    });
    let compile = time(&|| CanarySearch::new(&matrix.canaries).pattern_count());
    let search = CanarySearch::new(&matrix.canaries);
    let encoded = time(&|| captures.iter().map(|c| search.find(c).len()).sum());
    // Worst case: every capture holds an escape, so each is searched twice.
    let escaped_all: Vec<Vec<u8>> = captures
        .iter()
        .map(|c| [b"%41".as_slice(), c].concat())
        .collect();
    let worst = time(&|| escaped_all.iter().map(|c| search.find(c).len()).sum());
    let hits: usize = captures.iter().map(|c| search.find(c).len()).sum();
    let escaped = captures
        .iter()
        .filter(|c| scopebox_schema::canary::unescape(c).is_some())
        .count();
    println!(
        "hits over all captures: {hits}; captures holding escapes (searched twice): {escaped}"
    );
    println!(
        "{} captures, {bytes} bytes, {} canaries, {} patterns",
        captures.len(),
        matrix.canaries.len(),
        search.pattern_count()
    );
    println!("raw memmem per canary:   {raw:?} for all captures");
    println!("encoded Aho-Corasick:    {encoded:?} for all captures");
    println!("  every capture escaped: {worst:?} (searched twice)");
    println!("automaton compile:       {compile:?} (once per matrix per thread)");
    println!(
        "per case (2 captures):   {:?}",
        encoded / (captures.len() as u32 / 2).max(1)
    );
}
