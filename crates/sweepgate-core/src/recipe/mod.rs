//! Parsers of the benchmark repository's data files. Pure: every function
//! takes bytes (and the path that names them in errors) and returns typed
//! models with source positions. No I/O here: the service reads the files.
pub mod changelog;
pub mod codeowners;
pub mod golden;
pub mod launcher;
pub mod master;
pub mod models_md;
pub mod runners;
pub mod script;
pub(crate) mod srt;
pub mod thresholds;
pub mod waiver;
pub mod workflows;
pub(crate) mod yaml;

use std::fmt;

/// A position in a file of the benchmark repository (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Loc {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl Loc {
    pub(crate) fn new(file: impl Into<String>, line: usize, column: usize) -> Self {
        Self {
            file: file.into(),
            line,
            column,
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A data file that cannot be read as what it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{loc}: {message}")]
pub struct ParseError {
    pub loc: Loc,
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(loc: Loc, message: impl Into<String>) -> Self {
        Self {
            loc,
            message: message.into(),
        }
    }
}
