//! scopebox-witness: the kernel witness (`scopebox_harness::supervisor`), usage
//! `scopebox-witness PROGRAM [ARGS...]`: runs PROGRAM under a seccomp user-notification filter
//! and supervises it, answering the runner's window requests. Exits with PROGRAM's exit code
//! (128 + signal if it was killed), 3 if supervision itself failed, 2 on bad usage.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: scopebox-witness PROGRAM [ARGS...]");
        return ExitCode::from(2);
    };
    let rest: Vec<_> = args.collect();
    let code = scopebox_harness::supervisor::main(&program, &rest);
    ExitCode::from(u8::try_from(code).unwrap_or(3))
}
