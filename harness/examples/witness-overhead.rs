//! Benchmark, not a test: the kernel witness's per-case overhead on this host.
//!
//!   cargo run --release -p scopebox-harness --example witness-overhead -- PROGRAM [RUNS] [ARGS...]
//!
//! Runs PROGRAM ARGS RUNS times the way a case runs it (`case::run_captured`, unwatched), then
//! execs itself under `scopebox-witness` (beside this example in target/) and runs it RUNS times
//! more the way a witnessed case does (`case::run_watched`: window, pre-exec dumpable, the two
//! notifications, the /proc sweep, the window's report). Prints both medians (and minimums,
//! steadier on a loaded machine) and the difference of the medians.

use scopebox_harness::case::{run_captured, run_watched};
use scopebox_harness::watch::{self, Entry};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() - 1) / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let program = args
        .get(1)
        .expect("usage: witness-overhead PROGRAM [RUNS] [ARGS...]")
        .clone();
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(200);
    let extra: Vec<String> = args.iter().skip(3).cloned().collect();
    let command = || {
        let mut c = Command::new(&program);
        c.args(&extra).env_clear();
        c
    };
    match watch::entry().expect("witness entry") {
        Entry::Bare => {
            let times: Vec<Duration> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    run_captured(command(), Duration::from_secs(10)).unwrap();
                    t.elapsed()
                })
                .collect();
            let min = times.iter().min().copied().unwrap_or_default();
            let bare = median(times);
            println!(
                "unwatched median {} us, min {} us over {runs} runs",
                bare.as_micros(),
                min.as_micros()
            );
            let witness = std::env::current_exe()
                .unwrap()
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .join("scopebox-witness");
            let mut again = args.clone();
            again.push(format!("--bare-us={}", bare.as_micros()));
            let exe = std::env::current_exe().unwrap();
            let err = watch::exec_under(&witness, &exe, &again[1..]);
            panic!("exec {}: {err}", witness.display());
        }
        Entry::Supervised(mut k) => {
            let bare: u128 = args
                .iter()
                .find_map(|a| a.strip_prefix("--bare-us=")?.parse().ok())
                .unwrap_or(0);
            let extra_args: Vec<&String> = extra
                .iter()
                .filter(|a| !a.starts_with("--bare-us="))
                .collect();
            let times: Vec<Duration> = (0..runs)
                .map(|_| {
                    let mut c = Command::new(&program);
                    c.args(&extra_args).env_clear();
                    let t = Instant::now();
                    let (captured, record) =
                        run_watched(c, Duration::from_secs(10), &mut k).unwrap();
                    captured.unwrap();
                    assert_eq!(
                        record.events.iter().filter(|e| e.syscall.is_exec()).count(),
                        1
                    );
                    t.elapsed()
                })
                .collect();
            let min = times.iter().min().copied().unwrap_or_default().as_micros();
            let watched = median(times).as_micros();
            println!("witnessed median {watched} us, min {min} us over {runs} runs");
            println!("overhead per case {} us", watched as i128 - bare as i128);
        }
        Entry::Refused(reason) => panic!("{reason}"),
    }
}
