//! script (in progress)
