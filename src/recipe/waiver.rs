//! waiver (in progress)
