//! thresholds (in progress)
