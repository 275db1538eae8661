//! Sweeps: which runs count, the facts of a run, staging requests and the
//! result links. Pure: handlers fetch the facts through the GitHub client.
pub mod curves;
pub mod dispatch;
pub mod gate;
pub mod results;
pub mod runs;
pub mod staging;

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a sweep sweepgate dispatched stands (stored as its lower-case
/// name; the database allows only these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepState {
    /// Stored, and its dispatch requested; no run seen yet.
    Dispatched,
    Running,
    Completed,
    Cancelled,
}

impl SweepState {
    pub const ALL: [SweepState; 4] = [
        SweepState::Dispatched,
        SweepState::Running,
        SweepState::Completed,
        SweepState::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SweepState::Dispatched => "dispatched",
            SweepState::Running => "running",
            SweepState::Completed => "completed",
            SweepState::Cancelled => "cancelled",
        }
    }

    /// Not yet completed or cancelled.
    pub fn is_open(self) -> bool {
        matches!(self, SweepState::Dispatched | SweepState::Running)
    }
}

impl fmt::Display for SweepState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored state no release wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sweep state `{0}`")]
pub struct UnknownSweepState(pub String);

impl std::str::FromStr for SweepState {
    type Err = UnknownSweepState;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SweepState::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| UnknownSweepState(s.to_owned()))
    }
}

impl TryFrom<String> for SweepState {
    type Error = UnknownSweepState;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}
