//! The development commands' own tests: the bounded reliability runs and a
//! quick benchmark run, against real processes (this package's `xtask`
//! binary starts the sandbox and `sweepgate serve`).
mod bench;
mod reliability;
