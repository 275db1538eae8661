//! Accounts, repositories and their content: forks, branches, commits.
use crate::state::AccountKind;
use crate::{Change, Sandbox, SandboxError, key};

impl Sandbox {
    pub fn add_org(&self, login: &str) {
        self.world()
            .account_with_kind(login, AccountKind::Organization);
    }

    pub fn add_user(&self, login: &str) {
        self.world().account(login);
    }

    /// A repository with one initial commit holding `files`; returns its sha.
    pub fn add_repo<P, C>(
        &self,
        owner: &str,
        name: &str,
        default_branch: &str,
        files: impl IntoIterator<Item = (P, C)>,
    ) -> Result<String, SandboxError>
    where
        P: Into<String>,
        C: Into<Vec<u8>>,
    {
        let files = files
            .into_iter()
            .map(|(p, c)| (p.into(), c.into()))
            .collect();
        self.world().add_repo(owner, name, default_branch, files)
    }

    /// Makes a repository private (invisible to installations elsewhere).
    pub fn set_private(&self, owner: &str, repo: &str, private: bool) -> Result<(), SandboxError> {
        self.world().repo_mut(&key(owner, repo))?.private = private;
        Ok(())
    }

    /// A fork of `owner/repo` under `fork_owner` (for fork PRs).
    pub fn fork(&self, owner: &str, repo: &str, fork_owner: &str) -> Result<(), SandboxError> {
        self.world()
            .add_fork(&key(owner, repo), fork_owner)
            .map(|_| ())
    }

    pub fn create_branch(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        from: &str,
    ) -> Result<String, SandboxError> {
        self.world().create_branch(&key(owner, repo), branch, from)
    }

    /// Commits on `branch` (created from the default branch if missing),
    /// authored by the repository owner; sends `synchronize` to open PRs
    /// with that head. Returns the new sha.
    pub fn commit(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        changes: &[Change],
        message: &str,
    ) -> Result<String, SandboxError> {
        self.commit_as(owner, repo, branch, changes, message, owner)
    }

    pub fn commit_as(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        changes: &[Change],
        message: &str,
        author: &str,
    ) -> Result<String, SandboxError> {
        self.world()
            .commit_on(&key(owner, repo), branch, changes, message, author)
    }

    pub fn branch_sha(&self, owner: &str, repo: &str, branch: &str) -> Option<String> {
        self.world()
            .repos
            .get(&key(owner, repo))?
            .branches
            .get(branch)
            .cloned()
    }

    /// The bytes of `path` at `reference`, as a test oracle.
    pub fn file_at(&self, owner: &str, repo: &str, reference: &str, path: &str) -> Option<Vec<u8>> {
        let w = self.world();
        let sha = w.resolve_ref(&key(owner, repo), reference).ok()?;
        let blob = w.objects.commit(&sha)?.files.get(path)?.clone();
        w.objects.blob(&blob).map(|b| b.as_ref().clone())
    }
}
