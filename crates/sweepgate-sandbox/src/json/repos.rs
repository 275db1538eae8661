//! Repositories, commits and the files of a diff.
use super::{node_id, url_escape_path};
use crate::git::FileChange;
use crate::state::{World, ts};
use serde_json::{Value, json};

impl World {
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
    pub(super) fn repo_mini(&self, key: &str) -> Value {
        match self.repos.get(key) {
            Some(r) => json!({
                "id": r.id,
                "url": format!("{}/repos/{}", self.api(), r.full_name()),
                "name": r.name,
            }),
            None => Value::Null,
        }
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
}
