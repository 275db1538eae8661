//! The PR snapshot read from GitHub (the server and `sweepgate verify`),
//! built once at the pinned head SHA: the same trees the command line
//! reads from a clone, plus everything only GitHub has (commits with
//! messages, the latest check runs per commit, comments, reviews, review
//! comments, roles, team memberships, the pinned run with its artifacts,
//! upstream recipe PRs, acknowledgements).
use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDate;
use futures::{StreamExt, TryStreamExt};

use super::LocalError;
use super::local::{GithubFacts, PolicyAt, read_trees, snapshot_from_trees};
use crate::events::HandlerError;
use crate::github::{Api, GitHubError, GitHubSource};
use crate::handlers::authored::Authored;
use crate::repo::RepoSource;
use crate::store::SweepRow;
use sweepgate_core::checks::c03_upstream;
use sweepgate_core::checks::c04_reuse::newest_authorized;
use sweepgate_core::checks::snapshot::{
    ArtifactInfo, CheckRun, Comment, PinnedRun, PullRequest, Signoff, SignoffKind, Snapshot,
    UpstreamPr,
};
use sweepgate_core::checks::{command_lines, verifier};
use sweepgate_core::config::RepoConfig;
use sweepgate_core::ids::{PrNumber, RepoName, RunId};
use sweepgate_core::recipe::codeowners::{self, Owner};
use sweepgate_core::sweep::runs::{labels_at, tested_head};

/// What to assess.
pub(crate) struct Request<'a> {
    pub repo: &'a RepoName,
    pub pr: PrNumber,
    /// The head SHA pinned when the trigger arrived.
    pub head_sha: &'a str,
    pub signoff: Signoff,
    /// The run the store has pinned for the PR (newest authorized `/use`).
    pub pinned_run: Option<RunId>,
    pub cfg: &'a RepoConfig,
    pub default_branch: &'a str,
    pub today: NaiveDate,
    /// The sweeps sweepgate dispatched for the PR: their runs ran on the
    /// default branch, and each tested its sweep's head.
    pub swept: &'a [SweepRow],
    /// What the comments' authors wrote themselves (foreign edits dropped).
    pub authored: &'a Authored,
}

/// The check runs of the completed dispatched sweeps on the assessed
/// commits, by the PR commit each sweep tested: GitHub files them under
/// the default-branch commit the run checked out.
async fn dispatched_check_runs(
    api: &Api,
    repo: &RepoName,
    swept: &[SweepRow],
    shas: &BTreeSet<String>,
) -> Result<Vec<(String, Vec<CheckRun>)>, GitHubError> {
    let mut out = Vec::new();
    for s in swept.iter().filter(|s| shas.contains(&s.head_sha)) {
        let Some(run_id) = s.run_id else { continue };
        let Some(run) = api.workflow_run(repo, RunId(run_id as u64)).await? else {
            continue;
        };
        let runs: Vec<CheckRun> = api
            .latest_check_runs(repo, &run.head_sha)
            .await?
            .into_iter()
            .filter(|c| {
                c.details_url
                    .as_deref()
                    .and_then(sweepgate_core::checks::c01_sweep::run_id_of)
                    == Some(run_id as u64)
            })
            .collect();
        out.push((s.head_sha.clone(), runs));
    }
    Ok(out)
}

fn tree_error(e: LocalError) -> HandlerError {
    match e {
        // A policy file on the default branch that does not parse: retrying
        // cannot help; the message names the file.
        LocalError::Parse(file, msg) => HandlerError::Permanent(format!("{file}: {msg}")),
        other => HandlerError::Transient {
            retry_after: match &other {
                LocalError::Repo(e) => e.retry_after(),
                _ => None,
            },
            message: other.to_string(),
        },
    }
}

/// The role the collaborator permission API reports (`role_name` when it
/// is given), `none` for a user it does not know.
async fn role_of(api: &Api, repo: &RepoName, user: &str) -> Result<String, GitHubError> {
    Ok(match api.collaborator_permission(repo, user).await? {
        Some(p) => p
            .role_name
            .filter(|r| !r.is_empty())
            .unwrap_or(p.permission),
        None => "none".into(),
    })
}

/// Whether a comment carries a command whose author's role matters to a
/// check (a reuse command for Check 4, `/ack-check` for the acks).
fn needs_role(body: &str, reuse: &[String]) -> bool {
    command_lines(body).into_iter().any(|(_, l)| {
        let word = l.split_whitespace().next().unwrap_or("");
        word == "/ack-check" || reuse.iter().any(|c| c == word)
    })
}

