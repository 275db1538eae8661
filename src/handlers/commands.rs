//! Commands in PR comments: parse (only new lines of an edited comment),
//! authorize through the API, and answer in one reply per comment.
use super::authored::Authored;
use super::publish::Published;
use super::{Services, publish, repo_of, sweeps, verify};
use crate::comments::{
    AckReply, AckState, CommandProblem, Help, HelpRow, Reply, VerifyReply, VerifyState, render,
    reply_marker,
};
use crate::events::{Event, Handler, HandlerError, IssueCommentEvent, JobContext};
use crate::github::{Api, GitHubError};
use crate::snapshot::remote;
use async_trait::async_trait;
use sweepgate_core::checks::snapshot::Signoff;
use sweepgate_core::commands::{
    self, Actor, AuthorAssociation, Command, ParsedLine, PermissionSource, RepoRole, RoleFuture,
};
use sweepgate_core::ids::{PrNumber, RepoName};
use sweepgate_core::signoff::Coverage;
use sweepgate_core::sweep::runs::Purpose;

pub(crate) struct Commands {
    services: Services,
}

impl Commands {
    pub(crate) fn new(services: Services) -> Self {
        Self { services }
    }
}

/// Roles from the collaborator permission API; a user GitHub does not know
/// as a collaborator has no role.
impl PermissionSource for Api {
    type Error = GitHubError;

    fn role_of<'a>(
        &'a self,
        owner: &'a str,
        repo: &'a str,
        user: &'a str,
    ) -> RoleFuture<'a, GitHubError> {
        Box::pin(async move {
            let perm = self
                .collaborator_permission(&RepoName::new(owner, repo), user)
                .await?;
            Ok(perm.map_or(RepoRole::None, |p| {
                RepoRole::from_api(&p.permission, p.role_name.as_deref())
            }))
        })
    }
}

/// The command lines this delivery should act on. On an edit, only lines
/// that were not there before, and only when the comment's author made the
/// edit (`docs/contracts.md` §3): an edit of someone else's comment runs
/// nothing, whatever it added.
fn lines_to_run(ev: &IssueCommentEvent) -> Vec<ParsedLine> {
    let body = ev.comment.body.as_deref().unwrap_or("");
    match ev.action.as_str() {
        "edited" => {
            let previous = ev
                .changes
                .as_ref()
                .and_then(|c| c.body.as_ref())
                .map(|b| b.from.as_str());
            // No previous body: GitHub edited something else (e.g. the
            // title of the thread); nothing new was typed.
            let Some(prev) = previous else {
                return Vec::new();
            };
            let author = ev.comment.user.as_ref().map(|u| u.login.as_str());
            let editor = ev.sender.as_ref().map(|u| u.login.as_str());
            let by_author =
                matches!((author, editor), (Some(a), Some(e)) if a.eq_ignore_ascii_case(e));
            if !by_author {
                tracing::warn!(
                    comment = %ev.comment.id.0,
                    author = author.unwrap_or(""),
                    editor = editor.unwrap_or(""),
                    "comment edited by someone else than its author: no command runs"
                );
                crate::telemetry::foreign_edit("issue_comment.edited");
                return Vec::new();
            }
            commands::new_in_edit(prev, body)
        }
        _ => commands::parse_comment(body),
    }
}

#[async_trait]
impl Handler for Commands {
    fn id(&self) -> crate::events::HandlerId {
        crate::events::HandlerId::Commands
    }

