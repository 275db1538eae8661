//! Newtypes for the identifiers that cross module boundaries.
