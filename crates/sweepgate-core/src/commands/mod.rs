//! The comment grammar and the permission table (`docs/contracts.md` §3).
//!
//! - [`parse_comment`]: the command lines of a comment body, with their line
//!   and byte offset, each a [`Command`] or a [`CommandError`] whose text is
//!   the reply (see `parse.rs` for the grammar decisions and `markdown.rs`
//!   for where a command may stand);
//! - [`new_in_edit`]: the command lines an edit added;
//! - [`authorize`] / [`authorize_with`]: the permission table over facts read
//!   through the API ([`PermissionSource`]);
//! - [`help_entries`]: structured data for the `/help` template.
//!
//! This module posts nothing; handlers do.
pub(crate) mod auth;
pub(crate) mod edit;
pub(crate) mod help;
pub(crate) mod markdown;
pub(crate) mod parse;

pub use auth::{
    Actor, AuthorAssociation, Facts, FixedRoles, PermissionSource, Refusal, RepoRole, RoleFuture,
    authorize, authorize_with, needs_role, who_may_use,
};
pub use edit::new_in_edit;
pub use help::{HelpEntry, help_entries};
pub use parse::{
    CheckNumber, Command, CommandError, CommandName, MAX_CHECK, ParsedLine, commands,
    parse_comment, parse_line,
};
