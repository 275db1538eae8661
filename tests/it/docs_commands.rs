//! Every local shell command in `README.md` and `docs/*.md` works as
//! written. The fenced `sh`, `bash`, `shell` and `console` blocks are read
//! in order, one working directory per file (a reader follows a page from
//! the top), and each command is run with `bash -eu` as the reader would:
//!
//! - `sweepgate` is the binary under test, on `PATH`, and also at
//!   `./target/release/sweepgate`; `cargo run --release -- ARGS` is
//!   `sweepgate ARGS` (the binary `cargo test` built);
//! - the working directory holds `tests/` (the repository's test data) and
//!   `scripts/`, and
//!   absolute `/tmp/…` paths are redirected into the test's own temporary
//!   directory (other sessions use `/tmp` too);
//! - `serve` and `demo` are started, probed on `/healthz` and stopped; the
//!   reader's `$APP_ID`, `$KEY` and `$SECRET` are an App of a GitHub that
//!   answers nothing (the server must start and be healthy without one).
//!
//! What is not run is in a listed set with its reason ([`NEEDS_GITHUB`],
//! [`NOT_RUN`]); the `sweepgate` ones, and every synopsis line (`[--flag]`
//! alternatives), are parsed with the real command line instead. A listed
//! entry that no document holds any more fails the test, so the lists
//! cannot rot. `docs/checks.md` quotes the benchmark repository's scripts
//! (what a lint rule flags): a block there that names neither `sweepgate`
//! nor `cargo` is such a quotation and is not a command.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Commands that need a real GitHub (a token, an App installation, a
/// pull request): only checked against the command line's flags.
/// (`cargo run --release --` is matched as `sweepgate`.)
const NEEDS_GITHUB: &[&str] = &[
    "sweepgate verify --repo SemiAnalysisAI/InferenceX --pr 4033 --compare",
    "sweepgate doctor ",
];

/// Commands this test does not run, by prefix, and why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "cargo test",
        "the test suite this test is part of (it would run itself)",
    ),
    (
        "cargo build --release",
        "the binary under test is built by `cargo test`",
    ),
    (
        "cargo xtask ",
        "development runs of minutes to hours (benchmarks, reliability cycles); CI runs them",
    ),
    (
        "sweepgate replay --repo /tmp/history",
        "a replay of the whole history or 150 commits: minutes; the range example is run",
    ),
    (
        "./target/release/sweepgate replay --repo",
        "replays of the whole history or the 150-commit sample: minutes",
    ),
    ("tail -n 1 replay.jsonl", "reads the whole-history replay"),
    ("jq -s", "reads the whole-history replay"),
    (
        "python3 tests/data/precision/draw.py replay.jsonl",
        "reads the whole-history replay",
    ),
    (
        "python3 tests/data/precision/table2.py replay.jsonl",
        "reads the whole-history replay",
    ),
];

/// Prefixes of [`NOT_RUN`] whose replay commands are still run when
/// they name a range (seconds).
const RUN_ANYWAY: &[&str] = &["sweepgate replay --repo /tmp/history --range "];

const LANGS: &[&str] = &["sh", "bash", "shell", "console"];

#[derive(Debug, Clone)]
struct Cmd {
    file: String,
    line: usize,
    text: String,
}

#[derive(Debug)]
struct Block {
    file: String,
    commands: Vec<Cmd>,
    raw: String,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![repo_root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo_root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The fenced shell blocks of a Markdown text, with their commands
/// (continuation lines joined, comments dropped; in `console` blocks only
/// the `$ ` lines).
fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        let t = line.trim_start();
        let Some(lang) = t.strip_prefix("```") else {
            continue;
        };
        let fence_indent = line.len() - t.len();
        let lang = lang.trim();
        let mut body = Vec::new();
        for (j, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push((j + 1, l.get(fence_indent..).unwrap_or(l.trim_start())));
        }
        if !LANGS.contains(&lang) {
            continue;
        }
        let console = lang == "console";
        let raw = body.iter().map(|(_, l)| *l).collect::<Vec<_>>().join("\n");
        let mut commands = Vec::new();
        let mut pending: Option<(usize, String)> = None;
        for (n, l) in body {
            let l = match (&pending, console) {
                (None, true) => match l.strip_prefix("$ ") {
                    Some(c) => c,
                    None => continue,
                },
                _ => l,
            };
            let (start, mut acc) = pending.take().unwrap_or((n, String::new()));
            // Inside an open quote a line is text, not a command.
            let in_quote = quotes_open(&acc);
            let code = if in_quote {
                l.to_owned()
            } else {
                strip_comment(l)
            };
            let trimmed = code.trim_end();
            if let Some(cont) = trimmed.strip_suffix('\\')
                && !in_quote
            {
                acc.push_str(cont.trim());
                acc.push(' ');
                pending = Some((start, acc));
                continue;
            }
            acc.push_str(if in_quote {
                trimmed
            } else {
                trimmed.trim_start()
            });
            if quotes_open(&acc) {
                acc.push('\n');
                pending = Some((start, acc));
                continue;
            }
            // Spacing is normalized, but not inside a quoted multi-line text.
            let acc = if acc.contains('\n') {
                acc.trim().to_owned()
            } else {
                acc.split_whitespace().collect::<Vec<_>>().join(" ")
            };
            if !acc.is_empty() {
                commands.push(Cmd {
                    file: file.to_owned(),
                    line: start,
                    text: acc,
                });
            }
        }
        out.push(Block {
            file: file.to_owned(),
            commands,
            raw,
        });
    }
    out
}