/// The newest sign-off among conversation comments, reviews and review
/// comments, with the commit a review names.
pub(crate) fn latest_signoff(
    comments: &[Comment],
    reviews: &[(Comment, Option<String>)],
    review_comments: &[(Comment, Option<String>)],
) -> Option<(Signoff, Option<String>)> {
    let as_signoff = |c: &Comment, kind: SignoffKind| Signoff {
        author: c.author.clone(),
        kind,
        body: c.body.clone(),
        url: c.url.clone(),
        created_at: c.created_at.clone(),
    };
    let mut all: Vec<(Signoff, Option<String>)> = comments
        .iter()
        .map(|c| (as_signoff(c, SignoffKind::IssueComment), None))
        .chain(
            reviews
                .iter()
                .map(|(c, sha)| (as_signoff(c, SignoffKind::Review), sha.clone())),
        )
        .chain(
            review_comments
                .iter()
                .map(|(c, sha)| (as_signoff(c, SignoffKind::ReviewComment), sha.clone())),
        )
        .filter(|(s, _)| {
            sweepgate_core::signoff::is_signoff(&s.body) && !s.author.ends_with("[bot]")
        })
        .collect();
    all.sort_by(|a, b| a.0.created_at.cmp(&b.0.created_at));
    all.pop()
}

/// Everything GitHub says about the PR's conversation.
pub(crate) struct Conversation {
    pub comments: Vec<Comment>,
    pub reviews: Vec<(Comment, Option<String>)>,
    pub review_comments: Vec<(Comment, Option<String>)>,
}

impl Conversation {
    /// The newest sign-off whose body is as its author wrote it (someone
    /// else's edit is no sign-off; `docs/contracts.md` §3).
    pub(crate) fn latest_vouched_signoff(
        &self,
        authored: &Authored,
    ) -> Option<(Signoff, Option<String>)> {
        let ok = |c: &Comment| authored.vouches_for_signoff(&c.url, &c.body);
        let comments: Vec<Comment> = self.comments.iter().filter(|c| ok(c)).cloned().collect();
        let pick = |v: &[(Comment, Option<String>)]| -> Vec<(Comment, Option<String>)> {
            v.iter().filter(|(c, _)| ok(c)).cloned().collect()
        };
        latest_signoff(
            &comments,
            &pick(&self.reviews),
            &pick(&self.review_comments),
        )
    }
}

/// The PR's conversation; command lines someone other than a comment's
/// author added to it are dropped.
pub(crate) async fn conversation(
    api: &Api,
    repo: &RepoName,
    pr: PrNumber,
    authored: &Authored,
) -> Result<Conversation, GitHubError> {
    let comments = api
        .issue_comments(repo, pr)
        .await?
        .into_iter()
        .map(|c| {
            let mut comment = Comment {
                id: c.id.0,
                author: c.author().to_owned(),
                association: c.author_association.clone().unwrap_or_default(),
                body: c.body().to_owned(),
                url: c.html_url.clone().unwrap_or_default(),
                created_at: c.created_at.clone().unwrap_or_default(),
                permission: None,
            };
            authored.strip_foreign_commands(&mut comment, c.edited());
            comment
        })
        .collect();
    Ok(Conversation {
        comments,
        reviews: api.reviews(repo, pr).await?,
        review_comments: api.review_comments(repo, pr).await?,
    })
}

/// The teams the CODEOWNERS file names, as `org/team`.
fn codeowner_teams(policy: &BTreeMap<String, String>, cfg: &RepoConfig) -> Vec<(String, String)> {
    let Some(text) = policy.get(&cfg.paths.codeowners) else {
        return Vec::new();
    };
    let Ok(co) = codeowners::parse(&cfg.paths.codeowners, text.as_bytes()) else {
        return Vec::new();
    };
    let mut teams: BTreeSet<(String, String)> = BTreeSet::new();
    for r in &co.rules {
        for o in &r.owners {
            if let Owner::Team { org, team } = o {
                teams.insert((org.clone(), team.clone()));
            }
        }
    }
    if !cfg.policy.core_team.is_empty()
        && let Some(Owner::Team { org, team }) = Owner::parse(&cfg.policy.core_team)
    {
        teams.insert((org, team));
    }
    teams.into_iter().collect()
}

/// The pinned run: the store's pin, else the newest authorized reuse
/// command's run, else (for `/reuse-sweep-run` without an id) the newest
/// completed sweep run on an in-PR commit.
async fn find_run(
    api: &Api,
    req: &Request<'_>,
    comments: &[Comment],
    reuse: &[String],
    head_branch: &str,
    commits: &BTreeSet<String>,
) -> Result<Option<sweepgate_core::sweep::runs::RunFacts>, GitHubError> {
    let newest = newest_authorized(comments, reuse);
    let named = req
        .pinned_run
        .or_else(|| newest.as_ref().and_then(|c| c.run_id).map(RunId));
    if let Some(id) = named {
        let mut run = api.workflow_run(req.repo, id).await?;
        if let Some(r) = run.as_mut() {
            tested_head(r, req.swept.iter().map(|s| (s.run_id, s.head_sha.as_str())));
        }
        return Ok(run);
    }
    if newest.is_none() {
        return Ok(None);
    }
    let runs = crate::handlers::sweeps::reuse::completed_sweep_runs(
        api,
        req.repo,
        &req.cfg.sweep.workflow,
        head_branch,
        req.swept,
    )
    .await?;
    Ok(runs.into_iter().find(|r| commits.contains(&r.head_sha)))
}

