//! changelog (in progress)
