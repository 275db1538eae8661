//! Who may do what: a collaborator's permission on a repository and a
//! user's membership of an organisation's team.
use super::{enc, repo_path, seg_enc};
use crate::github::{Api, GitHubError};
use serde::Deserialize;
use sweepgate_core::checks::snapshot::Membership;
use sweepgate_core::ids::RepoName;

/// The collaborator permission API's answer.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Permission {
    #[serde(default)]
    pub permission: String,
    #[serde(default)]
    pub role_name: Option<String>,
}

#[derive(Deserialize)]
struct MembershipState {
    #[serde(default)]
    state: String,
}

impl Api {
    pub(crate) async fn collaborator_permission(
        &self,
        repo: &RepoName,
        user: &str,
    ) -> Result<Option<Permission>, GitHubError> {
        let path = format!(
            "{}/collaborators/{}/permission",
            repo_path(repo)?,
            enc(user)
        );
        self.get_opt(&path).await
    }

    /// A user's membership of `org/team`: active is a member, pending
    /// is not yet one; 403 and 404 mean the API would not tell.
    pub(crate) async fn team_membership(
        &self,
        org: &str,
        team: &str,
        user: &str,
    ) -> Result<Membership, GitHubError> {
        let path = format!(
            "/orgs/{}/teams/{}/memberships/{}",
            seg_enc(org),
            seg_enc(team),
            seg_enc(user)
        );
        match self.get::<MembershipState>(&path).await {
            Ok(m) if m.state == "active" => Ok(Membership::Member),
            Ok(_) => Ok(Membership::NotMember),
            Err(e) if matches!(e.status(), Some(403 | 404)) => Ok(Membership::Unknown {
                status: e.status().map(|s| s.to_string()).unwrap_or_default(),
            }),
            Err(e) => Err(e),
        }
    }
}
