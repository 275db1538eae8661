//! The conversation of issues and pull requests: comments and labels.
use super::obj;
use crate::state::{IssueComment, Label, SResult, SandboxError, TimelineItem, World};
use serde_json::{Value, json};

impl World {
    pub(crate) fn add_comment(
        &mut self,
        key: &str,
        number: u64,
        user: &str,
        association: &str,
        body: &str,
        via_app: bool,
    ) -> SResult<u64> {
        self.issue(key, number)?;
        if body.chars().count() > 65536 {
            return Err(SandboxError::validation("IssueComment", "body", "too_long"));
        }
        self.account(user);
        let id = self.ids.next("comment");
        let now = self.now();
        self.comments.insert(
            id,
            IssueComment {
                id,
                repo: key.to_string(),
                number,
                user: user.to_string(),
                author_association: association.to_string(),
                body: body.to_string(),
                created_at: now,
                updated_at: now,
                via_app,
            },
        );
        if let Ok(issue) = self.issue_mut(key, number) {
            issue.updated_at = now;
            issue.timeline.push(TimelineItem::Comment(id));
        }
        self.emit_comment(id, "created", user, None);
        Ok(id)
    }

    fn emit_comment(&mut self, id: u64, action: &str, sender: &str, changes: Option<Value>) {
        let Some(c) = self.comments.get(&id).cloned() else {
            return;
        };
        let mut payload = obj(json!({ "action": action }));
        if let Some(ch) = changes {
            payload.insert("changes".into(), ch);
        }
        payload.insert("issue".into(), self.issue_json(&c.repo, c.number));
        payload.insert("comment".into(), self.comment_json(id));
        self.emit("issue_comment", &c.repo, sender, payload);
    }

    pub(crate) fn edit_comment(&mut self, id: u64, body: &str, sender: &str) -> SResult<()> {
        let now = self.now();
        let c = self
            .comments
            .get_mut(&id)
            .ok_or_else(SandboxError::not_found)?;
        let from = std::mem::replace(&mut c.body, body.to_string());
        c.updated_at = now;
        self.emit_comment(
            id,
            "edited",
            sender,
            Some(json!({ "body": { "from": from } })),
        );
        Ok(())
    }

    pub(crate) fn delete_comment(&mut self, id: u64, sender: &str) -> SResult<()> {
        if !self.comments.contains_key(&id) {
            return Err(SandboxError::not_found());
        }
        self.emit_comment(id, "deleted", sender, None);
        if let Some(c) = self.comments.remove(&id)
            && let Ok(issue) = self.issue_mut(&c.repo, c.number)
        {
            issue
                .timeline
                .retain(|t| !matches!(t, TimelineItem::Comment(x) if *x == id));
        }
        Ok(())
    }

    fn ensure_label(&mut self, key: &str, name: &str) -> SResult<String> {
        let lk = name.to_ascii_lowercase();
        if let Some(l) = self.repo(key)?.labels.get(&lk) {
            return Ok(l.name.clone());
        }
        let id = self.ids.next("label");
        let color = World::label_color(name);
        self.repo_mut(key)?.labels.insert(
            lk,
            Label {
                id,
                name: name.to_string(),
                color,
                description: None,
            },
        );
        Ok(name.to_string())
    }

    /// Adds labels (creating unknown ones, as GitHub does) and sends one
    /// `labeled` per label that was not already there.
    pub(crate) fn add_labels(
        &mut self,
        key: &str,
        number: u64,
        names: &[String],
        sender: &str,
    ) -> SResult<()> {
        self.issue(key, number)?;
        for raw in names {
            let name = raw.trim();
            if name.is_empty() {
                return Err(SandboxError::validation("Label", "name", "missing_field"));
            }
            let name = self.ensure_label(key, name)?;
            let issue = self.issue_mut(key, number)?;
            if issue.labels.iter().any(|l| l.eq_ignore_ascii_case(&name)) {
                continue;
            }
            issue.labels.push(name.clone());
            let label = self.label_json(key, &name);
            self.push_event(
                key,
                number,
                "labeled",
                sender,
                json!({ "label": { "name": name, "color": label["color"] } }),
            );
            if self.pull(key, number).is_ok() {
                self.emit_pr(
                    key,
                    number,
                    "labeled",
                    sender,
                    obj(json!({ "label": label })),
                );
            }
        }
        Ok(())
    }

    pub(crate) fn remove_label(
        &mut self,
        key: &str,
        number: u64,
        name: &str,
        sender: &str,
    ) -> SResult<()> {
        let issue = self.issue_mut(key, number)?;
        let Some(pos) = issue
            .labels
            .iter()
            .position(|l| l.eq_ignore_ascii_case(name))
        else {
            return Err(SandboxError::new(404, "Label does not exist"));
        };
        let name = issue.labels.remove(pos);
        let label = self.label_json(key, &name);
        self.push_event(
            key,
            number,
            "unlabeled",
            sender,
            json!({ "label": { "name": name, "color": label["color"] } }),
        );
        if self.pull(key, number).is_ok() {
            self.emit_pr(
                key,
                number,
                "unlabeled",
                sender,
                obj(json!({ "label": label })),
            );
        }
        Ok(())
    }

    pub(crate) fn set_labels(
        &mut self,
        key: &str,
        number: u64,
        names: &[String],
        sender: &str,
    ) -> SResult<()> {
        let current = self.issue(key, number)?.labels.clone();
        for l in &current {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(l)) {
                self.remove_label(key, number, l, sender)?;
            }
        }
        self.add_labels(key, number, names, sender)
    }
}