    async fn handle(&self, ctx: &JobContext, event: &Event) -> Result<(), HandlerError> {
        let Event::IssueComment(ev) = event else {
            return Ok(());
        };
        let Some(user) = ev.comment.user.as_ref() else {
            return Ok(());
        };
        // Bots (sweepgate itself included) never command sweepgate.
        if ev.issue.pull_request.is_none() || user.kind == "Bot" || user.login.ends_with("[bot]") {
            return Ok(());
        }
        let repo = repo_of(ctx)?;
        let by_author = ev.action != "edited"
            || ev
                .sender
                .as_ref()
                .is_some_and(|s| s.login.eq_ignore_ascii_case(&user.login));
        if by_author {
            Authored::record_commands(
                &ctx.store,
                &repo,
                ev.issue.number,
                ev.comment.id.0,
                ev.comment.body.as_deref().unwrap_or(""),
            )
            .await?;
        }
        let lines = lines_to_run(ev);
        if lines.is_empty() {
            return Ok(());
        }
        let (owner, name) = repo
            .parts()
            .ok_or_else(|| HandlerError::Permanent(format!("`{repo}` is not owner/name")))?;
        let branch = ctx
            .envelope
            .default_branch
            .clone()
            .unwrap_or_else(|| "main".into());
        let (api, _) = self.services.api_in_mode(ctx, &repo, &branch).await?;
        let actor = Actor {
            login: &user.login,
            association: AuthorAssociation::parse(ev.comment.author_association.as_deref()),
        };
        let pr_author = ev.issue.user.as_ref().map(|u| u.login.as_str());
        let mut answers = Vec::new();
        let mut pending = Vec::new();
        // The latest sign-off as its author wrote it, read once.
        let mut conv: Option<Option<(Signoff, Option<String>)>> = None;
        for line in &lines {
            let cmd = match &line.result {
                Ok(cmd) => cmd,
                Err(e) => {
                    answers.push(render(&CommandProblem {
                        user: &user.login,
                        line: line.line,
                        message: &e.to_string(),
                    }));
                    continue;
                }
            };
            // `/verify` and `/ack-check` read the conversation (the latest
            // sign-off); other commands do not need it.
            if matches!(cmd, Command::Verify | Command::AckCheck { .. }) && conv.is_none() {
                let authored = Authored::load(&ctx.store, &repo, ev.issue.number).await?;
                conv = Some(
                    remote::conversation(&api, &repo, ev.issue.number, &authored)
                        .await?
                        .latest_vouched_signoff(&authored),
                );
            }
            let latest = conv.clone().flatten();
            let signer = latest.as_ref().map(|(s, _)| s.author.as_str());
            let decision =
                commands::authorize_with(&api, owner, name, cmd, actor, pr_author, signer).await?;
            if let Err(refusal) = decision {
                answers.push(render(&CommandProblem {
                    user: &user.login,
                    line: line.line,
                    message: refusal
                        .to_string()
                        .trim_start_matches(&format!("@{} ", user.login)),
                }));
                continue;
            }
            let run_cmd = |run, purpose| sweeps::RunCommand {
                user: &user.login,
                run,
                purpose,
                command_comment: ev.comment.id,
            };
            let run_cmd = match cmd {
                Command::Use { run } => run_cmd(Some(*run), Purpose::PinExplicit),
                Command::ReuseSweepRun { run: Some(run) } => {
                    run_cmd(Some(*run), Purpose::PinExplicit)
                }
                Command::ReuseSweepRun { run: None } => run_cmd(None, Purpose::PinNewest),
                Command::StageResults { run: Some(run) } => {
                    run_cmd(Some(*run), Purpose::StageExplicit)
                }
                Command::StageResults { run: None } => run_cmd(None, Purpose::StageNewest),
                Command::Verify => {
                    answers.push(
                        self.reverify(ctx, ev.issue.number, &user.login, latest.clone())
                            .await?,
                    );
                    continue;
                }
                Command::AckCheck { check, reason } => {
                    let ack = Ack {
                        user: &user.login,
                        check: check.get(),
                        reason,
                    };
                    answers.push(
                        self.acknowledge(ctx, ev.issue.number, &ack, latest.clone())
                            .await?,
                    );
                    continue;
                }
                Command::Help => {
                    answers.push(help(&user.login));
                    continue;
                }
            };
            let (text, stage) =
                sweeps::prepare(&api, &ctx.store, &repo, ev.issue.number, &branch, &run_cmd)
                    .await?;
            answers.push(text);
            pending.extend(stage);
        }
        let body = render(&Reply {
            comment_id: ev.comment.id.0,
            answers: &answers,
        });
        let reply = match publish::upsert(
            &api,
            &repo,
            ev.issue.number,
            &reply_marker(ev.comment.id.0),
            &body,
        )
        .await?
        {
            Published::Created(id) | Published::Edited(id) | Published::Unchanged(id) => id,
        };
        let commands: Vec<String> = lines.iter().map(|l| l.normalized.clone()).collect();
        super::record_activity(
            &ctx.store,
            &repo,
            ev.issue.number,
            None,
            "command",
            &format!("@{}: {}", user.login, commands.join("; ")),
            &serde_json::json!({
                "user": user.login,
                "comment_id": ev.comment.id,
                "commands": commands,
                "reply": body,
            }),
        )
        .await?;
        // After the reply exists: the staging request names it.
        for stage in &pending {
            sweeps::dispatch(
                &self.services,
                &api,
                &ctx.store,
                &sweeps::PrAt {
                    repo: &repo,
                    pr: ev.issue.number,
                    default_branch: &branch,
                },
                reply,
                stage,
            )
            .await?;
        }
        Ok(())
    }
}

