//! The command line (clap derive) and the dispatch of each subcommand: `pack`, `run`, `build`, `sweep`,
//! `prune`, `keygen`, `sign`, `native` (its arguments live in `native`), and the hidden `__reap`
//! a run starts (`run::Reaper`). Each command reports progress on stderr and, with `--json`, one machine
//! summary object on stdout — nothing else ever goes to stdout. Exit codes are `exit`'s.

use crate::exit::{CommandError, Outcome, USAGE};
use crate::pack::Candidate;
use clap::{Args, Parser, Subcommand};
use scopebox_schema::platform::Platform;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "scopebox",
    version,
    about = "Evidence harness for mcpscope: pack, run the fixture matrix in a locked-down container, write a receipt bundle",
    after_help = "Exit codes: 0 success; 1 a case, control, boundary check or step failed; 2 usage or refused input; \
3 Docker engine unreachable; 4 a platform named with --platform cannot run on this engine; 124 deadline passed; 130 interrupted. \
Every Docker engine call except the container wait has its own 120 s limit."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build mcpscope statically and write a deterministic candidate archive and its manifest
    Pack(PackArgs),
    /// Pack (or take a candidate), build the image, run the matrix, write the receipt bundle
    Run(RunArgs),
    /// Build every static binary the images carry (candidate, runner, sentinel, witness), so that a
    /// later `run` or `pack` finds them built; CI runs it before the tests
    Build(BuildArgs),
    /// Remove leftover scopebox containers and volumes (including --keep-on-failure ones)
    Sweep(SweepArgs),
    /// Remove the evidence and native images no kept bundle uses (kept: --keep DIR, default out/runs and out/native)
    Prune(crate::prune::PruneArgs),
    /// Generate an ed25519 key pair for signing receipts: PREFIX.pem and PREFIX.pub.pem
    Keygen(KeygenArgs),
    /// Sign a receipt bundle: writes BUNDLE/receipt.dsse.json (DSSE over an in-toto test-result
    /// statement) and BUNDLE/provenance.dsse.json (SLSA Provenance v1 of the candidates built)
    Sign(SignArgs),
    /// The pinned native reference clients: `run` them over the native matrix in the box (the
    /// default), `fetch` them into the cache, or re-resolve the `lock`
    Native(Box<crate::native::NativeArgs>),
    /// The reaper a run starts (hidden): removes the run's containers and volumes if scopebox
    /// is killed before it could (`run::Reaper`)
    #[command(name = crate::run::REAP_COMMAND, hide = true)]
    Reap(crate::run::ReapArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CandidateArgs {
    /// Test this existing candidate archive instead of packing one (repeat it with one
    /// --expect-sha256 each, one archive per platform; its platform is its binary's)
    #[arg(long, value_name = "FILE", requires = "expect_sha256")]
    pub candidate: Vec<PathBuf>,
    /// The candidate's sha256, in the order of --candidate; a mismatch is refused before
    /// anything else happens
    #[arg(long, value_name = "HEX", requires = "candidate")]
    pub expect_sha256: Vec<String>,
}

impl CandidateArgs {
    /// Read and vet the given candidates, if any. Called first, before anything else.
    pub fn load(&self) -> Result<Vec<Candidate>, CommandError> {
        if self.candidate.len() != self.expect_sha256.len() {
            return Err(CommandError::Usage(format!(
                "{} --candidate archive(s) but {} --expect-sha256 digest(s): give one digest per archive",
                self.candidate.len(),
                self.expect_sha256.len()
            )));
        }
        self.candidate
            .iter()
            .zip(&self.expect_sha256)
            .map(|(path, hex)| Ok(Candidate::from_file(path, hex)?))
            .collect()
    }
}

/// `--platform linux/amd64|linux/arm64`.
fn parse_platform(text: &str) -> Result<Platform, String> {
    Platform::parse(text).ok_or_else(|| {
        format!(
            "unknown platform {text:?}; expected one of {}",
            Platform::ALL.map(|p| p.name()).join(", ")
        )
    })
}

#[derive(Debug, Args)]
pub struct PackArgs {
    /// Directory for the archive(s) and pack manifest(s)
    #[arg(long, value_name = "DIR", default_value = "out/pack")]
    pub out: PathBuf,
    /// Pack for this platform (repeatable) [default: linux/amd64 and linux/arm64]
    #[arg(long, value_name = "OS/ARCH", value_parser = parse_platform)]
    pub platform: Vec<Platform>,
    #[command(flatten)]
    pub candidate: CandidateArgs,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    // (Angle brackets in clap's help text, not HTML.)
    #[allow(rustdoc::invalid_html_tags)]
    /// The receipt bundle directory (new or empty) [default: out/runs/<run id> in the current directory]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run on this platform (repeatable); a platform named here must run, or the run is refused
    /// with exit 4 [default: linux/amd64 and linux/arm64 where the engine can run them]
    #[arg(long, value_name = "OS/ARCH", value_parser = parse_platform)]
    pub platform: Vec<Platform>,
    #[command(flatten)]
    pub candidate: CandidateArgs,
    /// A fixture matrix file; repeat to run several as one matrix (cases in order, canaries
    /// joined) [default: the shipped matrix, the files harness/matrix/shipped.json lists]
    #[arg(long, value_name = "FILE")]
    pub matrix: Vec<PathBuf>,
    /// Seconds the container may run before it is killed (its evidence is still exported);
    /// every other engine call has its own 120 s limit
    #[arg(long, value_name = "SECONDS", default_value_t = crate::run::DEFAULT_DEADLINE_SECS,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub deadline: u64,
    /// Keep the container and volume when the run fails (`scopebox sweep` removes them)
    #[arg(long)]
    pub keep_on_failure: bool,
    /// No per-case progress (no bar, no lines); the summary is still printed
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub copies: crate::bundle_file::Copies,
    /// Containers per platform to split the matrix across (cases by position modulo N, run
    /// concurrently; each observes its boundary and runs every control). Default: the
    /// container's CPU limit, capped by this host's CPUs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=16))]
    pub shards: Option<u64>,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Build for this platform (repeatable) [default: linux/amd64 and linux/arm64]
    #[arg(long, value_name = "OS/ARCH", value_parser = parse_platform)]
    pub platform: Vec<Platform>,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Writes PREFIX.pem (PKCS#8, mode 0600) and PREFIX.pub.pem (SPKI); never overwrites
    #[arg(long, value_name = "PREFIX")]
    pub out: PathBuf,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SignArgs {
    /// The receipt bundle directory
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// The private key (PKCS#8 PEM, from `scopebox keygen`)
    #[arg(long, value_name = "PREFIX.pem")]
    pub key: PathBuf,
    /// Replace an existing BUNDLE/receipt.dsse.json and BUNDLE/provenance.dsse.json (a
    /// regular file only; never a link)
    #[arg(long)]
    pub force: bool,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

impl Cli {
    /// Whether stdout must carry one JSON object, whatever happens.
    pub fn wants_json(&self) -> bool {
        match &self.command {
            Command::Pack(a) => a.json,
            Command::Run(a) => a.json,
            Command::Build(a) => a.json,
            Command::Sweep(a) => a.json,
            Command::Prune(a) => a.json,
            Command::Keygen(a) => a.json,
            Command::Sign(a) => a.json,
            Command::Native(a) => a.wants_json(),
            Command::Reap(_) => false,
        }
    }
}

/// Parse the command line. Usage errors print clap's message and give exit code 2 (with
/// `--json` anywhere on the line, also one error object on stdout); `--help` and `--version`
/// print and give 0.
pub fn parse() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            if std::env::args_os().skip(1).any(|a| a == "--json") {
                crate::exit::print_summary(&usage_json(&e));
            }
            ExitCode::from(USAGE)
        } else {
            ExitCode::SUCCESS
        }
    })
}

