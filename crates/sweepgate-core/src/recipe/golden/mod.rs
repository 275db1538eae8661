//! `golden_al_distribution/*.yaml`: the committed acceptance-length (AL)
//! curves, their lookup, and how each engine encodes a simulated AL.
//!
//! A curve file has one top-level key (a model *slug*, not the prefix),
//! under it `thinking_on` and optionally `thinking_off`, under those draft
//! lengths 1–8 mapping to an AL with two decimals. The model prefix, draft
//! method and selector (DSpark draft sampling, draft-head variant such as
//! GQA, checkpoint) come from the file name and its header comments.

mod curve;
mod decode;
mod lookup;
pub(crate) mod served;

pub use curve::{Cell, Curve, DraftMethod, DraftSampling, ModeCurve, ThinkingMode};
// Used from outside this module only by the fuzz bodies (`crate::fuzzing`).
#[cfg(feature = "fuzzing")]
pub(crate) use curve::{cell_loc, parse};
pub use decode::{
    Decoded, EncodingProblem, Engine, Injector, LengthSource, Simulated, ThinkingConflict,
    VllmSpecConfig, atom_args, default_injectors, resolve_thinking, runner_injected, sglang_env,
    thinking_signal, trtllm_env,
};
pub use lookup::{GoldenSet, Lookup, NoCell, NoCurve, Query};

/// A curve file shared by the unit tests of `curve` and `lookup`.
#[cfg(test)]
const MTP: &str =
    "# Source GitHub Actions run: https://x/runs/1\nm:\n  thinking_on:\n    1: 1.5\n    3: 2.5\n";
