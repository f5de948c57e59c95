//! The kernel witness's filter and the raw calls around it: a hand-built classic-BPF program in
//! the syscall numbers of the machine this binary was built for (the engine's, when it runs as
//! `scopebox-witness` beside an emulated platform), installed with
//! `SECCOMP_FILTER_FLAG_NEW_LISTENER`, and the user-notification ioctls the supervisor uses.
//!
//! The program: a foreign `seccomp_data.arch` (i386 through `int 0x80`, arm32 compat) and the
//! x32 ABI kill the process; `execve`, `execveat`, `fork`, `vfork`, `clone` without
//! `CLONE_THREAD`, and `open`/`openat`/`creat` with a write flag notify the supervisor; `clone3`,
//! `openat2` and `io_uring_setup` (their flags live in memory, or their operations bypass
//! seccomp) fail with ENOSYS — Docker's default profile already does so for `clone3`, and every
//! libc falls back to `clone`/`openat`; everything else is allowed. It must never decide a
//! verdict or log anything: the supervisor records, the judge decides.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
/// BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const BPF_JSET_K: u16 = 0x05 | 0x40; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K

const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_USER_NOTIF: u32 = 0x7fc0_0000;
const RET_ALLOW: u32 = 0x7fff_0000;

/// `seccomp_data` offsets: nr, arch, args[i] (low 32 bits: both machines are little-endian).
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
const fn offset_arg_low(i: u32) -> u32 {
    16 + 8 * i
}

const CLONE_THREAD: u32 = 0x0001_0000;
/// O_WRONLY | O_RDWR | O_CREAT | O_TRUNC (the same values on x86_64 and aarch64).
pub const WRITE_FLAGS: u32 = 0o1 | 0o2 | 0o100 | 0o1000;

/// AUDIT_ARCH of this binary's machine (linux/audit.h).
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH: u32 = 0xC000_00B7;

/// This binary's machine, `uname` spelling.
#[cfg(target_arch = "x86_64")]
pub const MACHINE: &str = "x86_64";
#[cfg(target_arch = "aarch64")]
pub const MACHINE: &str = "aarch64";

/// ELF `e_machine` of this binary's machine.
#[cfg(target_arch = "x86_64")]
pub const ELF_MACHINE: u16 = 62;
#[cfg(target_arch = "aarch64")]
pub const ELF_MACHINE: u16 = 183;

/// What the filter does with a syscall number, before looking at arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Notify,
    /// Notify when the argument's low word has any of these bits.
    NotifyIfAny {
        arg: u32,
        bits: u32,
    },
    /// Notify unless the argument's low word has any of these bits.
    NotifyUnless {
        arg: u32,
        bits: u32,
    },
    Enosys,
}

fn rules() -> Vec<(u32, Rule)> {
    let nr = |n: libc::c_long| n as u32;
    #[allow(unused_mut)]
    let mut rules = vec![
        (nr(libc::SYS_execve), Rule::Notify),
        (nr(libc::SYS_execveat), Rule::Notify),
        (
            nr(libc::SYS_clone),
            Rule::NotifyUnless {
                arg: 0,
                bits: CLONE_THREAD,
            },
        ),
        (
            nr(libc::SYS_openat),
            Rule::NotifyIfAny {
                arg: 2,
                bits: WRITE_FLAGS,
            },
        ),
        (nr(libc::SYS_clone3), Rule::Enosys),
        (nr(libc::SYS_openat2), Rule::Enosys),
        (nr(libc::SYS_io_uring_setup), Rule::Enosys),
    ];
    #[cfg(target_arch = "x86_64")]
    rules.extend([
        (nr(libc::SYS_fork), Rule::Notify),
        (nr(libc::SYS_vfork), Rule::Notify),
        (nr(libc::SYS_creat), Rule::Notify),
        (
            nr(libc::SYS_open),
            Rule::NotifyIfAny {
                arg: 1,
                bits: WRITE_FLAGS,
            },
        ),
    ]);
    rules
}

/// The program, as `sock_filter` instructions.
pub fn program() -> Vec<libc::sock_filter> {
    let stmt = |code: u16, k: u32| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u16, k: u32, jt: u8, jf: u8| libc::sock_filter { code, jt, jf, k };
    let mut p = vec![
        stmt(BPF_LD_W_ABS, OFFSET_ARCH),
        jump(BPF_JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET_K, RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, OFFSET_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        // The x32 ABI shares AUDIT_ARCH_X86_64 but sets this bit in the number.
        p.push(jump(BPF_JGE_K, 0x4000_0000, 0, 1));
        p.push(stmt(BPF_RET_K, RET_KILL_PROCESS));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = BPF_JGE_K;
    for (nr, rule) in rules() {
        // Each rule block: jeq nr ? fall into the block : skip it.
        let block: Vec<libc::sock_filter> = match rule {
            Rule::Notify => vec![stmt(BPF_RET_K, RET_USER_NOTIF)],
            Rule::Enosys => vec![stmt(BPF_RET_K, RET_ERRNO | libc::ENOSYS as u32)],
            Rule::NotifyIfAny { arg, bits } => vec![
                stmt(BPF_LD_W_ABS, offset_arg_low(arg)),
                jump(BPF_JSET_K, bits, 0, 1),
                stmt(BPF_RET_K, RET_USER_NOTIF),
                stmt(BPF_RET_K, RET_ALLOW),
            ],
            Rule::NotifyUnless { arg, bits } => vec![
                stmt(BPF_LD_W_ABS, offset_arg_low(arg)),
                jump(BPF_JSET_K, bits, 0, 1),
                stmt(BPF_RET_K, RET_ALLOW),
                stmt(BPF_RET_K, RET_USER_NOTIF),
            ],
        };
        p.push(jump(BPF_JEQ_K, nr, 0, block.len() as u8));
        p.extend(block);
    }
    p.push(stmt(BPF_RET_K, RET_ALLOW));
    p
}

fn last_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Sets no_new_privs (already set in the box; required for an unprivileged filter) and
/// installs the program with a new listener, returning the listener. From here on this
/// process and everything it starts report to whoever holds the listener.
pub fn install() -> io::Result<OwnedFd> {
    // SAFETY: plain prctl/syscall with valid arguments; the program outlives the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(last_error("prctl(PR_SET_NO_NEW_PRIVS)"));
        }
        let mut filter = program();
        let prog = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_mut_ptr(),
        };
        let fd = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const libc::sock_fprog,
        );
        if fd < 0 {
            return Err(last_error(
                "seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER)",
            ));
        }
        Ok(OwnedFd::from_raw_fd(fd as i32))
    }
}