/// The `--json` object of a command line clap refused.
fn usage_json(e: &clap::Error) -> serde_json::Value {
    let text = e.render().to_string();
    // clap's text: the message (its first paragraph), then usage and a pointer to --help.
    let (message, rest) = text.split_once("\n\n").unwrap_or((&text, ""));
    let message = message
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string();
    let hint: Vec<&str> = rest
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    serde_json::json!({
        "ok": false,
        "outcome": "error",
        "exitCode": USAGE,
        "error": {
            "code": "usage",
            "message": message,
            "causes": [],
            "hint": if hint.is_empty() { serde_json::Value::Null } else { hint.join("; ").into() },
        },
    })
}

/// Run one command to its outcome.
pub fn run(cli: Cli) -> Result<Outcome, CommandError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CommandError::Runtime)?;
    runtime.block_on(async move {
        match cli.command {
            Command::Pack(args) => pack(args).await,
            Command::Run(args) => crate::run::evidence_run(args).await,
            Command::Build(args) => build(args).await,
            Command::Sweep(args) => sweep(args).await,
            Command::Prune(args) => crate::prune::prune(args).await,
            Command::Keygen(args) => keygen(args),
            Command::Sign(args) => sign(args),
            Command::Native(args) => crate::native::run(*args).await,
            Command::Reap(args) => crate::run::reap_command(args).await,
        }
    })
}

