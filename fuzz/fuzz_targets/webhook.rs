#![no_main]
// The body is `sweepgate::fuzzing::webhook`, which tests/it/fuzz_corpora.rs also replays.
libfuzzer_sys::fuzz_target!(|data: &[u8]| sweepgate::fuzzing::webhook(data));