/// Whether `s` ends inside a single- or double-quoted string.
fn quotes_open(s: &str) -> bool {
    let (mut single, mut double) = (false, false);
    for c in s.chars() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ => {}
        }
    }
    single || double
}

/// The line without a trailing `# comment` (outside quotes).
fn strip_comment(line: &str) -> String {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return line[..i].to_owned(),
            _ => {}
        }
        prev = c;
    }
    line.to_owned()
}

/// Shell-like words (quotes removed), for the command-line parser.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut single, mut double, mut any) = (false, false, false);
    for c in s.chars() {
        match c {
            '\'' if !double => {
                single = !single;
                any = true;
            }
            '"' if !single => {
                double = !double;
                any = true;
            }
            c if c.is_whitespace() && !single && !double => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The `sweepgate` arguments of a command (after the program), if it runs
/// sweepgate: `sweepgate …`, `./target/release/sweepgate …` or
/// `cargo run --release -- …`; output redirections dropped.
fn sweepgate_args(text: &str) -> Option<Vec<String>> {
    let w = words(text);
    let rest = match w.first().map(String::as_str) {
        Some("sweepgate" | "./target/release/sweepgate") => &w[1..],
        Some("cargo") if w.get(1..4) == Some(&["run".into(), "--release".into(), "--".into()]) => {
            &w[4..]
        }
        _ => return None,
    };
    let mut args = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if a == ">" || a == ">>" {
            it.next();
            continue;
        }
        if a.starts_with('>') || a == "|" {
            break;
        }
        args.push(a.clone());
    }
    Some(args)
}

/// A synopsis line as one concrete command: the first alternative of each
/// `[…|…]`, placeholders given plausible values.
fn expand_synopsis(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        out.push_str(inner.split(" | ").next().unwrap_or(""));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    words(&out)
        .into_iter()
        .map(|w| {
            let w = w.split('|').next().unwrap_or("").to_owned();
            match w.as_str() {
                "N" => "2".into(),
                "YYYY-MM-DD" => "2026-10-16".into(),
                "PATH" | "REV" | "FILE" | "DIR" | "URL" | "NAME" | "ADDR" | "A..B" => "x".into(),
                _ => w,
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_synopsis(text: &str) -> bool {
    text.contains("[--") || text.contains("|json") || text.contains("|sqlite")
}

fn listed_not_run(text: &str) -> Option<&'static str> {
    if RUN_ANYWAY.iter().any(|p| text.starts_with(p)) {
        return None;
    }
    NOT_RUN
        .iter()
        .find(|(p, _)| text.starts_with(p))
        .map(|(_, why)| *why)
}

/// The command parses with the real command line (a flag renamed or gone
/// fails here).
fn assert_parses(c: &Cmd, text: &str) {
    let Some(args) = sweepgate_args(text) else {
        return;
    };
    // The reader's variables, as the runs below set them.
    let args: Vec<String> = args
        .into_iter()
        .map(|a| match a.as_str() {
            "$APP_ID" => "1".to_owned(),
            v if v.starts_with('$') => "x".to_owned(),
            _ => a,
        })
        .collect();
    let mut argv: Vec<&str> = vec!["sweepgate"];
    argv.extend(args.iter().map(String::as_str));
    if let Err(e) = sweepgate::cli::try_parse(&argv) {
        panic!(
            "{}:{}: `{}` does not parse: {}",
            c.file,
            c.line,
            c.text,
            e.render()
        );
    }
}

/// Where the commands of one document run.
struct World {
    dir: tempfile::TempDir,
    bin: PathBuf,
    key: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let bin = root.join(".bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        std::fs::create_dir_all(root.join("target/release")).unwrap();
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_sweepgate"));
        std::os::unix::fs::symlink(&exe, bin.join("sweepgate")).unwrap();
        std::os::unix::fs::symlink(&exe, root.join("target/release/sweepgate")).unwrap();
        for dir in ["tests", "scripts"] {
            std::os::unix::fs::symlink(repo_root().join(dir), root.join(dir)).unwrap();
        }
        let key = root.join(".app-key.pem");
        std::fs::write(&key, sweepgate_sandbox::app_key_pem()).unwrap();
        World { dir, bin, key }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The command as the shell gets it here.
    fn localize(&self, text: &str) -> String {
        let tmp = format!("{}/tmp/", self.root().display());
        let text = text.replace("cargo run --release -- ", "sweepgate ");
        let mut out = String::new();
        let mut prev = ' ';
        let mut rest = text.as_str();
        while !rest.is_empty() {
            if rest.starts_with("/tmp/") && (prev.is_whitespace() || prev == '"' || prev == '=') {
                out.push_str(&tmp);
                rest = &rest[5..];
                prev = '/';
                continue;
            }
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            prev = c;
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    fn command(&self, script: &str) -> Command {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("bash");
        cmd.arg("-euo")
            .arg("pipefail")
            .arg("-c")
            .arg(script)
            .current_dir(self.root())
            .env("PATH", path)
            .env("TMPDIR", self.root().join("tmp"))
            .env("APP_ID", "1")
            .env("KEY", &self.key)
            .env("SECRET", "docs-secret")
            // A GitHub that answers nothing: the server must still start.
            .env("SWEEPGATE_GITHUB_API_URL", "http://127.0.0.1:9")
            .env("SWEEPGATE_LOG", "warn")
            .env_remove("SWEEPGATE_CONFIG")
            .env_remove("SWEEPGATE_DATABASE_URL");
        cmd
    }

    /// Runs consecutive commands of one block as one script (a variable
    /// one sets is there for the next).
    fn run(&self, cmds: &[&Cmd]) {
        let Some(first) = cmds.first() else {
            return;
        };
        let script = cmds
            .iter()
            .map(|c| self.localize(&c.text))
            .collect::<Vec<_>>()
            .join("\n");
        let out = self.command(&script).output().unwrap();
        let texts: Vec<&str> = cmds.iter().map(|c| c.text.as_str()).collect();
        assert!(
            out.status.success(),
            "{}:{}: {texts:#?} failed ({}):\n{}{}",
            first.file,
            first.line,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts a server command, waits for `/healthz` to answer 200, stops it.
    async fn start_probe_stop(&self, c: &Cmd, subcommand: &str) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = self.root().join(format!(".server-{}.log", c.line));
        let script = format!("exec {}", self.localize(&c.text));
        let mut cmd = self.command(&script);
        cmd.env("SWEEPGATE_LISTEN", format!("127.0.0.1:{port}"))
            .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
            .stderr(Stdio::from(
                std::fs::OpenOptions::new().append(true).open(&log).unwrap(),
            ));
        let mut child = cmd.spawn().unwrap();
        let client = reqwest::Client::new();
        let start = Instant::now();
        let printed = regex::Regex::new(r"sweepgate\s+(http://127\.0\.0\.1:[0-9]+)").unwrap();
        let healthy = loop {
            let base = if subcommand == "serve" {
                Some(format!("http://127.0.0.1:{port}"))
            } else {
                // The demo picks its own port and prints sweepgate's address.
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                printed.captures(&text).map(|m| m[1].to_owned())
            };
            if let Some(base) = base
                && let Ok(r) = client.get(format!("{base}/healthz")).send().await
                && r.status() == 200
            {
                break true;
            }
            if child.try_wait().unwrap().is_some() || start.elapsed() > Duration::from_secs(120) {
                break false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            healthy,
            "{}:{}: `{}` never answered /healthz:\n{text}",
            c.file, c.line, c.text
        );
        assert!(
            subcommand == "demo" || status.success(),
            "{}:{}: `{}` did not stop cleanly on SIGTERM ({status}):\n{text}",
            c.file,
            c.line,
            c.text
        );
    }
}

/// Every block of every document, in order.
fn all_blocks() -> Vec<Block> {
    doc_files()
        .iter()
        .flat_map(|p| {
            let rel = p
                .strip_prefix(repo_root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            blocks(&rel, &std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

fn is_quotation(b: &Block) -> bool {
    b.file == "docs/checks.md" && !b.raw.contains("sweepgate") && !b.raw.contains("cargo ")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_local_command_in_the_docs_works_as_written() {
    let blocks = all_blocks();
    let mut used_lists: BTreeSet<&str> = BTreeSet::new();
    let (mut ran, mut served, mut parsed, mut quoted) = (0, 0, 0, 0);
    let mut world: Option<(String, World)> = None;
    for b in &blocks {
        if is_quotation(b) {
            quoted += 1;
            continue;
        }
        let mut script: Vec<&Cmd> = Vec::new();
        for c in &b.commands {
            let as_sweepgate = c.text.replace("cargo run --release -- ", "sweepgate ");
            if let Some(p) = NEEDS_GITHUB.iter().find(|p| as_sweepgate.starts_with(**p)) {
                used_lists.insert(p);
                assert_parses(c, &c.text);
                parsed += 1;
                continue;
            }
            if is_synopsis(&c.text) {
                assert_parses(c, &expand_synopsis(&c.text));
                parsed += 1;
                continue;
            }
            if let Some(p) = NOT_RUN.iter().find(|(p, _)| c.text.starts_with(p))
                && listed_not_run(&c.text).is_some()
            {
                used_lists.insert(p.0);
                assert_parses(c, &c.text);
                parsed += 1;
                continue;
            }
            if world.as_ref().is_none_or(|(f, _)| *f != c.file) {
                world = Some((c.file.clone(), World::new()));
            }
            let Some((_, w)) = &world else { unreachable!() };
            let sub = sweepgate_args(&c.text).and_then(|a| a.first().cloned());
            match sub.as_deref() {
                Some(s @ ("serve" | "demo")) => {
                    w.run(&std::mem::take(&mut script));
                    assert_parses(c, &c.text);
                    w.start_probe_stop(c, s).await;
                    served += 1;
                }
                _ => {
                    script.push(c);
                    ran += 1;
                }
            }
        }
        if let Some((_, w)) = &world {
            w.run(&script);
        }
    }
    let stale: Vec<&str> = NEEDS_GITHUB
        .iter()
        .copied()
        .chain(NOT_RUN.iter().map(|(p, _)| *p))
        .filter(|p| !used_lists.contains(p))
        .collect();
    assert!(
        stale.is_empty(),
        "listed commands no document holds: {stale:?}"
    );
    // The quick start's two commands come first in the README.
    let readme: Vec<&Cmd> = blocks
        .iter()
        .filter(|b| b.file == "README.md")
        .flat_map(|b| &b.commands)
        .collect();
    let first: Vec<&str> = readme.iter().take(2).map(|c| c.text.as_str()).collect();
    assert_eq!(first, ["cargo run --release -- demo", "cargo test"]);
    assert!(ran >= 3 && served >= 2, "ran {ran}, served {served}");
    eprintln!("docs: {ran} run, {served} served, {parsed} parsed, {quoted} quoted blocks");
}

#[test]
fn blocks_join_continuations_and_drop_comments_and_output() {
    let md = "x\n```sh\na --b \\\n  c   # why\n# only a comment\njq '{a:\n  b}' f\n```\n```console\n$ sweepgate x '#y'\noutput\n```\n```text\nnot me\n```\n";
    let b = blocks("f.md", md);
    let cmds: Vec<(usize, &str)> = b
        .iter()
        .flat_map(|b| &b.commands)
        .map(|c| (c.line, c.text.as_str()))
        .collect();
    assert_eq!(
        cmds,
        [
            (3, "a --b c"),
            (6, "jq '{a:\n  b}' f"),
            (10, "sweepgate x '#y'")
        ]
    );
    assert_eq!(
        expand_synopsis("sweepgate lint --repo PATH [--format text|json|sarif]"),
        "sweepgate lint --repo x --format text"
    );
    assert_eq!(
        sweepgate_args("cargo run --release -- serve --webhook-secret \"$S\" > log"),
        Some(vec![
            "serve".to_owned(),
            "--webhook-secret".into(),
            "$S".into()
        ])
    );
    // A flag the command line does not have is caught.
    assert!(sweepgate::cli::try_parse(&["sweepgate", "lint", "--no-such-flag"]).is_err());
}