async fn pack(args: PackArgs) -> Result<Outcome, CommandError> {
    let given = args.candidate.load()?;
    let selection = crate::run::select_platforms(&args.platform, &given)?;
    let work = async {
        let root = crate::shipped::source_root()?;
        let mut packed = Vec::new();
        let mut given = given;
        let mut built = false;
        for platform in &selection.platforms {
            let candidate = match given.iter().position(|c| c.platform == *platform) {
                Some(i) => given.swap_remove(i),
                None => {
                    if !built {
                        say!("scopebox: {}", crate::toolchain::building());
                        crate::toolchain::build_shipped(&root, crate::toolchain::Priority::Normal)
                            .await?;
                        built = true;
                    }
                    crate::pack::built_candidate(&root, *platform)?
                }
            };
            packed.push(candidate);
        }
        let several = packed.len() > 1;
        let mut written = Vec::new();
        for candidate in packed {
            let manifest = crate::pack::manifest_name(candidate.platform, several);
            let path = candidate.write_to(&args.out, &manifest)?;
            written.push((candidate, path, args.out.join(manifest)));
        }
        Ok::<_, CommandError>(written)
    };
    let written = tokio::select! {
        done = work => done?,
        () = crate::run::CtrlC::listen().hit() => return Ok(Outcome::Interrupted),
    };
    let mut summaries = Vec::new();
    for (candidate, path, manifest) in &written {
        let m = &candidate.manifest;
        say!(
            "scopebox: packed {} for {} ({} bytes, {} file(s)) sha256 {}",
            path.display(),
            candidate.platform,
            m.archive_size,
            m.runtime.len(),
            m.archive.sha256
        );
        summaries.push(serde_json::json!({
            "platform": candidate.platform,
            "archive": path,
            "sha256": m.archive.sha256,
            "size": m.archive_size,
            "runtimeManifestSha256": m.runtime_manifest_sha256,
            "packManifest": manifest,
        }));
    }
    if args.json {
        crate::exit::print_summary(&serde_json::json!({
            "ok": true,
            "outcome": "passed",
            "exitCode": crate::exit::SUCCESS,
            "archives": summaries,
        }));
    }
    Ok(Outcome::Passed)
}

async fn build(args: BuildArgs) -> Result<Outcome, CommandError> {
    let selection = crate::run::select_platforms(&args.platform, &[])?;
    let root = crate::shipped::source_root()?;
    let work = async {
        let mut built = Vec::new();
        say!("scopebox: {}", crate::toolchain::building());
        // Exactly the invocation `run` makes: every shipped binary of every platform.
        crate::toolchain::build_shipped(&root, crate::toolchain::Priority::Normal).await?;
        for platform in &selection.platforms {
            let candidate = crate::pack::built_candidate(&root, *platform)?;
            built.push(serde_json::json!({
                "platform": platform,
                "candidateSha256": candidate.manifest.archive.sha256,
            }));
        }
        Ok::<_, CommandError>(built)
    };
    let built = tokio::select! {
        done = work => done?,
        () = crate::run::CtrlC::listen().hit() => return Ok(Outcome::Interrupted),
    };
    say!(
        "scopebox: built the static binaries for {} in {}",
        selection
            .platforms
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(" + "),
        crate::toolchain::static_target_dir(&root).display()
    );
    if args.json {
        crate::exit::print_summary(&serde_json::json!({
            "ok": true,
            "outcome": "passed",
            "exitCode": crate::exit::SUCCESS,
            "platforms": built,
        }));
    }
    Ok(Outcome::Passed)
}

