//! signoff (in progress)
