//! Command-line arguments (clap derive, with a clap-free path for the plain
//! argument lists). Parsing must never touch the filesystem: an unknown flag
//! or client is a usage error before anything is read.

use std::ffi::OsString;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Parser;

use crate::gate::Condition;
use crate::profile::{Client, ALL, REGISTRY};
use crate::{Format, Request};

/// Read-only inventory of the MCP servers and agent instruction files
/// configured for one project root. Never runs, writes or prints a command,
/// argument, URL, env/header value or instruction body.
#[derive(Debug, Parser)]
#[command(name = "mcpscope", version)]
pub struct Cli {
    /// Project root to inventory (`.` for the current directory)
    pub root: OsString,

    /// Print the version-1 JSON document (and nothing else) on stdout
    #[arg(long)]
    pub json: bool,

    /// Client profile
    #[arg(long, value_parser = client_parser(), default_value = "claude-code", value_name = "CLIENT")]
    pub client: Client,

    /// dsh: also read ~/.dsh/profiles/NAME/mcp.json (the dsh-profile-user layer)
    #[arg(long, value_name = "NAME", value_parser = dsh_profile_name)]
    pub dsh_profile: Option<String>,

    /// Exit non-zero when a condition holds (comma-separated or repeated):
    /// incomplete (exit 1; the default), invalid-entry, any-server,
    /// project-server (exit 3), none. A server condition that a file mcpscope could not
    /// inventory leaves open exits 1 (fails closed)
    #[arg(long, value_name = "CONDITION", value_delimiter = ',', value_parser = fail_on_parser())]
    pub fail_on: Vec<Condition>,
}

/// `--fail-on` values.
fn fail_on_parser() -> impl TypedValueParser<Value = Condition> {
    PossibleValuesParser::new(Condition::ALL.map(|c| PossibleValue::new(c.id())))
        .map(|id| Condition::parse(&id).expect("a listed condition"))
}

/// `text` with every line escaped for a terminal (the line breaks kept): how
/// a usage error that echoes an argument is printed.
pub fn escape_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&crate::render_human::sanitize(body));
        out.push_str(newline);
    }
    out
}

/// `--client` values: every registered profile id (and its aliases), in
/// registry order. Anything else is a usage error before anything is read.
fn client_parser() -> impl TypedValueParser<Value = Client> {
    let mut values: Vec<PossibleValue> = REGISTRY
        .iter()
        .map(|p| PossibleValue::new(p.id()).aliases(p.aliases().iter().copied()))
        .collect();
    values.push(PossibleValue::new(ALL).help("every client, one document"));
    PossibleValuesParser::new(values)
        .map(|id| Client::parse(&id).expect("a registered id or alias"))
}

/// `--dsh-profile` values: a plain directory name, refused (exit 2) before
/// anything is read.
fn dsh_profile_name(s: &str) -> Result<String, String> {
    if crate::profile::dsh::valid_profile_name(s) {
        Ok(s.to_owned())
    } else {
        Err(
            "expected a profile name: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit"
                .into(),
        )
    }
}