async fn sweep(args: SweepArgs) -> Result<Outcome, CommandError> {
    let engine = crate::run::reach_engine().await?;
    let report = crate::run::sweep_stale(&engine, true, crate::run::owner_is_live).await?;
    for e in &report.errors {
        say!("scopebox: {e}");
    }
    say!(
        "scopebox: swept {} object(s); {} belong to runs still in progress",
        report.removed.len(),
        report.skipped.len()
    );
    if args.json {
        let summary = serde_json::json!({
            "ok": report.errors.is_empty(),
            "exitCode": if report.errors.is_empty() { crate::exit::SUCCESS } else { crate::exit::FAILURE },
            "removed": report.removed,
            "skipped": report.skipped,
            "errors": report.errors,
        });
        crate::exit::print_summary(&summary);
    }
    Ok(if report.errors.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed
    })
}

fn keygen(args: KeygenArgs) -> Result<Outcome, CommandError> {
    let paths =
        scopebox_receipts::dsse::write_keypair(&args.out).map_err(|e| CommandError::Signing {
            what: format!("write a key pair at {}", args.out.display()),
            refused: e.is_refusal(),
            source: Box::new(e),
        })?;
    say!(
        "scopebox: wrote {} (private, 0600) and {} (public); key id {}",
        paths.private.display(),
        paths.public.display(),
        paths.keyid
    );
    if args.json {
        crate::exit::print_summary(&serde_json::json!({
            "ok": true,
            "exitCode": crate::exit::SUCCESS,
            "privateKey": paths.private,
            "publicKey": paths.public,
            "keyid": paths.keyid,
        }));
    }
    Ok(Outcome::Passed)
}

