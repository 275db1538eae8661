//! master (in progress)
