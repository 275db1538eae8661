//! Where the repository configuration comes from: `.github/sweepgate.toml`
//! holds every section; while `[verifier]` or `[lint]` is absent from it,
//! the file that held that section before is still read, on every load,
//! and a deprecation note says so. When both exist, the section wins.
//!
//! Pure: callers read the files (at one revision) and hand their bytes in;
//! [`old_files_for`] says which old files the main file leaves to be read.
use std::collections::BTreeSet;

use super::repo::{ConfigError, REPO_CONFIG_PATH, RepoConfig, parse_toml};
use crate::checks::VERIFIER_SETTINGS_PATH;
use crate::checks::lint::data::LINT_OVERRIDE_PATH;

/// A section of `.github/sweepgate.toml` that a separate file held before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OldFile {
    pub section: &'static str,
    pub path: &'static str,
}

/// The deprecated files, by the section that replaces each.
pub const OLD_FILES: [OldFile; 2] = [
    OldFile {
        section: "verifier",
        path: VERIFIER_SETTINGS_PATH,
    },
    OldFile {
        section: "lint",
        path: LINT_OVERRIDE_PATH,
    },
];

/// Every configuration file sweepgate reads from a repository.
pub const CONFIG_FILES: [&str; 3] = [REPO_CONFIG_PATH, VERIFIER_SETTINGS_PATH, LINT_OVERRIDE_PATH];

/// Deprecated configuration that took effect or was ignored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct Deprecation {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// A configuration and what in it is deprecated.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub config: RepoConfig,
    pub notes: Vec<Deprecation>,
}

/// A TOML text as a table (empty when it does not parse: the typed parse
/// reports the error).
fn table_of(bytes: &[u8]) -> toml::Table {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(t).ok())
        .unwrap_or_default()
}

/// Top-level tables of a TOML text.
fn sections(bytes: &[u8]) -> BTreeSet<String> {
    table_of(bytes).keys().cloned().collect()
}

/// The old files to read beside the main file's bytes (`None`: no main
/// file): those whose section it lacks.
pub fn old_files_for(main: Option<&[u8]>) -> Vec<&'static str> {
    let present = main.map(sections).unwrap_or_default();
    OLD_FILES
        .iter()
        .filter(|o| !present.contains(o.section))
        .map(|o| o.path)
        .collect()
}

/// Where a section's keys were read: its file, its text and the table
/// path of the section in that file.
struct Origin<'a> {
    file: &'a str,
    text: String,
    prefix: Vec<&'a str>,
}

impl Origin<'_> {
    fn error(&self, table: &[&str], key: &str, message: String) -> ConfigError {
        let (line, column) = locate_in(&self.text, &[&self.prefix[..], table].concat(), key);
        ConfigError {
            file: self.file.to_owned(),
            line,
            column,
            message,
        }
    }
}

/// Line and column of `key =` inside the table `path` (`[]`: the top
/// level), else of the table's header, else 1:1.
fn locate_in(text: &str, path: &[&str], key: &str) -> (usize, usize) {
    let want = path.join(".");
    let mut current = String::new();
    let mut header = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('[') {
            current = t
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_owned();
            if current == want && header.is_none() {
                header = Some((i + 1, line.len() - t.len() + 1));
            }
            continue;
        }
        if current == want
            && !key.is_empty()
            && let Some(rest) = t.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return (i + 1, line.len() - t.len() + 1);
        }
    }
    header.unwrap_or((1, 1))
}

/// The lint overrides must yield lint data (`lint-data/` merged with them);
/// an error names the key it is about.
fn check_lint(lint: &toml::Table, origin: &Origin<'_>) -> Result<(), ConfigError> {
    let cfg = RepoConfig {
        lint: lint.clone(),
        ..RepoConfig::default()
    };
    let Err(e) = cfg.lint_data() else {
        return Ok(());
    };
    // toml says `unknown field `k`` and `in `a.b``.
    let quoted = |after: &str| {
        e.message
            .split_once(after)
            .and_then(|(_, r)| r.strip_prefix('`'))
            .and_then(|r| r.split('`').next())
            .map(str::to_owned)
    };
    let within: Vec<String> = quoted("in ")
        .map(|p| p.split('.').map(str::to_owned).collect())
        .unwrap_or_default();
    let (table, key) = match quoted("unknown field ") {
        Some(k) => (within, k),
        None => {
            let mut t = within;
            let k = t.pop().unwrap_or_default();
            (t, k)
        }
    };
    let table: Vec<&str> = table.iter().map(String::as_str).collect();
    let message = e
        .message
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Err(origin.error(&table, &key, format!("lint data: {message}")))
}