fn sign(args: SignArgs) -> Result<Outcome, CommandError> {
    let signing =
        |refused: bool, e: Box<dyn std::error::Error + Send + Sync>| CommandError::Signing {
            what: format!(
                "sign bundle {} with {}",
                args.bundle.display(),
                args.key.display()
            ),
            refused,
            source: e,
        };
    let provenance_path = args
        .bundle
        .join(scopebox_schema::receipt::PROVENANCE_ENVELOPE_FILE);
    // Either signature already there (whatever its kind) is refused as a usage error before
    // anything is read or signed: nothing is replaced without --force.
    if !args.force {
        for name in [
            scopebox_schema::receipt::ENVELOPE_FILE,
            scopebox_schema::receipt::PROVENANCE_ENVELOPE_FILE,
        ] {
            let path = args.bundle.join(name);
            if std::fs::symlink_metadata(&path).is_ok() {
                return Err(CommandError::Usage(format!(
                    "{} exists; pass --force to replace the signatures",
                    path.display()
                )));
            }
        }
    }
    // Bounded, regular files only: never /dev/zero grown into memory, never a FIFO waited on.
    let pem = scopebox_receipts::input::read_text(
        &args.key,
        "the key",
        scopebox_receipts::input::KEY_LIMIT,
    )
    .map_err(|e| signing(true, Box::new(e)))?;
    let envelope = scopebox_receipts::attestation::sign_bundle_with(
        &args.bundle,
        &pem,
        scopebox_receipts::attestation::SignOptions { force: args.force },
    )
    .map_err(|e| signing(e.is_refusal(), Box::new(e)))?;
    // Then the provenance statement (a pure function of receipt.json), in the same form.
    let provenance = scopebox_receipts::provenance::sign_bundle(&args.bundle, &pem, args.force)
        .map_err(|e| signing(false, Box::new(e)))?;
    match &provenance {
        Some(_) => say!(
            "scopebox: wrote {} (SLSA Provenance v1 of the candidate archive(s) this run built)",
            provenance_path.display()
        ),
        None => {
            say!("scopebox: no provenance statement: the receipt names no candidate this run built")
        }
    }
    let path = args.bundle.join(scopebox_schema::receipt::ENVELOPE_FILE);
    let keyids: Vec<&str> = envelope
        .signatures
        .iter()
        .filter_map(|s| s.keyid.as_deref())
        .collect();
    say!(
        "scopebox: wrote {} (key id {})",
        path.display(),
        keyids.join(", ")
    );
    if args.json {
        crate::exit::print_summary(&serde_json::json!({
            "ok": true,
            "exitCode": crate::exit::SUCCESS,
            "envelope": path,
            "provenance": provenance.is_some().then_some(&provenance_path),
            "keyids": keyids,
        }));
    }
    Ok(Outcome::Passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign_args(bundle: &std::path::Path) -> SignArgs {
        SignArgs {
            bundle: bundle.to_path_buf(),
            key: bundle.join("absent-key.pem"),
            force: false,
            json: false,
        }
    }

    #[test]
    fn an_existing_signature_of_either_kind_is_refused_as_usage_and_left_as_it_was() {
        for name in [
            scopebox_schema::receipt::ENVELOPE_FILE,
            scopebox_schema::receipt::PROVENANCE_ENVELOPE_FILE,
        ] {
            let bundle = tempfile::tempdir().unwrap();
            std::fs::write(bundle.path().join(name), b"earlier").unwrap();
            let error = sign(sign_args(bundle.path())).unwrap_err();
            assert_eq!(error.code(), crate::exit::USAGE, "{name}: {error}");
            assert!(error.to_string().contains(name), "{error}");
            assert_eq!(std::fs::read(bundle.path().join(name)).unwrap(), b"earlier");
        }
    }

    #[test]
    fn a_missing_or_garbled_key_is_refused_naming_the_key() {
        let bundle = tempfile::tempdir().unwrap();
        let error = sign(sign_args(bundle.path())).unwrap_err();
        assert_eq!(error.code(), crate::exit::USAGE, "{error}");
        assert_eq!(error.kind_name(), "signing-refused");
        let said = crate::exit::render(&error);
        assert!(
            said.contains("read the key") && said.contains("absent-key.pem"),
            "{said}"
        );
        let key = bundle.path().join("garbled.pem");
        std::fs::write(&key, "not a key").unwrap();
        let error = sign(SignArgs {
            key,
            ..sign_args(bundle.path())
        })
        .unwrap_err();
        assert_eq!(error.code(), crate::exit::USAGE, "{error}");
        assert!(crate::exit::render(&error).contains("PKCS#8"), "{error}");
    }

    #[test]
    fn a_key_pair_in_a_missing_directory_or_over_an_existing_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let keygen_at =
            |out: std::path::PathBuf| keygen(KeygenArgs { out, json: false }).unwrap_err();
        let error = keygen_at(dir.path().join("no/such/dir/k"));
        assert_eq!(error.code(), crate::exit::USAGE, "{error}");
        std::fs::write(dir.path().join("k.pem"), "earlier").unwrap();
        let error = keygen_at(dir.path().join("k"));
        assert_eq!(error.code(), crate::exit::USAGE, "{error}");
        assert_eq!(std::fs::read(dir.path().join("k.pem")).unwrap(), b"earlier");
    }

    #[test]
    fn with_force_an_existing_signature_is_no_refusal() {
        let bundle = tempfile::tempdir().unwrap();
        std::fs::write(
            bundle.path().join(scopebox_schema::receipt::ENVELOPE_FILE),
            b"earlier",
        )
        .unwrap();
        let args = SignArgs {
            force: true,
            ..sign_args(bundle.path())
        };
        // It goes on to read the key, which is absent: a signing failure, not a usage refusal.
        let error = sign(args).unwrap_err();
        assert!(matches!(error, CommandError::Signing { .. }), "{error}");
    }
}
