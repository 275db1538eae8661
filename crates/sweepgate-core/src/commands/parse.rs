//! The command grammar (`docs/contracts.md` §3).
//!
//! Decisions, each pinned by a test:
//! - Where a command may stand is decided by [`super::markdown`]: at the start
//!   of a line, outside code, quotes and HTML comments.
//! - A line is a command line when its first token is `/` followed by a word
//!   of ASCII letters, digits and `-` that starts with a letter, ending at
//!   whitespace or the end of the line: `/usr/bin/env`, `/use:` and `/ 1` are
//!   plain text, `/foo` is an unknown command.
//! - Commands are lowercase. `/USE 1` is an unknown command whose message
//!   names the lowercase spelling, so nothing runs by accident of case.
//! - Zero-width characters (U+200B–U+200D, U+2060, U+FEFF) before the `/` make
//!   the line plain text; after the `/` they are removed before tokenizing,
//!   so `/u\u{200B}se 1` is the `/use 1` that readers see.
//! - Arguments are exact: `/use` takes one run id, `/verify` and `/help` take
//!   none; extra words are an error rather than silently ignored.
use super::markdown::slash_lines;
use crate::ids::RunId;
use std::fmt;

/// The highest check number (`docs/contracts.md` §6: checks 0–17).
pub const MAX_CHECK: u8 = 17;
/// Longest accepted `/ack-check` reason, in characters (it is shown in a row).
pub(crate) const MAX_REASON_CHARS: usize = 500;

const ZERO_WIDTH: [char; 5] = ['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}'];

/// The names of the commands, in help order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CommandName {
    Use,
    ReuseSweepRun,
    StageResults,
    Verify,
    AckCheck,
    Help,
}

impl CommandName {
    pub(crate) const ALL: [CommandName; 6] = [
        CommandName::Use,
        CommandName::ReuseSweepRun,
        CommandName::StageResults,
        CommandName::Verify,
        CommandName::AckCheck,
        CommandName::Help,
    ];

    /// The word after the slash.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CommandName::Use => "use",
            CommandName::ReuseSweepRun => "reuse-sweep-run",
            CommandName::StageResults => "stage-results",
            CommandName::Verify => "verify",
            CommandName::AckCheck => "ack-check",
            CommandName::Help => "help",
        }
    }

    /// The syntax shown in help and error messages.
    pub(crate) fn usage(self) -> &'static str {
        match self {
            CommandName::Use => "/use <run_id>",
            CommandName::ReuseSweepRun => "/reuse-sweep-run [<run_id>]",
            CommandName::StageResults => "/stage-results [<run_id>]",
            CommandName::Verify => "/verify",
            CommandName::AckCheck => "/ack-check <N> <reason>",
            CommandName::Help => "/help",
        }
    }

    fn from_word(w: &str) -> Option<CommandName> {
        CommandName::ALL.into_iter().find(|c| c.as_str() == w)
    }
}

impl fmt::Display for CommandName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}", self.as_str())
    }
}

/// A check number of the verdict, 0..=17.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CheckNumber(u8);

impl CheckNumber {
    pub fn new(n: u8) -> Option<CheckNumber> {
        (n <= MAX_CHECK).then_some(CheckNumber(n))
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for CheckNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A well-formed command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Command {
    /// `/use <run_id>`: pin this run.
    Use { run: RunId },
    /// `/reuse-sweep-run [<run_id>]`: the legacy spelling of `/use`; without
    /// an id, the newest eligible successful run.
    ReuseSweepRun { run: Option<RunId> },
    /// `/stage-results [<run_id>]`: stage a run (default: the pinned run).
    StageResults { run: Option<RunId> },
    /// `/verify`: re-run the verifier on the current head.
    Verify,
    /// `/ack-check <N> <reason>`: accept a REVIEW row.
    AckCheck { check: CheckNumber, reason: String },
    /// `/help`.
    Help,
}

impl Command {
    pub(crate) fn name(&self) -> CommandName {
        match self {
            Command::Use { .. } => CommandName::Use,
            Command::ReuseSweepRun { .. } => CommandName::ReuseSweepRun,
            Command::StageResults { .. } => CommandName::StageResults,
            Command::Verify => CommandName::Verify,
            Command::AckCheck { .. } => CommandName::AckCheck,
            Command::Help => CommandName::Help,
        }
    }
}

impl fmt::Display for Command {
    /// The canonical spelling (used to compare edited comments).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Command::Use { run } => write!(f, "{name} {run}"),
            Command::ReuseSweepRun { run: Some(run) }
            | Command::StageResults { run: Some(run) } => {
                write!(f, "{name} {run}")
            }
            Command::AckCheck { check, reason } => write!(f, "{name} {check} {reason}"),
            _ => write!(f, "{name}"),
        }
    }
}

