//! golden (in progress)
