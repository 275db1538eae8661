#![no_main]
// The body is `sweepgate::fuzzing::pareto_svg`, which tests/it/fuzz_corpora.rs also replays.
libfuzzer_sys::fuzz_target!(|data: &[u8]| sweepgate::fuzzing::pareto_svg(data));
