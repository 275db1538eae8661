//! runners (in progress)