impl Cli {
    /// The plain argument lists (`argv` without the program name: one root
    /// and any of `--json`, `--client`, `--dsh-profile`, `--fail-on`, each
    /// once — `--fail-on` may repeat — with valid values, `--flag value` or
    /// `--flag=value`) parsed without clap, into exactly the `Cli` clap would
    /// give; `None` for anything else (help, version, `--`, a repeated flag,
    /// an unknown or empty value…), which clap then parses and reports.
    /// Why: every run is a fresh process, and under user-mode emulation
    /// (arm64 images on an x86_64 host) qemu translates afresh all the code a
    /// process executes — clap's parser is about a quarter of an inventory's.
    /// The equivalence with clap is tested over every list of up to four of
    /// a set of tokens (`tests::plain_parsing_agrees_with_clap`).
    pub fn parse_plain(args: impl IntoIterator<Item = OsString>) -> Option<Cli> {
        let mut args = args.into_iter();
        let mut root: Option<OsString> = None;
        let mut json = false;
        let mut client: Option<Client> = None;
        let mut dsh_profile: Option<String> = None;
        let mut fail_on: Vec<Condition> = Vec::new();
        while let Some(arg) = args.next() {
            if !arg.as_encoded_bytes().starts_with(b"-") {
                if root.is_some() || arg.is_empty() {
                    return None;
                }
                root = Some(arg);
                continue;
            }
            let arg = arg.to_str()?;
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag, Some(value.to_owned())),
                None => (arg, None),
            };
            if flag == "--json" {
                if json || inline.is_some() {
                    return None;
                }
                json = true;
                continue;
            }
            let value = match inline {
                Some(v) => v,
                None => args.next()?.into_string().ok()?,
            };
            match flag {
                "--client" if client.is_none() => client = Some(Client::parse(&value)?),
                "--dsh-profile" if dsh_profile.is_none() => {
                    if !crate::profile::dsh::valid_profile_name(&value) {
                        return None;
                    }
                    dsh_profile = Some(value);
                }
                "--fail-on" => {
                    for id in value.split(',') {
                        fail_on.push(Condition::parse(id)?);
                    }
                }
                _ => return None,
            }
        }
        Some(Cli {
            root: root?,
            json,
            client: client.unwrap_or_else(Client::default_profile),
            dsh_profile,
            fail_on,
        })
    }

    /// Checks between flags that clap cannot express: `--dsh-profile` needs
    /// `--client dsh`. A usage error, like any parse error.
    pub fn validated(self) -> Result<Cli, clap::Error> {
        if self.dsh_profile.is_some() && !matches!(self.client.id(), "dsh" | ALL) {
            use clap::CommandFactory;
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "--dsh-profile is only valid with --client dsh or --client all",
            ));
        }
        Ok(self)
    }

    pub fn into_request(self) -> Request {
        Request {
            fail_on: (!self.fail_on.is_empty()).then_some(self.fail_on),
            dsh_profile: self.dsh_profile,
            root: self.root,
            client: self.client,
            format: if self.json {
                Format::Json
            } else {
                Format::Human
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens the lists are made of: every flag in both spellings, valid and
    /// invalid values, and what clap treats specially.
    const TOKENS: &[&str] = &[
        "/p",
        ".",
        "--json",
        "--json=1",
        "--client",
        "claude",
        "vscode",
        "all",
        "--client=dsh",
        "--client=nope",
        "--dsh-profile",
        "work",
        "--dsh-profile=-x",
        "--fail-on",
        "none,any-server",
        "--fail-on=incomplete",
        "--fail-on=,",
        "-",
        "--",
        "--help",
        "-V",
        "",
    ];

    fn by_clap(args: &[OsString]) -> Result<Cli, clap::Error> {
        let argv = std::iter::once(OsString::from("mcpscope")).chain(args.iter().cloned());
        Cli::try_parse_from(argv)
    }

    fn check(args: &[OsString], accepted: &mut usize) {
        if let Some(plain) = Cli::parse_plain(args.to_vec()) {
            *accepted += 1;
            match by_clap(args) {
                Ok(clap) => assert_eq!(format!("{plain:?}"), format!("{clap:?}"), "{args:?}"),
                Err(e) => panic!("{args:?}: parsed without clap, clap refuses it: {e}"),
            }
        }
    }

    #[test]
    fn plain_parsing_agrees_with_clap() {
        let tokens: Vec<OsString> = TOKENS.iter().map(OsString::from).collect();
        let mut lists: Vec<Vec<OsString>> = vec![Vec::new()];
        let mut accepted = 0;
        for _ in 0..4 {
            let mut longer = Vec::with_capacity(lists.len() * tokens.len());
            for list in &lists {
                for t in &tokens {
                    let mut l = list.clone();
                    l.push(t.clone());
                    check(&l, &mut accepted);
                    longer.push(l);
                }
            }
            lists = longer;
        }
        // Not a vacuous agreement: the plain path takes a good share of the lists.
        assert!(accepted > 1000, "only {accepted} lists parsed without clap");
    }

    #[test]
    fn the_matrix_forms_never_reach_clap_and_the_rest_always_do() {
        let plain = |args: &[&str]| Cli::parse_plain(args.iter().map(OsString::from));
        for args in [
            &["/work/proj", "--json"][..],
            &["--client", "vscode", "."],
            &[
                ".",
                "--client=all",
                "--fail-on",
                "any-server,none",
                "--fail-on=incomplete",
            ],
            &["/w", "--client", "dsh", "--dsh-profile", "work", "--json"],
        ] {
            assert!(plain(args).is_some(), "{args:?}");
        }
        for args in [
            &[][..],
            &["--help"],
            &["--version"],
            &[".", "--json", "--json"],
            &[".", "--client", "vscode", "--client", "vscode"],
            &[".", "--client", "VSCODE"],
            &[".", "--"],
            &["--", "-x"],
            &[".", "/other"],
            &[".", "--fail-on"],
            &[".", "--jsonx"],
        ] {
            assert!(plain(args).is_none(), "{args:?}");
        }
        // A root that is not UTF-8 is still a root.
        use std::os::unix::ffi::OsStringExt;
        let odd = OsString::from_vec(b"/p\xff".to_vec());
        let cli = Cli::parse_plain([odd.clone()]).expect("a non-UTF-8 root");
        assert_eq!(cli.root, odd);
    }
}
