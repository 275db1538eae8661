//! `sweepgate verify --repo O/R --pr N --compare`: the local trial. It
//! finds the old verifier's newest verdict on the PR (a comment by a
//! legacy login with the `codeowner-signoff-verify` marker), verifies the
//! sign-off that verdict answered, and prints both verdicts check by
//! check. It reads only: a read-only token is enough, and it needs no
//! webhook (`docs/shadow.md`).
use crate::config::server::ServerConfig;
use crate::github::IssueComment;
use crate::handlers::{Clock, Services, repo_config, verify};
use anyhow::Context;
use serde_json::json;
use std::process::ExitCode;
use sweepgate_core::ids::{PrNumber, RepoName};
use sweepgate_core::legacy::{self, LegacyVerdict, RowComparison};

/// The old verdict and the comment that holds it.
struct Found {
    verdict: LegacyVerdict,
    comment: IssueComment,
}

/// The newest verdict of a legacy login; the newest sign-off before it.
fn pick(comments: &[IssueComment], legacy_logins: &[String]) -> (Option<Found>, Option<String>) {
    let is_legacy = |c: &IssueComment| {
        legacy_logins
            .iter()
            .any(|l| !l.is_empty() && c.author().eq_ignore_ascii_case(l))
    };
    let Some((at, found)) = comments.iter().enumerate().rev().find_map(|(i, c)| {
        let v = is_legacy(c).then(|| legacy::parse(c.body())).flatten()?;
        Some((
            i,
            Found {
                verdict: v,
                comment: c.clone(),
            },
        ))
    }) else {
        return (None, None);
    };
    let signoff = comments[..at]
        .iter()
        .rev()
        .find(|c| sweepgate_core::signoff::is_signoff(c.body()))
        .and_then(|c| c.html_url.clone());
    (Some(found), signoff)
}

/// The side-by-side as text: one line per check, both reasons when the
/// outcomes differ.
pub(crate) fn render_text(
    repo: &str,
    pr: u64,
    ours_sha: &str,
    ours_passed: bool,
    old: &LegacyVerdict,
    old_url: &str,
    rows: &[RowComparison],
) -> String {
    let mut out = format!(
        "{repo}#{pr}: sweepgate {} at {ours_sha}; old verifier {} at {} ({old_url})\n",
        if ours_passed { "PASS" } else { "REJECTED" },
        if old.verdict.is_empty() {
            "(no verdict line)"
        } else {
            old.verdict.as_str()
        },
        old.sha
    );
    if !ours_sha.starts_with(&old.sha) && !old.sha.starts_with(ours_sha) {
        out.push_str("note: the two verdicts assessed different commits\n");
    }
    out.push_str(&format!(
        "{:>5}  {:<28} {:<10} {:<12} {}\n",
        "check", "name", "sweepgate", "old verifier", ""
    ));
    let (mut same, mut different, mut single) = (0, 0, 0);
    for r in rows {
        let o = r.ours.as_ref().map_or("—", |x| x.0.as_str());
        let t = r.theirs.as_ref().map_or("—", |x| x.0.as_str());
        let word = match (&r.ours, &r.theirs) {
            (Some(_), Some(_)) if r.same => {
                same += 1;
                "same"
            }
            (Some(_), Some(_)) => {
                different += 1;
                "DIFFERENT"
            }
            _ => {
                single += 1;
                "only one"
            }
        };
        let name: String = r.name.chars().take(28).collect();
        out.push_str(&format!(
            "{:>5}  {name:<28} {o:<10} {t:<12} {word}\n",
            r.number
        ));
        if !r.same {
            if let Some((_, reason)) = &r.ours {
                out.push_str(&format!("         sweepgate: {reason}\n"));
            }
            if let Some((_, reason)) = &r.theirs {
                out.push_str(&format!("         old verifier: {reason}\n"));
            }
        }
    }
    out.push_str(&format!(
        "same outcome: {same}, different: {different}, in one verdict only: {single}\n"
    ));
    out
}

/// Runs the comparison; exit 0 when both verdicts were found and shown
/// (agreeing or not), 2 when they could not be.
pub(crate) async fn run(
    cfg: &ServerConfig,
    repo: &str,
    pr: u64,
    today: Option<chrono::NaiveDate>,
    json_out: bool,
) -> anyhow::Result<ExitCode> {
    let (owner, name) = repo
        .split_once('/')
        .with_context(|| format!("--repo {repo}: not owner/name"))?;
    let repo = RepoName::new(owner, name);
    let github = crate::app::github_client(cfg)?;
    let store = crate::app::open_store(cfg).await?;
    let services = Services::new(github).with_clock(today.map_or(Clock::System, Clock::Fixed));
    let api = services
        .api_for_repo(&repo)
        .await
        .map_err(anyhow::Error::msg)?;
    let branch = api.default_branch(&repo).await?;
    let rc = repo_config::load(&api, &store, &repo, &branch)
        .await
        .map_err(anyhow::Error::msg)?
        .config;
    let comments = api.issue_comments(&repo, PrNumber(pr)).await?;
    let (found, signoff) = pick(&comments, &rc.legacy.logins);
    let Some(found) = found else {
        eprintln!(
            "error: {repo}#{pr} has no verdict of the old verifier (a comment by {} with `{}`)",
            rc.legacy.logins.join(" or "),
            legacy::MARKER.trim_end_matches("sha=")
        );
        return Ok(ExitCode::from(2));
    };
    let Some(signoff) = signoff else {
        eprintln!("error: {repo}#{pr} has no sign-off comment before the old verifier's verdict");
        return Ok(ExitCode::from(2));
    };
    let (v, _) = match verify::verify_url(&services, &store, &repo, &signoff, false).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let rows = legacy::compare(&v.rows, &found.verdict);
    let old_url = found.comment.html_url.clone().unwrap_or_default();
    if json_out {
        let out = json!({
            "sweepgate": { "verdict": if v.passed() { "PASS" } else { "REJECTED" }, "head_sha": v.head_sha, "signoff": signoff },
            "old": { "verdict": found.verdict.verdict, "sha": found.verdict.sha, "comment_url": old_url },
            "rows": rows,
        });
        super::output::print_out(&(serde_json::to_string_pretty(&out)? + "\n"))?;
    } else {
        super::output::print_out(&render_text(
            &repo.0,
            pr,
            &v.head_sha,
            v.passed(),
            &found.verdict,
            &old_url,
            &rows,
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