/// Reads the configuration from the main file (name and bytes; `None`
/// when the repository has none) and the old files that exist (path and
/// bytes, at the same revision). Any error keeps nothing: the caller keeps
/// its last valid configuration.
pub fn resolve(
    main: Option<(&str, &[u8])>,
    old: &[(&str, &[u8])],
) -> Result<Resolved, ConfigError> {
    let main_file = main.map_or(REPO_CONFIG_PATH, |(f, _)| f);
    let (mut config, text): (RepoConfig, String) = match main {
        Some((file, bytes)) => parse_toml(file, bytes)?,
        None => (RepoConfig::default(), String::new()),
    };
    let table = table_of(text.as_bytes());
    let mut notes = Vec::new();
    let note = |file: &str, line: usize, message: String| Deprecation {
        file: file.to_owned(),
        line,
        message,
    };

    // `[signoff] legacy-logins` became `[legacy] logins`.
    if let Some(logins) = config.signoff.legacy_logins.take() {
        let line = locate_in(&text, &["signoff"], "legacy-logins").0;
        let set = table
            .get("legacy")
            .and_then(toml::Value::as_table)
            .is_some_and(|t| t.contains_key("logins"));
        if set {
            notes.push(note(
                main_file,
                line,
                "`[signoff] legacy-logins` is ignored: `[legacy] logins` is set; delete it".into(),
            ));
        } else {
            config.legacy.logins = logins;
            notes.push(note(
                main_file,
                line,
                "`[signoff] legacy-logins` is deprecated: move it to `[legacy] logins`".into(),
            ));
        }
    }

    let mut verifier = Origin {
        file: main_file,
        text: text.clone(),
        prefix: vec!["verifier"],
    };
    let mut lint = Origin {
        file: main_file,
        text: text.clone(),
        prefix: vec!["lint"],
    };
    for (path, bytes) in old {
        let Some(o) = OLD_FILES.iter().find(|o| o.path == *path) else {
            continue;
        };
        if table.contains_key(o.section) {
            notes.push(note(
                path,
                1,
                format!(
                    "ignored: `[{}]` in `{main_file}` replaces this file; delete it",
                    o.section
                ),
            ));
            continue;
        }
        let origin = Origin {
            file: o.path,
            text: String::new(),
            prefix: Vec::new(),
        };
        if o.section == "verifier" {
            let (v, t) = parse_toml(path, bytes)?;
            config.verifier = v;
            verifier = Origin { text: t, ..origin };
        } else {
            let (v, t) = parse_toml(path, bytes)?;
            config.lint = v;
            lint = Origin { text: t, ..origin };
        }
        notes.push(note(
            path,
            1,
            format!(
                "deprecated: move these settings to `[{}]` in `{main_file}` (this file is read while that section is absent)",
                o.section
            ),
        ));
    }

    config.validate(main_file, &text)?;
    let sim = config.verifier.checklist_similarity;
    if !(0.0..=1.0).contains(&sim) {
        return Err(verifier.error(
            &[],
            "checklist-similarity",
            format!("verifier.checklist-similarity must be between 0 and 1, not {sim}"),
        ));
    }
    check_lint(&config.lint, &lint)?;
    Ok(Resolved { config, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = REPO_CONFIG_PATH;

    fn main_only(text: &str) -> Result<Resolved, ConfigError> {
        resolve(Some((MAIN, text.as_bytes())), &[])
    }

    #[test]
    fn sections_replace_their_old_files_which_are_read_while_absent() {
        assert_eq!(
            old_files_for(None),
            vec![VERIFIER_SETTINGS_PATH, LINT_OVERRIDE_PATH]
        );
        assert_eq!(
            old_files_for(Some(b"[verifier]\npareto-min-points = 3\n")),
            vec![LINT_OVERRIDE_PATH]
        );
        let old_v = b"pareto-min-points = 4\n".as_slice();
        let old_l = b"established-skus = [\"h100\"]\n".as_slice();
        // Old files alone: they take effect, with a note each.
        let r = resolve(
            None,
            &[(VERIFIER_SETTINGS_PATH, old_v), (LINT_OVERRIDE_PATH, old_l)],
        )
        .unwrap();
        assert_eq!(r.config.verifier.pareto_min_points, 4);
        assert_eq!(
            r.config.lint["established-skus"],
            toml::Value::Array(vec!["h100".into()])
        );
        assert_eq!(r.notes.len(), 2);
        assert!(r.notes[0].to_string().starts_with(
            ".github/sweepgate-verifier.toml:1: deprecated: move these settings to `[verifier]`"
        ));
        // Both: the section wins and the old file is noted as ignored.
        let main = b"[verifier]\npareto-min-points = 6\n[lint]\nestablished-skus = [\"b200\"]\n";
        let r = resolve(
            Some((MAIN, main)),
            &[
                (VERIFIER_SETTINGS_PATH, old_v),
                (LINT_OVERRIDE_PATH, b"x = ["),
            ],
        )
        .unwrap();
        assert_eq!(r.config.verifier.pareto_min_points, 6);
        assert_eq!(
            r.config.lint["established-skus"],
            toml::Value::Array(vec!["b200".into()])
        );
        assert!(r.notes.iter().all(|n| n.message.starts_with("ignored:")));
    }

    #[test]
    fn errors_name_the_file_and_line_they_come_from() {
        let e = main_only("[paths]\n\n[verifier]\npareto-min-points = \"x\"\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), (MAIN, 4), "{e}");
        let e = main_only("[verifier]\nchecklist-similarity = 2.0\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let e = resolve(None, &[(VERIFIER_SETTINGS_PATH, b"\nnope = 1\n")]).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line),
            (VERIFIER_SETTINGS_PATH, 2),
            "{e}"
        );
        // Lint keys are checked against the lint data, at their line.
        let text = "[policy]\nestablished-skus = [\"h100\"]\n[lint]\nestablished-skus = 3\n";
        let e = main_only(text).unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.contains("expected a sequence"), "{e}");
        let e = main_only("[lint]\n[lint.vllm]\nzzz = 1\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = resolve(
            None,
            &[(
                LINT_OVERRIDE_PATH,
                b"established-skus = []\n[vllm]\ncanonical-flags = [1]\n",
            )],
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), (LINT_OVERRIDE_PATH, 3), "{e}");
    }

    #[test]
    fn legacy_logins_moved_to_their_section() {
        let r = main_only("[signoff]\nlegacy-logins = [\"old-bot\"]\n").unwrap();
        assert_eq!(r.config.legacy.logins, vec!["old-bot".to_string()]);
        assert_eq!(r.config.signoff.legacy_logins, None);
        assert_eq!(r.notes[0].line, 2);
        let r =
            main_only("[signoff]\nlegacy-logins = [\"a\"]\n[legacy]\nlogins = [\"b\"]\n").unwrap();
        assert_eq!(r.config.legacy.logins, vec!["b".to_string()]);
        assert!(r.notes[0].message.contains("ignored"));
        assert!(main_only("").unwrap().notes.is_empty());
        assert_eq!(
            main_only("").unwrap().config.legacy.logins,
            vec!["github-actions[bot]".to_string()]
        );
    }

    #[test]
    fn the_kept_form_reads_back_unchanged() {
        let text = "[sweep]\nmode = \"dispatch\"\n[verifier]\npareto-min-points = 3\nsa-bench-chat-template-default = false\n[lint]\nestablished-skus = [\"h100\"]\n[lint.vllm]\ncanonical-flags = [\"port\"]\n[legacy]\nlogins = [\"x\"]\n";
        let cfg = main_only(text).unwrap().config;
        let kept = cfg.to_toml().unwrap();
        assert_eq!(RepoConfig::from_toml(MAIN, kept.as_bytes()).unwrap(), cfg);
        let d = RepoConfig::default();
        assert_eq!(
            RepoConfig::from_toml(MAIN, d.to_toml().unwrap().as_bytes()).unwrap(),
            d
        );
    }
}
