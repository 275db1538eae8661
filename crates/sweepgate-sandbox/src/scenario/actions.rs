//! GitHub Actions: workflows, runs, jobs, re-runs, artifacts, and the
//! dispatches received.
use crate::{RepositoryDispatch, RunSpec, Sandbox, SandboxError, WorkflowDispatch, key};

impl Sandbox {
    /// Registers a workflow file (`run-sweep.yml`) named `name`.
    pub fn add_workflow(
        &self,
        owner: &str,
        repo: &str,
        file: &str,
        name: &str,
    ) -> Result<u64, SandboxError> {
        self.world().add_workflow(&key(owner, repo), file, name)
    }

    /// Sets the workflow's `run-name` (with `${{ inputs.x }}`) and whether
    /// it has a `workflow_dispatch` trigger.
    pub fn configure_workflow(
        &self,
        owner: &str,
        repo: &str,
        file: &str,
        run_name: Option<&str>,
        dispatchable: bool,
    ) -> Result<(), SandboxError> {
        let mut w = self.world();
        let k = key(owner, repo);
        let id = w.find_workflow(&k, file)?;
        let wf = w
            .repo_mut(&k)?
            .workflows
            .get_mut(&id)
            .ok_or_else(SandboxError::not_found)?;
        wf.run_name = run_name.map(str::to_string);
        wf.dispatchable = dispatchable;
        Ok(())
    }

    pub fn add_workflow_run(&self, spec: RunSpec) -> Result<u64, SandboxError> {
        self.world().create_run(spec)
    }

    pub fn start_run(&self, run_id: u64) -> Result<(), SandboxError> {
        self.world().set_run_state(run_id, "in_progress", None)
    }

    pub fn complete_run(&self, run_id: u64, conclusion: &str) -> Result<(), SandboxError> {
        self.world()
            .set_run_state(run_id, "completed", Some(conclusion))
    }

    /// A job in the run's current attempt (with its Actions check run).
    pub fn add_job(
        &self,
        run_id: u64,
        name: &str,
        conclusion: Option<&str>,
    ) -> Result<u64, SandboxError> {
        let status = if conclusion.is_some() {
            "completed"
        } else {
            "queued"
        };
        self.world()
            .add_job(run_id, name, status, conclusion, vec!["self-hosted".into()])
    }

    pub fn set_job(
        &self,
        job_id: u64,
        status: &str,
        conclusion: Option<&str>,
    ) -> Result<(), SandboxError> {
        self.world().set_job_state(job_id, status, conclusion)
    }

    /// Re-runs the failed jobs (or all) as a new attempt, like the UI.
    pub fn rerun(&self, run_id: u64, all: bool, actor: &str) -> Result<(), SandboxError> {
        let mut w = self.world();
        let repo = w
            .runs
            .get(&run_id)
            .map(|r| r.repo.clone())
            .ok_or_else(SandboxError::not_found)?;
        w.rerun(&repo, run_id, all, actor)
    }

    /// An artifact of the run holding `files` (zipped), kept 90 days.
    pub fn add_artifact<P, C>(
        &self,
        run_id: u64,
        name: &str,
        files: impl IntoIterator<Item = (P, C)>,
    ) -> Result<u64, SandboxError>
    where
        P: Into<String>,
        C: Into<Vec<u8>>,
    {
        let files: Vec<(String, Vec<u8>)> = files
            .into_iter()
            .map(|(p, c)| (p.into(), c.into()))
            .collect();
        self.world().add_artifact(run_id, name, &files, 90)
    }

    pub fn expire_artifact(&self, artifact_id: u64) -> Result<(), SandboxError> {
        let mut w = self.world();
        let a = w
            .artifacts
            .get_mut(&artifact_id)
            .ok_or_else(SandboxError::not_found)?;
        a.expired = true;
        Ok(())
    }

    /// The workflow dispatches received, oldest first.
    pub fn workflow_dispatches(&self) -> Vec<WorkflowDispatch> {
        self.world().workflow_dispatches.clone()
    }

    /// The repository dispatches received, oldest first.
    pub fn repository_dispatches(&self) -> Vec<RepositoryDispatch> {
        self.world().repository_dispatches.clone()
    }

    /// `(status, conclusion)` of a run.
    pub fn run_state(&self, run_id: u64) -> Option<(String, Option<String>)> {
        self.world()
            .runs
            .get(&run_id)
            .map(|r| (r.status.clone(), r.conclusion.clone()))
    }
}
