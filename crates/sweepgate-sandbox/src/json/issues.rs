//! Issues (and PRs as issues), issue comments and labels.
use super::{node_id, url_escape};
use crate::state::{World, ts};
use serde_json::{Value, json};

impl World {
    pub(crate) fn label_json(&self, key: &str, name: &str) -> Value {
        let repo = self.repos.get(key);
        let label = repo.and_then(|r| r.labels.get(&name.to_ascii_lowercase()));
        let full = repo.map(|r| r.full_name()).unwrap_or_default();
        let (id, name, color, description) = match label {
            Some(l) => (l.id, l.name.clone(), l.color.clone(), l.description.clone()),
            None => (0, name.to_string(), World::label_color(name), None),
        };
        json!({
            "id": id,
            "node_id": node_id("Label", id),
            "url": format!("{}/repos/{full}/labels/{}", self.api(), url_escape(&name)),
            "name": name,
            "color": color,
            "default": false,
            // GitHub's description has a string here in pull request lists.
            "description": description.unwrap_or_default(),
        })
    }

    pub(crate) fn labels_json(&self, key: &str, number: u64) -> Vec<Value> {
        self.issue(key, number)
            .map(|i| i.labels.iter().map(|l| self.label_json(key, l)).collect())
            .unwrap_or_default()
    }

    /// The issue object of `issue_comment` payloads and `GET /issues/{n}`.
    pub(crate) fn issue_json(&self, key: &str, number: u64) -> Value {
        let Ok(issue) = self.issue(key, number) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(key)
            .map(|r| r.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}", self.api());
        let kind = if issue.pull.is_some() {
            "pull"
        } else {
            "issues"
        };
        let html = format!("{}/{full}/{kind}/{number}", self.html());
        let comments = self
            .comments
            .values()
            .filter(|c| c.repo == key && c.number == number)
            .count();
        let mut v = json!({
            "url": format!("{api}/issues/{number}"),
            "repository_url": api,
            "labels_url": format!("{api}/issues/{number}/labels{{/name}}"),
            "comments_url": format!("{api}/issues/{number}/comments"),
            "events_url": format!("{api}/issues/{number}/events"),
            "html_url": html,
            "id": issue.id,
            "node_id": node_id("Issue", issue.id),
            "number": number,
            "title": issue.title,
            "user": self.user_json(&issue.user),
            "labels": self.labels_json(key, number),
            "state": issue.state,
            "locked": issue.locked,
            "assignee": null,
            "assignees": [],
            "milestone": null,
            "comments": comments,
            "created_at": ts(issue.created_at),
            "updated_at": ts(issue.updated_at),
            "closed_at": issue.closed_at.map(ts),
            "author_association": issue.author_association,
            "active_lock_reason": null,
            "body": issue.body,
            "reactions": reactions(&format!("{api}/issues/{number}/reactions")),
            "timeline_url": format!("{api}/issues/{number}/timeline"),
            "performed_via_github_app": null,
            "state_reason": null,
        });
        if let Some(p) = &issue.pull
            && let Some(obj) = v.as_object_mut()
        {
            obj.insert("draft".into(), json!(p.draft));
            obj.insert(
                "pull_request".into(),
                json!({
                    "url": format!("{api}/pulls/{number}"),
                    "html_url": html,
                    "diff_url": format!("{html}.diff"),
                    "patch_url": format!("{html}.patch"),
                    "merged_at": p.merged_at.map(ts),
                }),
            );
        }
        v
    }

    pub(crate) fn comment_json(&self, id: u64) -> Value {
        let Some(c) = self.comments.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&c.repo)
            .map(|r| r.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}", self.api());
        let is_pr = self.pull(&c.repo, c.number).is_ok();
        let kind = if is_pr { "pull" } else { "issues" };
        json!({
            "id": c.id,
            "node_id": node_id("IssueComment", c.id),
            "url": format!("{api}/issues/comments/{}", c.id),
            "html_url": format!("{}/{full}/{kind}/{}#issuecomment-{}", self.html(), c.number, c.id),
            "body": c.body,
            "user": self.user_json(&c.user),
            "created_at": ts(c.created_at),
            "updated_at": ts(c.updated_at),
            "issue_url": format!("{api}/issues/{}", c.number),
            "author_association": c.author_association,
            "performed_via_github_app": if c.via_app { self.app_json() } else { Value::Null },
            "reactions": reactions(&format!("{api}/issues/comments/{}/reactions", c.id)),
            "pin": null,
            "minimized": null,
        })
    }
}

fn reactions(url: &str) -> Value {
    json!({
        "url": url, "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
        "confused": 0, "heart": 0, "rocket": 0, "eyes": 0,
    })
}
