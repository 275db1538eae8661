//! Check 4 — Reuse command (`docs/rules.md` §2 Check 4,
//! `docs/contracts.md` §3): the newest authorized `/use <run_id>` or
//! `/reuse-sweep-run [<run_id>]` on the conversation names a run that is a
//! completed sweep on an in-PR commit with unexpired result artifacts.
use super::snapshot::Comment;
use super::{CheckResult, Evidence, Snapshot, command_lines};
use crate::config::RepoConfig;

const N: u8 = 4;

/// A reuse command found in a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReuseCommand {
    pub command: String,
    pub run_id: Option<u64>,
    pub author: String,
    pub association: String,
    pub url: String,
}

impl ReuseCommand {
    pub(crate) fn text(&self) -> String {
        match self.run_id {
            Some(id) => format!("{} {id}", self.command),
            None => self.command.clone(),
        }
    }
}

const AUTHORIZED: [&str; 3] = ["OWNER", "MEMBER", "COLLABORATOR"];
const WRITE_ROLES: [&str; 3] = ["admin", "maintain", "write"];

fn parse_line(line: &str, commands: &[String]) -> Option<(String, Option<u64>)> {
    let mut parts = line.split_whitespace();
    let cmd = parts.next()?;
    if !commands.iter().any(|c| c == cmd) {
        return None;
    }
    let arg = parts.next();
    if parts.next().is_some() {
        return None;
    }
    match (cmd, arg) {
        ("/use", None) => None,
        (_, None) => Some((cmd.to_owned(), None)),
        (_, Some(a)) => a.parse::<u64>().ok().map(|id| (cmd.to_owned(), Some(id))),
    }
}

