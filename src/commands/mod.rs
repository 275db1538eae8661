//! The comment grammar and the permission table (`CONTRACTS.md` §3).
