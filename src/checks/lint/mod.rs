//! Recipe lint: the careful reviewer's static findings, one file per rule (in progress).
