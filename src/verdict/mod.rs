//! verdict (in progress)
