//! The permission table of `docs/contracts.md` §3, as pure logic over facts
//! fetched through the API at the time of the command.
//!
//! The payload's `author_association` is never enough on its own: every
//! command except `/help` needs the repository role from the collaborator
//! permission API, and `/use` needs both.
use super::parse::{Command, CommandName};
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// A repository role, ordered by what it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RepoRole {
    None,
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

impl RepoRole {
    /// From the collaborator permission API response
    /// (`GET /repos/{owner}/{repo}/collaborators/{username}/permission`).
    ///
    /// `role_name` is authoritative when it is a built-in role. A custom role
    /// reports its own name there, so it falls back to `permission`, the
    /// legacy base (`admin`, `write`, `read`, `none`; `maintain` and `triage`
    /// show there as `write` and `read`). Anything unrecognised is `None`.
    pub fn from_api(permission: &str, role_name: Option<&str>) -> RepoRole {
        role_name
            .and_then(RepoRole::builtin)
            .or_else(|| RepoRole::builtin(permission))
            .unwrap_or(RepoRole::None)
    }

    fn builtin(s: &str) -> Option<RepoRole> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "admin" => RepoRole::Admin,
            "maintain" => RepoRole::Maintain,
            "write" | "push" => RepoRole::Write,
            "triage" => RepoRole::Triage,
            "read" | "pull" => RepoRole::Read,
            "none" => RepoRole::None,
            _ => return None,
        })
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RepoRole::None => "none",
            RepoRole::Read => "read",
            RepoRole::Triage => "triage",
            RepoRole::Write => "write",
            RepoRole::Maintain => "maintain",
            RepoRole::Admin => "admin",
        }
    }
}

impl fmt::Display for RepoRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The comment's `author_association` from the webhook payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthorAssociation {
    Owner,
    Member,
    Collaborator,
    Contributor,
    FirstTimeContributor,
    FirstTimer,
    Mannequin,
    None,
}

impl AuthorAssociation {
    /// Unknown or missing values are `None`, which grants nothing.
    pub fn parse(s: Option<&str>) -> AuthorAssociation {
        match s.unwrap_or("") {
            "OWNER" => AuthorAssociation::Owner,
            "MEMBER" => AuthorAssociation::Member,
            "COLLABORATOR" => AuthorAssociation::Collaborator,
            "CONTRIBUTOR" => AuthorAssociation::Contributor,
            "FIRST_TIME_CONTRIBUTOR" => AuthorAssociation::FirstTimeContributor,
            "FIRST_TIMER" => AuthorAssociation::FirstTimer,
            "MANNEQUIN" => AuthorAssociation::Mannequin,
            _ => AuthorAssociation::None,
        }
    }

    fn is_collaborator(self) -> bool {
        matches!(
            self,
            AuthorAssociation::Owner | AuthorAssociation::Member | AuthorAssociation::Collaborator
        )
    }
}

/// Who issued the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor<'a> {
    pub login: &'a str,
    pub association: AuthorAssociation,
}

/// What the decision needs beyond the actor, all read through the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts<'a> {
    /// The actor's repository role (collaborator permission API).
    pub role: RepoRole,
    /// The pull request's author.
    pub pr_author: Option<&'a str>,
    /// The author of the latest sign-off comment on the PR, if any.
    pub latest_signoff_author: Option<&'a str>,
}

/// Who may use a command: one sentence, shared by refusals and `/help`.
pub fn who_may_use(name: CommandName) -> &'static str {
    match name {
        CommandName::Use | CommandName::ReuseSweepRun => {
            "repository owners, members and collaborators with the write, maintain or admin role"
        }
        CommandName::StageResults => "users with the write, maintain or admin role",
        CommandName::Verify => {
            "users with the write role or above, or the author of the latest sign-off"
        }
        CommandName::AckCheck => "users with the maintain or admin role other than the PR author",
        CommandName::Help => "anyone",
    }
}