/// Why a command line is not a command; the text is the reply.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum CommandError {
    #[error("unknown command `/{word}`; commands are lowercase: did you mean `{suggestion}`?")]
    WrongCase {
        word: String,
        suggestion: CommandName,
    },
    #[error(
        "unknown command `/{word}`; known commands: `/use`, `/reuse-sweep-run`, `/stage-results`, `/verify`, `/ack-check`, `/help`"
    )]
    Unknown { word: String },
    #[error("`{command}` needs a run id: `{}`", command.usage())]
    MissingRunId { command: CommandName },
    #[error(
        "`{command}`: the run id must be digits (the number in `.../actions/runs/<run_id>`), got `{got}`: `{}`",
        command.usage()
    )]
    BadRunId { command: CommandName, got: String },
    #[error("`{command}` takes {expects}; unexpected `{extra}`: `{}`", command.usage())]
    Unexpected {
        command: CommandName,
        expects: &'static str,
        extra: String,
    },
    #[error("`/ack-check` needs a check number and a reason: `/ack-check <N> <reason>`")]
    MissingCheck,
    #[error("`/ack-check`: the check number must be 0 to {MAX_CHECK}, got `{got}`")]
    BadCheck { got: String },
    #[error("`/ack-check {check}` needs a reason: `/ack-check {check} <reason>`")]
    MissingReason { check: CheckNumber },
    #[error("`/ack-check`: the reason is longer than {MAX_REASON_CHARS} characters")]
    ReasonTooLong,
}

impl CommandError {
    /// The line named a command that does not exist.
    pub fn is_unknown(&self) -> bool {
        matches!(
            self,
            CommandError::Unknown { .. } | CommandError::WrongCase { .. }
        )
    }
}

/// One command line of a comment, where it is and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedLine {
    /// 1-based line number in the body.
    pub line: usize,
    /// Byte offset of the `/` in the body.
    pub offset: usize,
    /// The line as read: zero-width characters removed, whitespace collapsed.
    /// Two lines with the same `normalized` text are the same command.
    pub normalized: String,
    pub result: Result<Command, CommandError>,
}

impl ParsedLine {
    pub fn command(&self) -> Option<&Command> {
        self.result.as_ref().ok()
    }
}

/// Every command line of a comment body, in order.
pub fn parse_comment(body: &str) -> Vec<ParsedLine> {
    slash_lines(body)
        .into_iter()
        .filter_map(|c| {
            let (normalized, result) = parse_line(&c.text)?;
            Some(ParsedLine {
                line: c.line,
                offset: c.offset,
                normalized,
                result,
            })
        })
        .collect()
}

/// Only the well-formed commands of a body.
pub fn commands(body: &str) -> Vec<Command> {
    parse_comment(body)
        .into_iter()
        .filter_map(|p| p.result.ok())
        .collect()
}

