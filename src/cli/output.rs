//! What the command line prints: the output formats, and standard output
//! that a closed pipe does not turn into a panic (`sweepgate lint … | head`
//! ends quietly once `head` has what it wanted).
use std::io::{ErrorKind, Write};

/// `--format text|json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TextOrJson {
    Text,
    Json,
}

/// Writes `text` to standard output. A reader that went away (a broken
/// pipe) is not an error: the rest of the output is simply not wanted.
pub(crate) fn print_out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