/// A refused command; `Display` is the one-line reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("@{login} `{command}` may be used only by {who}; {why}.", who = who_may_use(*.command))]
pub struct Refusal {
    pub command: CommandName,
    pub login: String,
    /// The fact that failed, e.g. "your repository role is read".
    pub why: String,
}

fn same_login(a: &str, b: Option<&str>) -> bool {
    b.is_some_and(|b| a.eq_ignore_ascii_case(b))
}

/// The permission table (`docs/contracts.md` §3).
pub fn authorize(cmd: &Command, actor: Actor<'_>, facts: Facts<'_>) -> Result<(), Refusal> {
    let name = cmd.name();
    let refuse = |why: String| {
        Err(Refusal {
            command: name,
            login: actor.login.to_string(),
            why,
        })
    };
    let role = facts.role;
    let role_why = || format!("your repository role is {role}");
    match name {
        CommandName::Help => Ok(()),
        CommandName::Use | CommandName::ReuseSweepRun => {
            if !actor.association.is_collaborator() {
                refuse("you are not an owner, member or collaborator of the repository".into())
            } else if role < RepoRole::Write {
                refuse(role_why())
            } else {
                Ok(())
            }
        }
        CommandName::StageResults => {
            if role >= RepoRole::Write {
                Ok(())
            } else {
                refuse(role_why())
            }
        }
        CommandName::Verify => {
            if role >= RepoRole::Write || same_login(actor.login, facts.latest_signoff_author) {
                Ok(())
            } else {
                refuse(format!(
                    "{}, and you did not write the latest sign-off",
                    role_why()
                ))
            }
        }
        CommandName::AckCheck => {
            if role < RepoRole::Maintain {
                refuse(role_why())
            } else if same_login(actor.login, facts.pr_author) {
                refuse("you are the author of this PR".into())
            } else {
                Ok(())
            }
        }
    }
}

/// Whether [`authorize`] needs the actor's repository role (so `/help` costs
/// no API call).
pub fn needs_role(cmd: &Command) -> bool {
    cmd.name() != CommandName::Help
}

/// The future returned by [`PermissionSource::role_of`].
pub type RoleFuture<'a, E> = Pin<Box<dyn Future<Output = Result<RepoRole, E>> + Send + 'a>>;

/// Where repository roles come from (the GitHub client in production).
/// Object-safe, so handlers can hold a `&dyn PermissionSource<Error = E>`.
pub trait PermissionSource: Send + Sync {
    type Error: std::error::Error + Send + Sync + 'static;

    /// The role of `user` in `owner/repo`, read at the time of the call.
    fn role_of<'a>(
        &'a self,
        owner: &'a str,
        repo: &'a str,
        user: &'a str,
    ) -> RoleFuture<'a, Self::Error>;
}

/// Fetches the role when needed and applies the table. An API error is
/// returned as `Err`; the caller must treat it as a refusal, never fall
/// back to the payload.
pub async fn authorize_with<S: PermissionSource + ?Sized>(
    source: &S,
    owner: &str,
    repo: &str,
    cmd: &Command,
    actor: Actor<'_>,
    pr_author: Option<&str>,
    latest_signoff_author: Option<&str>,
) -> Result<Result<(), Refusal>, S::Error> {
    let role = if needs_role(cmd) {
        source.role_of(owner, repo, actor.login).await?
    } else {
        RepoRole::None
    };
    let facts = Facts {
        role,
        pr_author,
        latest_signoff_author,
    };
    Ok(authorize(cmd, actor, facts))
}

/// Roles from a fixed table (case-insensitive logins); everyone else has
/// `RepoRole::None`. For the command-line source and tests.
#[derive(Debug, Clone, Default)]
pub struct FixedRoles {
    roles: HashMap<String, RepoRole>,
}

impl FixedRoles {
    pub fn new<'a>(roles: impl IntoIterator<Item = (&'a str, RepoRole)>) -> Self {
        FixedRoles {
            roles: roles
                .into_iter()
                .map(|(u, r)| (u.to_ascii_lowercase(), r))
                .collect(),
        }
    }
}