/// Parses one line that starts with `/`; `None` when it is not a command
/// line at all (a path, `/ word`, `/use:`).
pub fn parse_line(text: &str) -> Option<(String, Result<Command, CommandError>)> {
    let clean: String = text.chars().filter(|c| !ZERO_WIDTH.contains(c)).collect();
    let mut tokens = clean.split_whitespace();
    let word = tokens.next()?.strip_prefix('/')?;
    let looks_like_command = word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !looks_like_command {
        return None;
    }
    let args: Vec<&str> = tokens.collect();
    let normalized = std::iter::once(format!("/{word}"))
        .chain(args.iter().map(|a| a.to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    let result = match CommandName::from_word(word) {
        Some(name) => parse_args(name, &args),
        None => Err(match CommandName::from_word(&word.to_ascii_lowercase()) {
            Some(suggestion) => CommandError::WrongCase {
                word: in_code(word),
                suggestion,
            },
            None => CommandError::Unknown {
                word: in_code(word),
            },
        }),
    };
    Some((normalized, result))
}

/// User text an error quotes inside a code span: a backtick would end the
/// span and let the rest mention or hide things (`docs/contracts.md` §4),
/// so it is shown as a quote mark.
fn in_code(s: &str) -> String {
    s.replace('`', "'")
}

fn parse_args(name: CommandName, args: &[&str]) -> Result<Command, CommandError> {
    let unexpected = |expects: &'static str, extra: &[&str]| CommandError::Unexpected {
        command: name,
        expects,
        extra: in_code(&extra.join(" ")),
    };
    match name {
        CommandName::Use => match args {
            [] => Err(CommandError::MissingRunId { command: name }),
            [id] => Ok(Command::Use {
                run: run_id(name, id)?,
            }),
            [id, rest @ ..] => {
                run_id(name, id)?;
                Err(unexpected("one run id", rest))
            }
        },
        CommandName::ReuseSweepRun | CommandName::StageResults => {
            let run = match args {
                [] => None,
                [id] => Some(run_id(name, id)?),
                [id, rest @ ..] => {
                    run_id(name, id)?;
                    return Err(unexpected("at most one run id", rest));
                }
            };
            Ok(if name == CommandName::StageResults {
                Command::StageResults { run }
            } else {
                Command::ReuseSweepRun { run }
            })
        }
        CommandName::Verify | CommandName::Help => {
            if args.is_empty() {
                Ok(if name == CommandName::Verify {
                    Command::Verify
                } else {
                    Command::Help
                })
            } else {
                Err(unexpected("no arguments", args))
            }
        }
        CommandName::AckCheck => {
            let (n, reason) = args.split_first().ok_or(CommandError::MissingCheck)?;
            let check = n
                .parse::<u8>()
                .ok()
                .filter(|_| n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(CheckNumber::new)
                .ok_or_else(|| CommandError::BadCheck { got: in_code(n) })?;
            if reason.is_empty() {
                return Err(CommandError::MissingReason { check });
            }
            let reason = reason.join(" ");
            if reason.chars().count() > MAX_REASON_CHARS {
                return Err(CommandError::ReasonTooLong);
            }
            Ok(Command::AckCheck { check, reason })
        }
    }
}

fn run_id(command: CommandName, s: &str) -> Result<RunId, CommandError> {
    let bad = || CommandError::BadRunId {
        command,
        got: in_code(s),
    };
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // Digits but zero or beyond u64: no such run.
    match s.parse::<u64>() {
        Ok(0) | Err(_) => Err(bad()),
        Ok(n) => Ok(RunId(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(body: &str) -> Result<Command, CommandError> {
        let mut p = parse_comment(body);
        assert_eq!(p.len(), 1, "{body:?} gave {p:?}");
        p.remove(0).result
    }

    #[test]
    fn seed_002_use() {
        assert_eq!(
            one("/use 38614048439"),
            Ok(Command::Use {
                run: RunId(38614048439)
            })
        );
    }

    #[test]
    fn all_commands() {
        assert_eq!(
            one("/reuse-sweep-run"),
            Ok(Command::ReuseSweepRun { run: None })
        );
        assert_eq!(
            one("/reuse-sweep-run 12"),
            Ok(Command::ReuseSweepRun {
                run: Some(RunId(12))
            })
        );
        assert_eq!(
            one("/stage-results"),
            Ok(Command::StageResults { run: None })
        );
        assert_eq!(
            one("/stage-results 7"),
            Ok(Command::StageResults {
                run: Some(RunId(7))
            })
        );
        assert_eq!(one("/verify"), Ok(Command::Verify));
        assert_eq!(one("/help"), Ok(Command::Help));
        assert_eq!(
            one("/ack-check 17 upstream recipe matches, see sglang#44712"),
            Ok(Command::AckCheck {
                check: CheckNumber(17),
                reason: "upstream recipe matches, see sglang#44712".into()
            })
        );
    }

    #[test]
    fn argument_errors_are_precise() {
        assert_eq!(
            one("/use").unwrap_err().to_string(),
            "`/use` needs a run id: `/use <run_id>`"
        );
        assert_eq!(
            one("/use abc").unwrap_err().to_string(),
            "`/use`: the run id must be digits (the number in `.../actions/runs/<run_id>`), got `abc`: `/use <run_id>`"
        );
        assert!(matches!(one("/use 0"), Err(CommandError::BadRunId { .. })));
        assert!(matches!(
            one("/use 99999999999999999999999"),
            Err(CommandError::BadRunId { .. })
        ));
        assert!(matches!(one("/use -5"), Err(CommandError::BadRunId { .. })));
        assert_eq!(
            one("/use 1 2").unwrap_err().to_string(),
            "`/use` takes one run id; unexpected `2`: `/use <run_id>`"
        );
        assert!(matches!(
            one("/verify now"),
            Err(CommandError::Unexpected { .. })
        ));
        assert!(matches!(
            one("/help me"),
            Err(CommandError::Unexpected { .. })
        ));
        assert!(matches!(
            one("/stage-results 1 2"),
            Err(CommandError::Unexpected { .. })
        ));
        assert_eq!(one("/ack-check"), Err(CommandError::MissingCheck));
        assert_eq!(
            one("/ack-check 18 x"),
            Err(CommandError::BadCheck { got: "18".into() })
        );
        assert_eq!(
            one("/ack-check +3 x"),
            Err(CommandError::BadCheck { got: "+3".into() })
        );
        assert_eq!(
            one("/ack-check 3").unwrap_err().to_string(),
            "`/ack-check 3` needs a reason: `/ack-check 3 <reason>`"
        );
        let long = format!("/ack-check 3 {}", "x".repeat(MAX_REASON_CHARS + 1));
        assert_eq!(one(&long), Err(CommandError::ReasonTooLong));
    }

    #[test]
    fn unknown_and_case() {
        let e = one("/foo bar").unwrap_err();
        assert!(e.is_unknown());
        assert!(e.to_string().starts_with("unknown command `/foo`"));
        let e = one("/USE 1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown command `/USE`; commands are lowercase: did you mean `/use`?"
        );
        assert!(parse_comment("/usr/bin/env python").is_empty());
        assert!(parse_comment("/use: 1").is_empty());
        assert!(parse_comment("/ use 1").is_empty());
        assert!(parse_comment("/1 2").is_empty());
        assert!(parse_comment("Is ur /loop wack?").is_empty());
    }

    #[test]
    fn zero_width() {
        assert!(parse_comment("\u{200B}/use 1").is_empty());
        assert!(parse_comment("\u{2060}/verify").is_empty());
        assert_eq!(one("/u\u{200B}se 1"), Ok(Command::Use { run: RunId(1) }));
        assert_eq!(
            one("/use\u{200D} 1\u{FEFF}"),
            Ok(Command::Use { run: RunId(1) })
        );
        assert_eq!(one("\u{FEFF}/help"), Ok(Command::Help));
    }

    #[test]
    fn normalized_text() {
        let p = parse_comment("/ack-check   3\tfine\u{200B}  by me  ");
        assert_eq!(p[0].normalized, "/ack-check 3 fine by me");
        assert_eq!(
            Command::AckCheck {
                check: CheckNumber(3),
                reason: "fine by me".into()
            }
            .to_string(),
            "/ack-check 3 fine by me"
        );
    }
}
