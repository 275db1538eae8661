//! launcher (in progress)