impl PermissionSource for FixedRoles {
    type Error = Infallible;

    fn role_of<'a>(
        &'a self,
        _owner: &'a str,
        _repo: &'a str,
        user: &'a str,
    ) -> RoleFuture<'a, Infallible> {
        let role = self
            .roles
            .get(&user.to_ascii_lowercase())
            .copied()
            .unwrap_or(RepoRole::None);
        Box::pin(async move { Ok(role) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::parse::CheckNumber;
    use crate::ids::RunId;

    fn actor(login: &str, assoc: &str) -> Actor<'static> {
        Actor {
            login: Box::leak(login.to_string().into_boxed_str()),
            association: AuthorAssociation::parse(Some(assoc)),
        }
    }

    fn facts(role: RepoRole) -> Facts<'static> {
        Facts {
            role,
            pr_author: Some("author"),
            latest_signoff_author: Some("signer"),
        }
    }

    #[test]
    fn role_from_api() {
        assert_eq!(
            RepoRole::from_api("write", Some("maintain")),
            RepoRole::Maintain
        );
        assert_eq!(RepoRole::from_api("read", Some("triage")), RepoRole::Triage);
        assert_eq!(
            RepoRole::from_api("write", Some("release-manager")),
            RepoRole::Write
        );
        assert_eq!(RepoRole::from_api("admin", None), RepoRole::Admin);
        assert_eq!(RepoRole::from_api("weird", Some("custom")), RepoRole::None);
        assert_eq!(RepoRole::from_api("none", Some("none")), RepoRole::None);
    }

    #[test]
    fn use_needs_association_and_role() {
        let cmd = Command::Use { run: RunId(1) };
        let collab = actor("nvpohanh", "COLLABORATOR");
        assert!(authorize(&cmd, collab, facts(RepoRole::Write)).is_ok());
        // The payload claims COLLABORATOR, the API says read: refused.
        let r = authorize(&cmd, collab, facts(RepoRole::Read)).unwrap_err();
        assert_eq!(
            r.to_string(),
            "@nvpohanh `/use` may be used only by repository owners, members and collaborators with the write, maintain or admin role; your repository role is read."
        );
        // Write role but not associated (e.g. via a custom role on a fork org).
        assert!(authorize(&cmd, actor("x", "CONTRIBUTOR"), facts(RepoRole::Admin)).is_err());
        assert!(authorize(&cmd, actor("x", "bogus"), facts(RepoRole::Admin)).is_err());
    }

    #[test]
    fn ack_check_excludes_the_author() {
        let cmd = Command::AckCheck {
            check: CheckNumber::new(3).unwrap(),
            reason: "ok".into(),
        };
        assert!(authorize(&cmd, actor("m", "MEMBER"), facts(RepoRole::Maintain)).is_ok());
        assert!(authorize(&cmd, actor("Author", "OWNER"), facts(RepoRole::Admin)).is_err());
        assert!(authorize(&cmd, actor("m", "OWNER"), facts(RepoRole::Write)).is_err());
    }

    #[test]
    fn source_is_asked_only_when_needed() {
        futures::executor::block_on(source_is_asked_only_when_needed_async());
    }

    async fn source_is_asked_only_when_needed_async() {
        let roles = FixedRoles::new([("Signer", RepoRole::Read)]);
        let dyn_src: &dyn PermissionSource<Error = Infallible> = &roles;
        let a = actor("signer", "NONE");
        let ok = authorize_with(dyn_src, "o", "r", &Command::Verify, a, None, Some("signer")).await;
        assert_eq!(ok, Ok(Ok(())));
        let help = authorize_with(
            &roles,
            "o",
            "r",
            &Command::Help,
            actor("z", "NONE"),
            None,
            None,
        )
        .await;
        assert_eq!(help, Ok(Ok(())));
    }
}
