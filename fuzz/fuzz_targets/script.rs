#![no_main]
// The body is `sweepgate_core::fuzzing::script`, which tests/it/fuzz_corpora.rs also replays.
libfuzzer_sys::fuzz_target!(|data: &[u8]| sweepgate_core::fuzzing::script(data));
