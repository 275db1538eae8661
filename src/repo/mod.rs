//! Reading a benchmark repository at a revision: one trait, a local git implementation (and a GitHub one in `crate::github`).
