//! Sweeps: which runs count, the facts of a run, staging requests and the
//! result links. Pure: handlers fetch the facts through the GitHub client.
pub mod curves;
pub mod dispatch;
pub mod gate;
pub mod results;
pub mod runs;
pub mod staging;