/// The newest authorized reuse command (the last matching line within the
/// newest authorized comment).
pub fn newest_authorized(comments: &[Comment], commands: &[String]) -> Option<ReuseCommand> {
    let mut sorted: Vec<&Comment> = comments.iter().collect();
    sorted.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    sorted.into_iter().rev().find_map(|c| {
        let assoc_ok = AUTHORIZED.contains(&c.association.as_str());
        let role_ok = c
            .permission
            .as_deref()
            .is_none_or(|p| WRITE_ROLES.contains(&p));
        if !assoc_ok || !role_ok {
            return None;
        }
        command_lines(&c.body)
            .into_iter()
            .filter_map(|(_, l)| parse_line(&l, commands))
            .next_back()
            .map(|(command, run_id)| ReuseCommand {
                command,
                run_id,
                author: c.author.clone(),
                association: c.association.clone(),
                url: c.url.clone(),
            })
    })
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    if !facts.benchmark_affecting(s, cfg) {
        return CheckResult::na(N, "no benchmark-affecting change; no run to pin.");
    }
    let Some(comments) = &s.comments else {
        return CheckResult::review(
            N,
            "conversation comments were not provided (local range); the reuse command cannot be read.",
        );
    };
    let cmds = &s.settings.reuse_commands;
    let Some(cmd) = newest_authorized(comments, cmds) else {
        return CheckResult::fail(
            N,
            format!(
                "No authorized {} command has been posted on this PR.",
                cmds.join(" or ")
            ),
        );
    };
    let link = Evidence::Link {
        url: cmd.url.clone(),
    };
    let Some(run) = &s.pinned_run else {
        return CheckResult::review(
            N,
            format!(
                "{} by @{}: the run's details were not provided.",
                cmd.text(),
                cmd.author
            ),
        )
        .with(link);
    };
    if let Some(id) = cmd.run_id
        && id != run.id
    {
        return CheckResult::review(
            N,
            format!(
                "{} by @{} names run {id}, but the snapshot holds run {}.",
                cmd.text(),
                cmd.author,
                run.id
            ),
        )
        .with(link);
    }
    let id = run.id;
    // The API may name the ref the workflow file was read at (`…yml@main`).
    let file = run.path.split('@').next().unwrap_or("");
    let workflow_ok = file.ends_with(&cfg.sweep.workflow);
    let event_ok = matches!(run.event.as_str(), "pull_request" | "workflow_dispatch");
    if run.status != "completed" || !workflow_ok || !event_ok || !s.has_commit(&run.head_sha) {
        return CheckResult::fail(
            N,
            format!(
                "pinned run {id} is not a completed {} sweep on an in-PR commit (event={}, status={}, head {}).",
                cfg.sweep.workflow,
                run.event,
                run.status,
                super::sha8(&run.head_sha)
            ),
        )
        .with(Evidence::Run { id })
        .with(link);
    }
    let has_results = run.artifacts.iter().any(|a| {
        !a.expired
            && (a.name == "results_bmk"
                || a.name == "eval_results_all"
                || a.name.starts_with("bmk_agentic_"))
    });
    if !has_results {
        return CheckResult::fail(N, format!("run {id} has no unexpired result artifacts."))
            .with(Evidence::Run { id })
            .with(link);
    }
    if !run.labels.is_empty() {
        let roles = &cfg.labels.roles;
        let full = run
            .labels
            .iter()
            .any(|l| cfg.labels.primary.contains(l) && !roles.is_trimmed(l));
        let barred = run
            .labels
            .iter()
            .find(|l| roles.unpinnable().contains(&l.as_str()));
        if !full || barred.is_some() {
            return CheckResult::fail(
                N,
                format!(
                    "run {id} was not swept under a full-sweep primary label without {}/{} (labels: {}).",
                    roles.evals_only,
                    roles.agentx_fast,
                    run.labels.join(", ")
                ),
            )
            .with(Evidence::Run { id })
            .with(link);
        }
    }
    if run.conclusion.as_deref() != Some("success") {
        return CheckResult::review(
            N,
            format!(
                "pinned run is partial: {} by @{} ({}) pins run {id}, conclusion {}.",
                cmd.text(),
                cmd.author,
                cmd.association,
                run.conclusion.as_deref().unwrap_or("none")
            ),
        )
        .with(Evidence::Run { id })
        .with(link);
    }
    CheckResult::pass(
        N,
        format!(
            "{} posted by {} ({}).",
            cmd.text(),
            cmd.author,
            cmd.association
        ),
    )
    .with(link)
    .with(Evidence::Run { id })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ArtifactInfo, ChangedFile, Commit, PinnedRun};

    fn comment(id: u64, author: &str, assoc: &str, body: &str) -> Comment {
        Comment {
            id,
            author: author.into(),
            association: assoc.into(),
            body: body.into(),
            url: format!("https://github.com/o/r/pull/1#issuecomment-{id}"),
            created_at: format!("2026-10-16T00:00:{id:02}Z"),
            permission: None,
        }
    }

    fn snap(comments: Vec<Comment>) -> Snapshot {
        let mut s = Snapshot::default();
        s.files = vec![ChangedFile {
            path: "benchmarks/x.sh".into(),
            status: "modified".into(),
            ..Default::default()
        }];
        s.commits = vec![Commit {
            sha: "a".repeat(40),
            message: String::new(),
        }];
        s.comments = Some(comments);
        s.pinned_run = Some(PinnedRun {
            id: 42,
            attempt: 1,
            head_sha: "a".repeat(40),
            event: "pull_request".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            path: ".github/workflows/run-sweep.yml".into(),
            artifacts: vec![ArtifactInfo {
                name: "results_bmk".into(),
                expired: false,
            }],
            ..Default::default()
        });
        s
    }

    #[test]
    fn newest_authorized_use_passes() {
        let s = snap(vec![
            comment(1, "a", "COLLABORATOR", "/use 41"),
            comment(2, "b", "NONE", "/use 43"),
            comment(3, "nvpohanh", "COLLABORATOR", "text\n/use 42\n"),
        ]);
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(r.reason, "/use 42 posted by nvpohanh (COLLABORATOR).");
    }

    #[test]
    fn unauthorized_or_quoted_commands_fail() {
        let s = snap(vec![
            comment(1, "a", "CONTRIBUTOR", "/use 42"),
            comment(2, "b", "MEMBER", "> /use 42\n```\n/use 42\n```"),
        ]);
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "No authorized /use or /reuse-sweep-run command has been posted on this PR."
        );
    }

    #[test]
    fn partial_run_is_review_and_foreign_commit_fails() {
        let mut s = snap(vec![comment(1, "a", "MEMBER", "/reuse-sweep-run 42")]);
        if let Some(r) = s.pinned_run.as_mut() {
            r.conclusion = Some("cancelled".into());
        }
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Review);
        assert!(r.reason.starts_with("pinned run is partial"));
        if let Some(r) = s.pinned_run.as_mut() {
            r.head_sha = "b".repeat(40);
        }
        assert_eq!(check(&s, &RepoConfig::default()).outcome, Outcome::Fail);
    }
}
