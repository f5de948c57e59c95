//! The command line (clap derive) and the dispatch of each subcommand: `pack`, `run`, `sweep`,
//! `keygen`, `sign`, `native` (its arguments live in `native`). Each command reports progress on stderr and, with `--json`, one machine
//! summary object on stdout — nothing else ever goes to stdout. Exit codes are `exit`'s.

use crate::exit::{CommandError, Outcome, USAGE};
use crate::pack::Candidate;
use crate::toolchain::{build_static, read_bin, workspace_root};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "scopebox",
    version,
    about = "Evidence harness for mcpscope: pack, run the fixture matrix in a locked-down container, write a receipt bundle",
    after_help = "Exit codes: 0 success; 1 a case, control, boundary check or step failed; 2 usage or refused input; \
3 Docker engine unreachable; 124 deadline passed; 130 interrupted. \
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
    /// Remove leftover scopebox containers and volumes (including --keep-on-failure ones)
    Sweep(SweepArgs),
    /// Generate an ed25519 key pair for signing receipts: PREFIX.pem and PREFIX.pub.pem
    Keygen(KeygenArgs),
    /// Sign a receipt bundle: writes BUNDLE/receipt.dsse.json (DSSE over an in-toto statement)
    Sign(SignArgs),
    /// The pinned native reference clients: `fetch` them into the cache, or re-resolve the `lock`
    Native(crate::native::NativeArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CandidateArgs {
    /// Test this existing candidate archive instead of packing one
    #[arg(long, value_name = "FILE", requires = "expect_sha256")]
    pub candidate: Option<PathBuf>,
    /// The candidate's sha256; a mismatch is refused before anything else happens
    #[arg(long, value_name = "HEX", requires = "candidate")]
    pub expect_sha256: Option<String>,
}

impl CandidateArgs {
    /// Read and vet the given candidate, if any. Called first, before anything else.
    pub fn load(&self) -> Result<Option<Candidate>, CommandError> {
        match (&self.candidate, &self.expect_sha256) {
            (Some(path), Some(hex)) => Ok(Some(Candidate::from_file(path, hex)?)),
            _ => Ok(None),
        }
    }
}

#[derive(Debug, Args)]
pub struct PackArgs {
    /// Directory for the archive and pack-manifest.json
    #[arg(long, value_name = "DIR", default_value = "out/pack")]
    pub out: PathBuf,
    #[command(flatten)]
    pub candidate: CandidateArgs,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The receipt bundle directory (new or empty) [default: out/runs/<run id> in the workspace]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
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
}

#[derive(Debug, Args)]
pub struct SignArgs {
    /// The receipt bundle directory
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// The private key (PKCS#8 PEM, from `scopebox keygen`)
    #[arg(long, value_name = "PREFIX.pem")]
    pub key: PathBuf,
}

/// Parse the command line. Usage errors print clap's message and give exit code 2;
/// `--help` and `--version` print and give 0.
pub fn parse() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            ExitCode::from(USAGE)
        } else {
            ExitCode::SUCCESS
        }
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
            Command::Sweep(args) => sweep(args).await,
            Command::Keygen(args) => keygen(args),
            Command::Sign(args) => sign(args),
            Command::Native(args) => crate::native::run(args).await,
        }
    })
}

async fn pack(args: PackArgs) -> Result<Outcome, CommandError> {
    let given = args.candidate.load()?;
    let work = async {
        let candidate = match given {
            Some(c) => c,
            None => {
                let root = workspace_root();
                eprintln!(
                    "scopebox: building mcpscope (static, {})",
                    crate::toolchain::TARGET
                );
                build_static(&root, &["mcpscope"]).await?;
                Candidate::from_binary(read_bin(&root, "mcpscope")?)
            }
        };
        let path = candidate.write_to(&args.out)?;
        Ok::<_, CommandError>((candidate, path))
    };
    let (candidate, path) = tokio::select! {
        done = work => done?,
        _ = tokio::signal::ctrl_c() => return Ok(Outcome::Interrupted),
    };
    let m = &candidate.manifest;
    eprintln!(
        "scopebox: packed {} ({} bytes, {} file(s)) sha256 {}",
        path.display(),
        m.archive_size,
        m.runtime.len(),
        m.archive.sha256
    );
    if args.json {
        let summary = serde_json::json!({
            "archive": path,
            "sha256": m.archive.sha256,
            "size": m.archive_size,
            "runtimeManifestSha256": m.runtime_manifest_sha256,
            "packManifest": args.out.join(crate::pack::PACK_MANIFEST_NAME),
        });
        println!("{summary}");
    }
    Ok(Outcome::Passed)
}

async fn sweep(args: SweepArgs) -> Result<Outcome, CommandError> {
    let engine = crate::run::reach_engine().await?;
    let report = crate::run::sweep_stale(&engine, true, crate::run::owner_is_live).await?;
    for e in &report.errors {
        eprintln!("scopebox: {e}");
    }
    eprintln!(
        "scopebox: swept {} object(s); {} belong to runs still in progress",
        report.removed.len(),
        report.skipped.len()
    );
    if args.json {
        let summary = serde_json::json!({
            "removed": report.removed,
            "skipped": report.skipped,
            "errors": report.errors,
        });
        println!("{summary}");
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
            source: Box::new(e),
        })?;
    eprintln!(
        "scopebox: wrote {} (private, 0600) and {} (public); key id {}",
        paths.private.display(),
        paths.public.display(),
        paths.keyid
    );
    Ok(Outcome::Passed)
}

fn sign(args: SignArgs) -> Result<Outcome, CommandError> {
    let envelope =
        scopebox_receipts::attestation::sign_bundle_with_key_file(&args.bundle, &args.key)
            .map_err(|e| CommandError::Signing {
                what: format!(
                    "sign bundle {} with {}",
                    args.bundle.display(),
                    args.key.display()
                ),
                source: Box::new(e),
            })?;
    let path = args.bundle.join(scopebox_schema::receipt::ENVELOPE_FILE);
    let keyids: Vec<&str> = envelope
        .signatures
        .iter()
        .filter_map(|s| s.keyid.as_deref())
        .collect();
    eprintln!(
        "scopebox: wrote {} (key id {})",
        path.display(),
        keyids.join(", ")
    );
    Ok(Outcome::Passed)
}
