//! The bodies of `cargo xtask` (see `main.rs`): the benchmarks and the
//! reliability runs, as a library so their bounded versions run as tests.
use std::path::{Path, PathBuf};

pub mod bench;
pub mod load;
pub mod reliability;

/// The workspace root (benchmarks and reliability runs read and write
/// `docs/` and `tests/data/` there).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
