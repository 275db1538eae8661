//! How a file of the benchmark repository changed in a pull request.

/// How a file changed between two revisions (GitHub's `status` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Added,
    Removed,
    Modified,
    Renamed,
    Copied,
    /// Type change (file ↔ symlink ↔ submodule).
    Changed,
}

impl FileStatus {
    /// GitHub's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Modified => "modified",
            Self::Renamed => "renamed",
            Self::Copied => "copied",
            Self::Changed => "changed",
        }
    }

    /// Parse GitHub's spelling (`unchanged` has no counterpart here).
    pub fn from_github(s: &str) -> Option<Self> {
        Some(match s {
            "added" => Self::Added,
            "removed" => Self::Removed,
            "modified" => Self::Modified,
            "renamed" => Self::Renamed,
            "copied" => Self::Copied,
            "changed" => Self::Changed,
            _ => return None,
        })
    }
}