/// An authorized `/ack-check`.
struct Ack<'a> {
    user: &'a str,
    check: u8,
    reason: &'a str,
}

impl Commands {
    /// `/verify`: the verifier on the commit the latest sign-off covers
    /// (`docs/contracts.md` §3); when the head moved since, the verdict
    /// says the sign-off is stale.
    async fn reverify(
        &self,
        ctx: &JobContext,
        pr: PrNumber,
        user: &str,
        latest: Option<(Signoff, Option<String>)>,
    ) -> Result<String, HandlerError> {
        let none = |state| {
            render(&VerifyReply {
                user,
                state,
                sha: "",
                signer: "",
                url: "",
                limit: 0,
            })
        };
        let Some((signoff, commit)) = latest else {
            return Ok(none(VerifyState::NoSignoff));
        };
        let scope = self.services.scope(ctx).await?;
        let pull = scope.api.pull(&scope.repo, pr).await?;
        let signer = signoff.author.clone();
        let covered =
            match verify::covered(&ctx.store, &scope.repo, pr, &signoff, commit, &pull).await? {
                Coverage::Covers(sha) => sha,
                Coverage::NoRecord | Coverage::RecentPush { .. } => {
                    return Ok(render(&VerifyReply {
                        user,
                        state: VerifyState::Stale,
                        sha: &pull.head.sha,
                        signer: &signer,
                        url: &signoff.url,
                        limit: 0,
                    }));
                }
            };
        if let Err(limit) = verify::take_run(&ctx.store, &scope, pr, user).await? {
            return Ok(render(&VerifyReply {
                user,
                state: VerifyState::Capped,
                sha: "",
                signer: &signer,
                url: "",
                limit,
            }));
        }
        let p =
            verify::verify_and_publish(&self.services, &ctx.store, &scope, pr, &covered, signoff)
                .await?;
        Ok(render(&VerifyReply {
            user,
            state: if p.verdict.passed() {
                VerifyState::Pass
            } else {
                VerifyState::Rejected
            },
            sha: &covered,
            signer: &signer,
            url: &p.url,
            limit: 0,
        }))
    }

    /// `/ack-check <N> <reason>`: re-renders the live verdict, whose
    /// snapshot now reads the acknowledgement from the conversation.
    async fn acknowledge(
        &self,
        ctx: &JobContext,
        pr: PrNumber,
        ack: &Ack<'_>,
        latest: Option<(Signoff, Option<String>)>,
    ) -> Result<String, HandlerError> {
        let scope = self.services.scope(ctx).await?;
        let live = publish::find_live_verdict(&scope.api, &scope.repo, pr)
            .await?
            .map(|(sha, _)| sha);
        let name = sweepgate_core::checks::CHECK_NAMES
            .get(usize::from(ack.check))
            .copied()
            .unwrap_or("");
        let reason = crate::comments::quote(ack.reason);
        let reply = |state, sha: &str, outcome: &str, verdict: &str, url: &str| {
            render(&AckReply {
                user: ack.user,
                state,
                check: ack.check,
                name,
                sha,
                reason: &reason,
                outcome,
                verdict,
                url,
            })
        };
        let (Some(sha), Some((signoff, _))) = (live, latest) else {
            return Ok(reply(AckState::NoVerdict, "", "", "", ""));
        };
        if let Err(limit) = verify::take_run(&ctx.store, &scope, pr, ack.user).await? {
            return Ok(render(&VerifyReply {
                user: ack.user,
                state: VerifyState::Capped,
                sha: "",
                signer: "",
                url: "",
                limit,
            }));
        }
        let p = verify::verify_and_publish(&self.services, &ctx.store, &scope, pr, &sha, signoff)
            .await?;
        let verdict = if p.verdict.passed() {
            "PASS"
        } else {
            "REJECTED"
        };
        let row = p.verdict.rows.iter().find(|r| r.number == ack.check);
        Ok(match row {
            Some(r) if r.acknowledged.is_some() => {
                reply(AckState::Accepted, &sha, "PASS", verdict, &p.url)
            }
            Some(r) => reply(
                AckState::NotReview,
                &sha,
                r.outcome.as_str(),
                verdict,
                &p.url,
            ),
            None => reply(AckState::NotReview, &sha, "absent", verdict, &p.url),
        })
    }
}

/// `/help`: the command table.
fn help(user: &str) -> String {
    let rows: Vec<HelpRow> = commands::help_entries()
        .into_iter()
        .map(|e| HelpRow::new(e.syntax, e.description, e.who))
        .collect();
    render(&Help {
        user,
        commands: &rows,
    })
}
