//! sweepgate's end-to-end and integration tests, in one binary (one link
//! instead of one per file). Each module reads like the transcripts it
//! checks; `common` holds the shared harness (databases on both back ends,
//! the transcript world) and `lint_support` the lint scenarios.
mod bad_input;
mod commands_grammar;
mod common;
mod dashboard;
mod deploy_manifests;
mod fuzz_corpora;
mod github_client;
mod github_source;
mod intake;
mod launcher_fixtures;
mod lint_cli;
mod lint_rules;
mod lint_seeds;
mod lint_summary;
mod lint_support;
mod matrix_cases;
mod matrix_examples;
mod matrix_jobs;
mod matrix_parse;
mod queue;
mod recipe_changelog;
mod recipe_codeowners;
mod recipe_golden;
mod recipe_models_md;
mod recipe_waiver_thresholds;
mod reliability_faults;
mod repo_git;
mod sandbox_actions;
mod sandbox_deliveries;
mod sandbox_faults;
mod sandbox_http;
mod sandbox_octocrab;
mod script_props;
mod script_seeds;
mod security;
mod serve_process;
mod transcript_config;
mod transcript_dispatch;
mod transcript_guide;
mod transcript_lint;
mod transcript_sweeps;
mod transcript_verify;
mod verify_cli;
mod verify_seeds;