/// Builds the snapshot.
pub(crate) async fn build(api: &Api, req: Request<'_>) -> Result<Snapshot, HandlerError> {
    let repo = req.repo;
    let pull = api.pull(repo, req.pr).await?;
    let src = GitHubSource::new(api.clone(), repo.clone())?;
    let policy_sha = src
        .resolve(req.default_branch)
        .await
        .map_err(|e| tree_error(LocalError::Repo(e)))?;
    let (trees, cfg) = read_trees(
        &src,
        &pull.base.name,
        req.head_sha,
        PolicyAt {
            rev: Some(&policy_sha),
            cfg: Some(req.cfg.clone()),
        },
    )
    .await
    .map_err(tree_error)?;
    let settings = cfg.verifier;

    // Commits up to the pinned head (a later push is not assessed).
    let mut commits = api.pr_commits(repo, req.pr).await?;
    if let Some(i) = commits.iter().position(|c| c.sha == req.head_sha) {
        commits.truncate(i + 1);
    }
    let shas: BTreeSet<String> = commits.iter().map(|c| c.sha.clone()).collect();
    let mut check_runs: BTreeMap<String, Vec<CheckRun>> = futures::stream::iter(shas.clone())
        .map(|sha| async move {
            let runs = api.latest_check_runs(repo, &sha).await?;
            Ok::<_, GitHubError>((sha, runs))
        })
        .buffered(8)
        .try_collect()
        .await?;
    // A dispatched sweep's jobs count for the commit it tested; its check
    // run replaces one of the same name there (the newer run wins).
    for (sha, runs) in dispatched_check_runs(api, repo, req.swept, &shas).await? {
        let list = check_runs.entry(sha).or_default();
        list.retain(|c| !runs.iter().any(|r| r.name == c.name));
        list.extend(runs);
    }

    let conv = conversation(api, repo, req.pr, req.authored).await?;
    let mut req = req;
    if req.signoff.created_at.is_empty() {
        // A review's payload carries no time; its listing does.
        let same = |c: &Comment| !c.url.is_empty() && c.url == req.signoff.url;
        if let Some(c) = conv
            .reviews
            .iter()
            .chain(conv.review_comments.iter())
            .map(|(c, _)| c)
            .chain(conv.comments.iter())
            .find(|c| same(c))
        {
            req.signoff.created_at = c.created_at.clone();
        }
    }
    let mut comments = conv.comments;
    let mut roles: HashMap<String, String> = HashMap::new();
    let reuse = settings.reuse_commands.clone();
    for c in comments.iter_mut() {
        if !needs_role(&c.body, &reuse) {
            continue;
        }
        let key = c.author.to_ascii_lowercase();
        if !roles.contains_key(&key) {
            roles.insert(key.clone(), role_of(api, repo, &c.author).await?);
        }
        c.permission = roles.get(&key).cloned();
    }
    let signer = req.signoff.author.clone();
    let signer_permission = Some(role_of(api, repo, &signer).await?);
    let mut team_memberships = BTreeMap::new();
    for (org, team) in codeowner_teams(&trees.policy, req.cfg) {
        let m = api.team_membership(&org, &team, &signer).await?;
        team_memberships.insert(format!("{org}/{team}"), m);
    }

    // The pinned run and what it produced.
    let mut notes = Vec::new();
    let run = find_run(api, &req, &comments, &reuse, &pull.head.name, &shas).await?;
    let (pinned_run, artifacts, run_files) = match run {
        None => (None, None, None),
        Some(run) => {
            let list = api.run_artifact_ids(repo, run.id).await?;
            let timeline = api.label_events(repo, req.pr).await?;
            let rows = super::artifacts::read_run_artifacts(api, repo, &list, &mut notes).await?;
            let mut run_files = BTreeMap::new();
            for m in &req.cfg.paths.master_configs {
                if let Some(b) = crate::repo::read_optional(&src, &run.head_sha, m)
                    .await
                    .map_err(|e| tree_error(LocalError::Repo(e)))?
                {
                    run_files.insert(m.clone(), String::from_utf8_lossy(&b).into_owned());
                }
            }
            let pinned = PinnedRun {
                id: run.id.0,
                attempt: u32::try_from(run.run_attempt).unwrap_or(u32::MAX),
                head_sha: run.head_sha.clone(),
                event: run.event.clone(),
                status: run.status.clone(),
                conclusion: run.conclusion.clone(),
                // `…/run-sweep.yml@<ref>` names the file and the ref it was read at.
                path: run
                    .path
                    .as_deref()
                    .and_then(|p| p.split('@').next())
                    .unwrap_or("")
                    .to_owned(),
                created_at: run
                    .created_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                labels: labels_at(&timeline, run.created_at),
                artifacts: list
                    .iter()
                    .map(|a| ArtifactInfo {
                        name: a.name.clone(),
                        expired: a.expired,
                    })
                    .collect(),
                url: run.html_url.clone(),
            };
            (Some(pinned), Some(rows), Some(run_files))
        }
    };

    // Upstream recipe PRs the sign-off links; one the API will not show
    // stays unread (Check 3 says so).
    let detail = sweepgate_core::signoff::detail_section(&req.signoff.body);
    let (links, _pages) = c03_upstream::links(&detail, req.cfg);
    let mut upstream: Vec<UpstreamPr> = Vec::new();
    // At most so many lookups per sign-off; the verdict says when links
    // were left unread (`assess`).
    for (r, n) in links.into_iter().take(req.cfg.signoff.upstream_links) {
        let Some((o, n_)) = r.split_once('/') else {
            continue;
        };
        let up_repo = RepoName::new(o, n_);
        match api.upstream_pull(&up_repo, n).await {
            Ok(Some(p)) => upstream.push(p),
            Ok(None) => {}
            Err(e) if matches!(e.status(), Some(401 | 403 | 404 | 451)) => {}
            Err(e) => return Err(e.into()),
        }
    }

    let author = pull
        .user
        .as_ref()
        .map(|u| u.login.clone())
        .unwrap_or_default();
    let (acks, _refused) = verifier::parse_acks(&comments, &author);
    let split = |v: Vec<(Comment, Option<String>)>| v.into_iter().map(|(c, _)| c).collect();
    let facts = GithubFacts {
        repo: Some(repo.to_string()),
        pr: Some(PullRequest {
            number: req.pr.0,
            author,
            title: pull.title.clone(),
            body: pull.body.clone().unwrap_or_default(),
            draft: pull.draft,
            state: pull.state.clone(),
            labels: pull.labels.iter().map(|l| l.name.clone()).collect(),
            base_sha: trees.base_sha.clone(),
            head_sha: req.head_sha.to_owned(),
            current_head_sha: Some(pull.head.sha.clone()),
        }),
        check_runs: Some(check_runs),
        comments: Some(comments),
        reviews: Some(split(conv.reviews)),
        review_comments: Some(split(conv.review_comments)),
        signoff: Some(req.signoff),
        pinned_run,
        upstream_prs: Some(upstream),
        pages: Vec::new(),
        team_memberships,
        signer_permission,
        acks,
        commits: Some(commits),
    };
    let mut s = snapshot_from_trees(trees, facts, artifacts, settings, req.today);
    s.run_files = run_files;
    s.notes.extend(notes);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(author: &str, body: &str, at: &str) -> Comment {
        Comment {
            author: author.into(),
            body: body.into(),
            created_at: at.into(),
            url: format!("u/{author}/{at}"),
            ..Comment::default()
        }
    }

    #[test]
    fn the_newest_sign_off_wins_across_kinds_and_bots_never_sign() {
        let phrase = "As a PR reviewer and CODEOWNER, I have reviewed this and have:";
        let comments = vec![
            c("a", phrase, "2026-10-16T10:00:00Z"),
            c("sweepgate[bot]", phrase, "2026-10-16T13:00:00Z"),
            c("b", "/use 1", "2026-10-16T14:00:00Z"),
        ];
        let reviews = vec![(c("r", phrase, "2026-10-16T12:00:00Z"), Some("abc".into()))];
        let (s, sha) = latest_signoff(&comments, &reviews, &[]).unwrap();
        assert_eq!((s.author.as_str(), s.kind), ("r", SignoffKind::Review));
        assert_eq!(sha.as_deref(), Some("abc"));
        assert!(latest_signoff(&comments[2..], &[], &[]).is_none());
    }

    #[test]
    fn roles_are_read_only_for_commands_that_need_them() {
        let reuse = vec!["/use".to_owned(), "/reuse-sweep-run".to_owned()];
        assert!(needs_role("/use 38614048439", &reuse));
        assert!(needs_role("thanks\n/ack-check 3 fine", &reuse));
        assert!(!needs_role("`/use 1` in code", &reuse));
        assert!(!needs_role("/verify", &reuse));
    }
}
