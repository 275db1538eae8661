//! Pull requests (full and compact), reviews and review comments.
use super::node_id;
use crate::state::{World, ts};
use serde_json::{Value, json};

impl World {
    pub(crate) fn pr_json(&self, key: &str, number: u64) -> Value {
        let Ok((issue, pull)) = self.pull(key, number) else {
            return Value::Null;
        };
        let Some(repo) = self.repos.get(key) else {
            return Value::Null;
        };
        let full = repo.full_name();
        let api = format!("{}/repos/{full}", self.api());
        let html = format!("{}/{full}/pull/{number}", self.html());
        let base_sha = repo
            .branches
            .get(&pull.base_ref)
            .cloned()
            .unwrap_or_default();
        let head_repo = self.repos.get(&pull.head_repo);
        let head_owner = head_repo.map(|r| r.owner.clone()).unwrap_or_default();
        let stats = self.pr_stats(key, number);
        let comments = self
            .comments
            .values()
            .filter(|c| c.repo == key && c.number == number)
            .count();
        let review_comments = self
            .review_comments
            .values()
            .filter(|c| c.repo == key && c.number == number)
            .count();
        let mut v = json!({
            "url": format!("{api}/pulls/{number}"),
            "id": pull.id,
            "node_id": node_id("PullRequest", pull.id),
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "issue_url": format!("{api}/issues/{number}"),
            "number": number,
            "state": issue.state,
            "locked": issue.locked,
            "title": issue.title,
            "user": self.user_json(&issue.user),
            "body": issue.body,
            "created_at": ts(issue.created_at),
            "updated_at": ts(issue.updated_at),
            "closed_at": issue.closed_at.map(ts),
            "merged_at": pull.merged_at.map(ts),
            "merge_commit_sha": pull.merge_commit_sha,
            "assignee": null,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "labels": self.labels_json(key, number),
            "milestone": null,
            "draft": pull.draft,
            "commits_url": format!("{api}/pulls/{number}/commits"),
            "review_comments_url": format!("{api}/pulls/{number}/comments"),
            "review_comment_url": format!("{api}/pulls/comments{{/number}}"),
            "comments_url": format!("{api}/issues/{number}/comments"),
            "statuses_url": format!("{api}/statuses/{}", pull.head_sha),
        });
        let rest = json!({
            "head": {
                "label": format!("{head_owner}:{}", pull.head_ref),
                "ref": pull.head_ref,
                "sha": pull.head_sha,
                "user": self.user_json(&head_owner),
                "repo": self.repo_json(&pull.head_repo),
            },
            "base": {
                "label": format!("{}:{}", repo.owner, pull.base_ref),
                "ref": pull.base_ref,
                "sha": base_sha,
                "user": self.user_json(&repo.owner),
                "repo": self.repo_json(key),
            },
            "_links": {
                "self": { "href": format!("{api}/pulls/{number}") },
                "html": { "href": html },
                "issue": { "href": format!("{api}/issues/{number}") },
                "comments": { "href": format!("{api}/issues/{number}/comments") },
                "review_comments": { "href": format!("{api}/pulls/{number}/comments") },
                "review_comment": { "href": format!("{api}/pulls/comments{{/number}}") },
                "commits": { "href": format!("{api}/pulls/{number}/commits") },
                "statuses": { "href": format!("{api}/statuses/{}", pull.head_sha) },
            },
            "author_association": issue.author_association,
            "auto_merge": null,
            "active_lock_reason": null,
            "merged": pull.merged,
            "mergeable": if issue.state == "open" { json!(true) } else { Value::Null },
            "rebaseable": if issue.state == "open" { json!(true) } else { Value::Null },
            "mergeable_state": if pull.draft { "draft" } else if issue.state == "open" { "clean" } else { "unknown" },
            "merged_by": pull.merged_by.as_deref().map(|u| self.user_json(u)),
            "comments": comments,
            "review_comments": review_comments,
            "maintainer_can_modify": pull.maintainer_can_modify,
            "commits": stats.commits,
            "additions": stats.additions,
            "deletions": stats.deletions,
            "changed_files": stats.changed_files,
        });
        if let (Some(obj), Value::Object(rest)) = (v.as_object_mut(), rest) {
            obj.extend(rest);
        }
        v
    }

    /// The compact PR object inside `pull_requests` of runs and checks.
    pub(crate) fn pr_mini(&self, key: &str, number: u64) -> Value {
        let Ok((_, pull)) = self.pull(key, number) else {
            return Value::Null;
        };
        let Some(repo) = self.repos.get(key) else {
            return Value::Null;
        };
        json!({
            "url": format!("{}/repos/{}/pulls/{number}", self.api(), repo.full_name()),
            "id": pull.id,
            "number": number,
            "head": {
                "ref": pull.head_ref,
                "sha": pull.head_sha,
                "repo": self.repo_mini(&pull.head_repo),
            },
            "base": {
                "ref": pull.base_ref,
                "sha": repo.branches.get(&pull.base_ref).cloned().unwrap_or_default(),
                "repo": self.repo_mini(key),
            },
        })
    }

    pub(crate) fn review_json(&self, id: u64) -> Value {
        let Some(r) = self.reviews.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&r.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let html = format!(
            "{}/{full}/pull/{}#pullrequestreview-{}",
            self.html(),
            r.number,
            r.id
        );
        let pr_url = format!("{}/repos/{full}/pulls/{}", self.api(), r.number);
        json!({
            "id": r.id,
            "node_id": node_id("PullRequestReview", r.id),
            "user": self.user_json(&r.user),
            "body": r.body,
            "state": r.state,
            "html_url": html,
            "pull_request_url": pr_url,
            "_links": { "html": { "href": html }, "pull_request": { "href": pr_url } },
            "submitted_at": r.submitted_at.map(ts),
            "commit_id": r.commit_id,
            "author_association": r.author_association,
        })
    }

    pub(crate) fn review_comment_json(&self, id: u64) -> Value {
        let Some(c) = self.review_comments.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&c.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}", self.api());
        let html = format!(
            "{}/{full}/pull/{}#discussion_r{}",
            self.html(),
            c.number,
            c.id
        );
        json!({
            "url": format!("{api}/pulls/comments/{}", c.id),
            "pull_request_review_id": c.review_id,
            "id": c.id,
            "node_id": node_id("PullRequestReviewComment", c.id),
            "diff_hunk": c.diff_hunk,
            "path": c.path,
            "position": c.line,
            "original_position": c.line,
            "commit_id": c.commit_id,
            "original_commit_id": c.commit_id,
            "in_reply_to_id": c.in_reply_to,
            "user": self.user_json(&c.user),
            "body": c.body,
            "created_at": ts(c.created_at),
            "updated_at": ts(c.created_at),
            "html_url": html,
            "pull_request_url": format!("{api}/pulls/{}", c.number),
            "author_association": c.author_association,
            "_links": {
                "self": { "href": format!("{api}/pulls/comments/{}", c.id) },
                "html": { "href": html },
                "pull_request": { "href": format!("{api}/pulls/{}", c.number) },
            },
            "start_line": null,
            "original_start_line": null,
            "start_side": null,
            "line": c.line,
            "original_line": c.line,
            "side": c.side,
        })
    }
}