/// One pending notification.
pub fn receive(listener: i32) -> io::Result<libc::seccomp_notif> {
    // SAFETY: the kernel requires a zeroed struct; it fills it.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(notif)
}

/// Whether the notification is still pending (its task alive and still in the syscall): what
/// was read from the task's memory before this returned true was read from that syscall.
pub fn still_valid(listener: i32, id: u64) -> bool {
    let mut id = id;
    // SAFETY: the ioctl reads one u64.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id) == 0 }
}

/// Lets the syscall proceed as if no filter had seen it.
pub fn continue_syscall(listener: i32, id: u64) -> io::Result<()> {
    let mut resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: 0,
        flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
    };
    // SAFETY: a filled response for the ioctl.
    let rc = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny classic-BPF interpreter for the instructions `program` uses.
    fn run(p: &[libc::sock_filter], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let word = |off: u32| -> u32 {
            match off {
                OFFSET_NR => nr,
                OFFSET_ARCH => arch,
                o if o >= 16 && (o - 16) % 8 == 0 => args[((o - 16) / 8) as usize] as u32,
                o => panic!("unexpected load offset {o}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &p[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => acc = word(i.k),
                BPF_RET_K => return i.k,
                BPF_JEQ_K | BPF_JGE_K | BPF_JSET_K => {
                    let taken = match i.code {
                        BPF_JEQ_K => acc == i.k,
                        BPF_JGE_K => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += if taken { i.jt } else { i.jf } as usize;
                }
                c => panic!("unexpected opcode {c:#x}"),
            }
        }
    }

    fn verdict(nr: libc::c_long, args: [u64; 6]) -> u32 {
        run(&program(), nr as u32, AUDIT_ARCH, args)
    }

    #[test]
    fn exec_and_process_creation_notify_and_threads_do_not() {
        assert_eq!(verdict(libc::SYS_execve, [0; 6]), RET_USER_NOTIF);
        assert_eq!(verdict(libc::SYS_execveat, [0; 6]), RET_USER_NOTIF);
        assert_eq!(
            verdict(libc::SYS_clone, [0x11, 0, 0, 0, 0, 0]),
            RET_USER_NOTIF
        );
        assert_eq!(
            verdict(libc::SYS_clone, [0x3d0f00, 0, 0, 0, 0, 0]),
            RET_ALLOW,
            "pthread_create's flags include CLONE_THREAD"
        );
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(verdict(libc::SYS_fork, [0; 6]), RET_USER_NOTIF);
            assert_eq!(verdict(libc::SYS_vfork, [0; 6]), RET_USER_NOTIF);
        }
    }

    #[test]
    fn only_opens_for_writing_notify() {
        let rdonly_cloexec = 0o2000000;
        assert_eq!(
            verdict(libc::SYS_openat, [0, 0, rdonly_cloexec, 0, 0, 0]),
            RET_ALLOW
        );
        for flags in [0o1, 0o2, 0o100, 0o1000, 0o20200002] {
            assert_eq!(
                verdict(libc::SYS_openat, [0, 0, flags, 0, 0, 0]),
                RET_USER_NOTIF,
                "{flags:o}"
            );
        }
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(
                verdict(libc::SYS_open, [0, 0o101, 0, 0, 0, 0]),
                RET_USER_NOTIF
            );
            assert_eq!(verdict(libc::SYS_open, [0, 0, 0o101, 0, 0, 0]), RET_ALLOW);
            assert_eq!(verdict(libc::SYS_creat, [0; 6]), RET_USER_NOTIF);
        }
    }

    #[test]
    fn memory_flagged_calls_are_refused_and_the_rest_allowed() {
        let enosys = RET_ERRNO | libc::ENOSYS as u32;
        assert_eq!(verdict(libc::SYS_clone3, [0; 6]), enosys);
        assert_eq!(verdict(libc::SYS_openat2, [0; 6]), enosys);
        assert_eq!(verdict(libc::SYS_io_uring_setup, [0; 6]), enosys);
        assert_eq!(verdict(libc::SYS_read, [0; 6]), RET_ALLOW);
        assert_eq!(verdict(libc::SYS_getpid, [0; 6]), RET_ALLOW);
    }

    #[test]
    fn a_foreign_arch_is_killed() {
        for arch in [0x4000_0003u32, 0x4000_0028, 0] {
            assert_eq!(
                run(&program(), libc::SYS_read as u32, arch, [0; 6]),
                RET_KILL_PROCESS
            );
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            run(&program(), 0x4000_0000 | 59, AUDIT_ARCH, [0; 6]),
            RET_KILL_PROCESS,
            "x32 execve"
        );
    }
}
