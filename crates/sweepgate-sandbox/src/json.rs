//! Response and payload shapes, field for field as in
//! `fixtures/github/rest/examples.json` and the webhook fixtures, with URLs
//! pointing at the sandbox (API) and at the configured HTML base.
use super::git::FileChange;
use super::state::{ACTIONS_APP_ID, Account, AccountKind, World, ts};
use base64::Engine;
use serde_json::{Value, json};

fn node_id(kind: &str, id: u64) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("0{}:{kind}{id}", kind.len()))
}

impl World {
    fn api(&self) -> &str {
        &self.settings.api_base
    }
    pub(crate) fn html(&self) -> &str {
        &self.settings.html_base
    }

    pub(crate) fn account_or_stub(&self, login: &str) -> Account {
        self.find_account(login)
            .cloned()
            .unwrap_or_else(|| Account {
                login: login.to_string(),
                id: u64::from_str_radix(&super::git::sha1_hex(login.as_bytes())[..7], 16)
                    .unwrap_or(1),
                kind: AccountKind::User,
            })
    }

    pub(crate) fn user_json(&self, login: &str) -> Value {
        let a = self.account_or_stub(login);
        let api = self.api();
        let html = self.html();
        let l = &a.login;
        json!({
            "login": l,
            "id": a.id,
            "node_id": node_id(if a.kind == AccountKind::Organization { "Organization" } else { "User" }, a.id),
            "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", a.id),
            "gravatar_id": "",
            "url": format!("{api}/users/{l}"),
            "html_url": format!("{html}/{l}"),
            "followers_url": format!("{api}/users/{l}/followers"),
            "following_url": format!("{api}/users/{l}/following{{/other_user}}"),
            "gists_url": format!("{api}/users/{l}/gists{{/gist_id}}"),
            "starred_url": format!("{api}/users/{l}/starred{{/owner}}{{/repo}}"),
            "subscriptions_url": format!("{api}/users/{l}/subscriptions"),
            "organizations_url": format!("{api}/users/{l}/orgs"),
            "repos_url": format!("{api}/users/{l}/repos"),
            "events_url": format!("{api}/users/{l}/events{{/privacy}}"),
            "received_events_url": format!("{api}/users/{l}/received_events"),
            "type": a.kind.as_str(),
            "user_view_type": "public",
            "site_admin": false
        })
    }

    pub(crate) fn org_json(&self, login: &str) -> Value {
        let a = self.account_or_stub(login);
        let api = self.api();
        let l = &a.login;
        json!({
            "login": l,
            "id": a.id,
            "node_id": node_id("Organization", a.id),
            "url": format!("{api}/orgs/{l}"),
            "repos_url": format!("{api}/orgs/{l}/repos"),
            "events_url": format!("{api}/orgs/{l}/events"),
            "hooks_url": format!("{api}/orgs/{l}/hooks"),
            "issues_url": format!("{api}/orgs/{l}/issues"),
            "members_url": format!("{api}/orgs/{l}/members{{/member}}"),
            "public_members_url": format!("{api}/orgs/{l}/public_members{{/member}}"),
            "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", a.id),
            "description": ""
        })
    }

    pub(crate) fn repo_json(&self, key: &str) -> Value {
        let Some(r) = self.repos.get(key) else {
            return Value::Null;
        };
        let api = format!("{}/repos/{}", self.api(), r.full_name());
        let html = format!("{}/{}", self.html(), r.full_name());
        let full = r.full_name();
        let open_issues = r.issues.values().filter(|i| i.state == "open").count();
        let mut v = json!({
            "id": r.id,
            "node_id": node_id("Repository", r.id),
            "name": r.name,
            "full_name": full,
            "private": r.private,
            "owner": self.user_json(&r.owner),
            "html_url": html,
            "description": null,
            "fork": r.fork_of.is_some(),
            "url": api,
            "created_at": ts(r.created_at),
            "updated_at": ts(r.pushed_at),
            "pushed_at": ts(r.pushed_at),
            "git_url": format!("git://{}/{full}.git", self.html().trim_start_matches("https://").trim_start_matches("http://")),
            "ssh_url": format!("git@github.com:{full}.git"),
            "clone_url": format!("{html}.git"),
            "svn_url": html,
            "homepage": null,
        });
        let tail = json!({
            "size": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "language": null,
            "has_issues": true,
            "has_projects": true,
            "has_downloads": true,
            "has_wiki": true,
            "has_pages": false,
            "has_discussions": false,
            "forks_count": 0,
            "mirror_url": null,
            "archived": false,
            "disabled": false,
            "open_issues_count": open_issues,
            "license": null,
            "allow_forking": true,
            "is_template": false,
            "topics": [],
            "visibility": if r.private { "private" } else { "public" },
            "forks": 0,
            "open_issues": open_issues,
            "watchers": 0,
            "default_branch": r.default_branch,
        });
        const URLS: [(&str, &str); 36] = [
            ("forks_url", "/forks"),
            ("keys_url", "/keys{/key_id}"),
            ("collaborators_url", "/collaborators{/collaborator}"),
            ("teams_url", "/teams"),
            ("hooks_url", "/hooks"),
            ("issue_events_url", "/issues/events{/number}"),
            ("events_url", "/events"),
            ("assignees_url", "/assignees{/user}"),
            ("branches_url", "/branches{/branch}"),
            ("tags_url", "/tags"),
            ("blobs_url", "/git/blobs{/sha}"),
            ("git_tags_url", "/git/tags{/sha}"),
            ("git_refs_url", "/git/refs{/sha}"),
            ("trees_url", "/git/trees{/sha}"),
            ("statuses_url", "/statuses/{sha}"),
            ("languages_url", "/languages"),
            ("stargazers_url", "/stargazers"),
            ("contributors_url", "/contributors"),
            ("subscribers_url", "/subscribers"),
            ("subscription_url", "/subscription"),
            ("commits_url", "/commits{/sha}"),
            ("git_commits_url", "/git/commits{/sha}"),
            ("comments_url", "/comments{/number}"),
            ("issue_comment_url", "/issues/comments{/number}"),
            ("contents_url", "/contents/{+path}"),
            ("compare_url", "/compare/{base}...{head}"),
            ("merges_url", "/merges"),
            ("archive_url", "/{archive_format}{/ref}"),
            ("downloads_url", "/downloads"),
            ("issues_url", "/issues{/number}"),
            ("pulls_url", "/pulls{/number}"),
            ("milestones_url", "/milestones{/number}"),
            (
                "notifications_url",
                "/notifications{?since,all,participating}",
            ),
            ("labels_url", "/labels{/name}"),
            ("releases_url", "/releases{/id}"),
            ("deployments_url", "/deployments"),
        ];
        if let (Some(obj), Value::Object(tail)) = (v.as_object_mut(), tail) {
            for (k, suffix) in URLS {
                obj.insert(k.into(), json!(format!("{api}{suffix}")));
            }
            obj.extend(tail);
        }
        v
    }

    /// The compact repository object inside `pull_requests` arrays.
    fn repo_mini(&self, key: &str) -> Value {
        match self.repos.get(key) {
            Some(r) => json!({
                "id": r.id,
                "url": format!("{}/repos/{}", self.api(), r.full_name()),
                "name": r.name,
            }),
            None => Value::Null,
        }
    }

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
            "description": description,
        })
    }

    pub(crate) fn labels_json(&self, key: &str, number: u64) -> Vec<Value> {
        self.issue(key, number)
            .map(|i| i.labels.iter().map(|l| self.label_json(key, l)).collect())
            .unwrap_or_default()
    }

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

    pub(crate) fn app_json(&self) -> Value {
        let app = &self.settings.app;
        json!({
            "id": app.id,
            "slug": app.slug,
            "client_id": app.client_id,
            "node_id": node_id("Integration", app.id),
            "owner": self.user_json(&app.owner),
            "name": app.name,
            "description": "Deterministic PR gate (sandbox)",
            "external_url": self.settings.html_base,
            "html_url": format!("{}/apps/{}", self.settings.html_base, app.slug),
            "created_at": "2026-01-05T10:00:00Z",
            "updated_at": "2026-01-05T10:00:00Z",
            "permissions": app_permissions(),
            "events": ["check_run", "issue_comment", "pull_request", "pull_request_review", "repository_dispatch", "workflow_job", "workflow_run"],
        })
    }

    fn actions_app_json(&self) -> Value {
        json!({
            "id": ACTIONS_APP_ID,
            "slug": "github-actions",
            "node_id": node_id("Integration", ACTIONS_APP_ID),
            "owner": self.user_json("github"),
            "name": "GitHub Actions",
            "description": "Automate your workflow from idea to production",
            "external_url": "https://help.github.com/en/actions",
            "html_url": "https://github.com/apps/github-actions",
            "created_at": "2018-07-30T09:30:17Z",
            "updated_at": "2019-12-10T19:04:12Z",
            "permissions": app_permissions(),
            "events": [],
        })
    }

    pub(crate) fn installation_json(&self, id: u64) -> Value {
        let Some(i) = self.installations.get(&id) else {
            return Value::Null;
        };
        let target = self.account_or_stub(&i.account);
        json!({
            "id": i.id,
            "client_id": self.settings.app.client_id,
            "account": self.user_json(&i.account),
            "repository_selection": if i.repos.is_some() { "selected" } else { "all" },
            "access_tokens_url": format!("{}/app/installations/{}/access_tokens", self.api(), i.id),
            "repositories_url": format!("{}/installation/repositories", self.api()),
            "html_url": format!("{}/organizations/{}/settings/installations/{}", self.html(), i.account, i.id),
            "app_id": self.settings.app.id,
            "app_slug": self.settings.app.slug,
            "target_id": target.id,
            "target_type": target.kind.as_str(),
            "permissions": app_permissions(),
            "events": ["check_run", "issue_comment", "pull_request", "pull_request_review", "repository_dispatch", "workflow_job", "workflow_run"],
            "created_at": ts(i.created_at),
            "updated_at": ts(i.created_at),
            "single_file_name": null,
            "has_multiple_single_files": false,
            "single_file_paths": [],
            "suspended_at": null,
            "suspended_by": null,
        })
    }

    /// The REST commit object (`GET /commits/{ref}`, PR commits, compare).
    pub(crate) fn commit_json(&self, key: &str, sha: &str, files: Option<&[FileChange]>) -> Value {
        let Some(c) = self.objects.commit(sha) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(key)
            .map(|r| r.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}", self.api());
        let html = format!("{}/{full}", self.html());
        let login_json = |l: &Option<String>| match l {
            Some(l) => self.user_json(l),
            None => Value::Null,
        };
        let mut v = json!({
            "url": format!("{api}/commits/{sha}"),
            "sha": sha,
            "node_id": node_id("Commit", u64::from_str_radix(&sha[..8.min(sha.len())], 16).unwrap_or(0)),
            "html_url": format!("{html}/commit/{sha}"),
            "comments_url": format!("{api}/commits/{sha}/comments"),
            "commit": {
                "url": format!("{api}/git/commits/{sha}"),
                "author": { "name": c.author.name, "email": c.author.email, "date": ts(c.author.date) },
                "committer": { "name": c.committer.name, "email": c.committer.email, "date": ts(c.committer.date) },
                "message": c.message,
                "tree": { "url": format!("{api}/git/trees/{}", c.tree), "sha": c.tree },
                "comment_count": 0,
                "verification": { "verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null },
            },
            "author": login_json(&c.author_login),
            "committer": login_json(&c.author_login),
            "parents": c.parents.iter().map(|p| json!({
                "url": format!("{api}/commits/{p}"),
                "sha": p,
                "html_url": format!("{html}/commit/{p}"),
            })).collect::<Vec<_>>(),
        });
        if let (Some(files), Some(obj)) = (files, v.as_object_mut()) {
            let additions: usize = files.iter().map(|f| f.additions).sum();
            let deletions: usize = files.iter().map(|f| f.deletions).sum();
            obj.insert(
                "stats".into(),
                json!({ "total": additions + deletions, "additions": additions, "deletions": deletions }),
            );
            obj.insert(
                "files".into(),
                Value::Array(files.iter().map(|f| self.file_json(key, sha, f)).collect()),
            );
        }
        v
    }

    pub(crate) fn file_json(&self, key: &str, at_sha: &str, f: &FileChange) -> Value {
        let full = self
            .repos
            .get(key)
            .map(|r| r.full_name())
            .unwrap_or_default();
        let path = url_escape_path(&f.filename);
        let mut v = json!({
            "sha": f.new_sha.clone().or_else(|| f.old_sha.clone()),
            "filename": f.filename,
            "status": f.status,
            "additions": f.additions,
            "deletions": f.deletions,
            "changes": f.additions + f.deletions,
            "blob_url": format!("{}/{full}/blob/{at_sha}/{path}", self.html()),
            "raw_url": format!("{}/{full}/raw/{at_sha}/{path}", self.html()),
            "contents_url": format!("{}/repos/{full}/contents/{path}?ref={at_sha}", self.api()),
        });
        if let Some(obj) = v.as_object_mut() {
            if let Some(p) = &f.patch {
                obj.insert("patch".into(), json!(p));
            }
            if let Some(prev) = &f.previous_filename {
                obj.insert("previous_filename".into(), json!(prev));
            }
        }
        v
    }

    pub(crate) fn check_run_json(&self, id: u64) -> Value {
        let Some(c) = self.check_runs.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&c.repo)
            .map(|r| r.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}", self.api());
        let app = if c.app_id == ACTIONS_APP_ID {
            self.actions_app_json()
        } else {
            self.app_json()
        };
        let prs: Vec<Value> = self
            .prs_for_sha(&c.repo, &c.head_sha)
            .into_iter()
            .map(|n| self.pr_mini(&c.repo, n))
            .collect();
        json!({
            "id": c.id,
            "head_sha": c.head_sha,
            "node_id": node_id("CheckRun", c.id),
            "external_id": c.external_id,
            "url": format!("{api}/check-runs/{}", c.id),
            "html_url": format!("{}/{full}/runs/{}", self.html(), c.id),
            "details_url": c.details_url.clone().unwrap_or_else(|| format!("{}/{full}/runs/{}", self.html(), c.id)),
            "status": c.status,
            "conclusion": c.conclusion,
            "started_at": ts(c.started_at),
            "completed_at": c.completed_at.map(ts),
            "output": {
                "title": c.title,
                "summary": c.summary,
                "text": c.text,
                "annotations_count": c.annotations.len(),
                "annotations_url": format!("{api}/check-runs/{}/annotations", c.id),
            },
            "name": c.name,
            "check_suite": { "id": c.suite_id },
            "app": app,
            "pull_requests": prs,
        })
    }

    pub(crate) fn status_json(&self, s: &super::state::CommitStatus) -> Value {
        let full = self
            .repos
            .get(&s.repo)
            .map(|r| r.full_name())
            .unwrap_or_default();
        json!({
            "url": format!("{}/repos/{full}/statuses/{}", self.api(), s.sha),
            "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", self.account_or_stub(&s.creator).id),
            "id": s.id,
            "node_id": node_id("StatusContext", s.id),
            "state": s.state,
            "description": s.description,
            "target_url": s.target_url,
            "context": s.context,
            "created_at": ts(s.created_at),
            "updated_at": ts(s.created_at),
            "creator": self.user_json(&s.creator),
        })
    }

    pub(crate) fn workflow_json(&self, key: &str, id: u64) -> Value {
        let Some(repo) = self.repos.get(key) else {
            return Value::Null;
        };
        let Some(w) = repo.workflows.get(&id) else {
            return Value::Null;
        };
        let full = repo.full_name();
        json!({
            "id": w.id,
            "node_id": node_id("Workflow", w.id),
            "name": w.name,
            "path": w.path,
            "state": w.state,
            "created_at": ts(w.created_at),
            "updated_at": ts(w.created_at),
            "url": format!("{}/repos/{full}/actions/workflows/{}", self.api(), w.id),
            "html_url": format!("{}/{full}/blob/{}/{}", self.html(), repo.default_branch, w.path),
            "badge_url": format!("{}/{full}/workflows/{}/badge.svg", self.html(), url_escape(&w.name)),
        })
    }

    pub(crate) fn run_json(&self, id: u64) -> Value {
        let Some(r) = self.runs.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&r.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}/actions/runs/{}", self.api(), r.id);
        let path = self
            .repos
            .get(&r.repo)
            .and_then(|x| x.workflows.get(&r.workflow_id))
            .map(|w| w.path.clone())
            .unwrap_or_default();
        let head_commit = self.objects.commit(&r.head_sha).map(|c| {
            json!({
                "id": c.sha,
                "tree_id": c.tree,
                "message": c.message,
                "timestamp": ts(c.committer.date),
                "author": { "name": c.author.name, "email": c.author.email },
                "committer": { "name": c.committer.name, "email": c.committer.email },
            })
        });
        json!({
            "id": r.id,
            "name": r.name,
            "node_id": node_id("WorkflowRun", r.id),
            "check_suite_id": r.check_suite_id,
            "check_suite_node_id": node_id("CheckSuite", r.check_suite_id),
            "head_branch": r.head_branch,
            "head_sha": r.head_sha,
            "path": format!("{path}@{}", r.head_branch),
            "run_number": r.run_number,
            "event": r.event,
            "display_title": r.display_title,
            "status": r.status,
            "conclusion": r.conclusion,
            "workflow_id": r.workflow_id,
            "url": api,
            "html_url": format!("{}/{full}/actions/runs/{}", self.html(), r.id),
            "pull_requests": r.pull_requests.iter().map(|n| self.pr_mini(&r.repo, *n)).collect::<Vec<_>>(),
            "created_at": ts(r.created_at),
            "updated_at": ts(r.updated_at),
            "actor": self.user_json(&r.actor),
            "run_attempt": r.run_attempt,
            "referenced_workflows": [],
            "run_started_at": ts(r.run_started_at),
            "triggering_actor": self.user_json(&r.triggering_actor),
            "jobs_url": format!("{api}/jobs"),
            "logs_url": format!("{api}/logs"),
            "check_suite_url": format!("{}/repos/{full}/check-suites/{}", self.api(), r.check_suite_id),
            "artifacts_url": format!("{api}/artifacts"),
            "cancel_url": format!("{api}/cancel"),
            "rerun_url": format!("{api}/rerun"),
            "previous_attempt_url": if r.run_attempt > 1 { json!(format!("{api}/attempts/{}", r.run_attempt - 1)) } else { Value::Null },
            "workflow_url": format!("{}/repos/{full}/actions/workflows/{}", self.api(), r.workflow_id),
            "head_commit": head_commit,
            "repository": self.repo_json(&r.repo),
            "head_repository": self.repo_json(&r.head_repo),
        })
    }

    pub(crate) fn job_json(&self, id: u64) -> Value {
        let Some(j) = self.jobs.get(&id) else {
            return Value::Null;
        };
        let Some(r) = self.runs.get(&j.run_id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&r.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let steps = vec![json!({
            "name": "Set up job",
            "status": if j.status == "queued" { "queued" } else { "completed" },
            "conclusion": if j.status == "queued" { Value::Null } else { json!("success") },
            "number": 1,
            "started_at": ts(j.started_at),
            "completed_at": ts(j.started_at),
        })];
        json!({
            "id": j.id,
            "run_id": j.run_id,
            "run_url": format!("{}/repos/{full}/actions/runs/{}", self.api(), j.run_id),
            "run_attempt": j.run_attempt,
            "node_id": node_id("CheckRun", j.id),
            "head_sha": r.head_sha,
            "url": format!("{}/repos/{full}/actions/jobs/{}", self.api(), j.id),
            "html_url": format!("{}/{full}/actions/runs/{}/job/{}", self.html(), j.run_id, j.id),
            "status": j.status,
            "conclusion": j.conclusion,
            "created_at": ts(j.created_at),
            "started_at": ts(j.started_at),
            "completed_at": j.completed_at.map(ts),
            "name": j.name,
            "steps": steps,
            "check_run_url": format!("{}/repos/{full}/check-runs/{}", self.api(), j.check_run_id),
            "labels": j.labels,
            "runner_id": j.runner_name.as_ref().map(|_| 1),
            "runner_name": j.runner_name,
            "runner_group_id": j.runner_name.as_ref().map(|_| 1),
            "runner_group_name": j.runner_name.as_ref().map(|_| "Default"),
            "workflow_name": r.name,
            "head_branch": r.head_branch,
        })
    }

    pub(crate) fn artifact_json(&self, id: u64) -> Value {
        let Some(a) = self.artifacts.get(&id) else {
            return Value::Null;
        };
        let full = self
            .repos
            .get(&a.repo)
            .map(|x| x.full_name())
            .unwrap_or_default();
        let api = format!("{}/repos/{full}/actions/artifacts/{}", self.api(), a.id);
        let run = self.runs.get(&a.run_id);
        let repo_id = self.repos.get(&a.repo).map(|r| r.id).unwrap_or(0);
        json!({
            "id": a.id,
            "node_id": node_id("Artifact", a.id),
            "name": a.name,
            "size_in_bytes": a.zip.len(),
            "url": api,
            "archive_download_url": format!("{api}/zip"),
            "expired": a.expired,
            "created_at": ts(a.created_at),
            "expires_at": ts(a.expires_at),
            "updated_at": ts(a.created_at),
            "digest": a.digest,
            "workflow_run": {
                "id": a.run_id,
                "repository_id": repo_id,
                "head_repository_id": run.and_then(|r| self.repos.get(&r.head_repo)).map(|r| r.id).unwrap_or(repo_id),
                "head_branch": run.map(|r| r.head_branch.clone()),
                "head_sha": run.map(|r| r.head_sha.clone()),
            },
        })
    }
}

fn reactions(url: &str) -> Value {
    json!({
        "url": url, "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
        "confused": 0, "heart": 0, "rocket": 0, "eyes": 0,
    })
}

fn app_permissions() -> Value {
    json!({
        "actions": "write", "checks": "write", "contents": "read", "issues": "write",
        "members": "read", "metadata": "read", "pull_requests": "write", "statuses": "write",
    })
}

/// Percent-encodes one path segment (label names have spaces).
pub(crate) fn url_escape(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// Percent-encodes a file path, keeping its slashes.
pub(crate) fn url_escape_path(s: &str) -> String {
    s.split('/').map(url_escape).collect::<Vec<_>>().join("/")
}
