//! What the authors of a PR's comments wrote themselves, as their own
//! deliveries showed it (`docs/contracts.md` §3): the command lines of each
//! comment and the sign-off bodies the verifier accepted. Someone with
//! write access can edit another user's comment; such an edit reaches
//! sweepgate only as a delivery whose `sender` is not the author, and it
//! is not recorded here. What sweepgate later reads back from the
//! conversation (acknowledgements and reuse commands for the checks, the
//! latest sign-off for `/verify` and `/ack-check`) is taken only as far as
//! this record vouches for it.
use std::collections::BTreeMap;

use sha2::{Digest, Sha256};
use sweepgate_core::checks::snapshot::Comment;
use sweepgate_core::ids::{CommentId, PrNumber, RepoName};

use crate::events::HandlerError;
use crate::store::{AuthoredEntry, Store, now_ms};

/// One PR's record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Authored {
    /// Comment id → its command lines as its author last wrote them.
    pub commands: BTreeMap<u64, Vec<String>>,
    /// Sign-off URL → SHA-256 of the body its author last wrote.
    pub signoffs: BTreeMap<String, String>,
}

pub(crate) fn digest(body: &str) -> String {
    hex::encode(Sha256::digest(body.as_bytes()))
}

impl Authored {
    pub(crate) async fn load(
        store: &Store,
        repo: &RepoName,
        pr: PrNumber,
    ) -> Result<Self, HandlerError> {
        let commands = store.authored_commands(repo, pr).await?;
        let signoffs = store.authored_signoffs(repo, pr).await?;
        Ok(Self {
            commands: commands.into_iter().map(|(c, l)| (c.0, l)).collect(),
            signoffs: signoffs.into_iter().collect(),
        })
    }

    /// Records the command lines of a comment its author wrote (created,
    /// or edited by the author).
    pub(crate) async fn record_commands(
        store: &Store,
        repo: &RepoName,
        pr: PrNumber,
        comment: u64,
        body: &str,
    ) -> Result<(), HandlerError> {
        let lines: Vec<String> = sweepgate_core::checks::command_lines(body)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        let a = Self::load(store, repo, pr).await?;
        if lines.is_empty() && !a.commands.contains_key(&comment) {
            return Ok(());
        }
        if a.commands.get(&comment) == Some(&lines) {
            return Ok(());
        }
        let entry = AuthoredEntry::Commands {
            comment: CommentId(comment),
            lines: &lines,
        };
        store.put_authored(repo, pr, &entry, now_ms()).await?;
        Ok(())
    }

    /// Records a sign-off body its author wrote.
    pub(crate) async fn record_signoff(
        store: &Store,
        repo: &RepoName,
        pr: PrNumber,
        url: &str,
        body: &str,
    ) -> Result<(), HandlerError> {
        let a = Self::load(store, repo, pr).await?;
        let d = digest(body);
        if a.signoffs.get(url) == Some(&d) {
            return Ok(());
        }
        let entry = AuthoredEntry::Signoff {
            url,
            body_sha256: &d,
        };
        store.put_authored(repo, pr, &entry, now_ms()).await?;
        Ok(())
    }

    /// Whether the sign-off at `url` still reads as its author wrote it.
    pub(crate) fn vouches_for_signoff(&self, url: &str, body: &str) -> bool {
        self.signoffs.get(url).is_some_and(|d| *d == digest(body))
    }

    /// Removes from an edited comment every command line its author did
    /// not write (an unedited comment is as its author wrote it).
    pub(crate) fn strip_foreign_commands(&self, c: &mut Comment, edited: bool) {
        if !edited {
            return;
        }
        let typed = self.commands.get(&c.id);
        let foreign: Vec<usize> = sweepgate_core::checks::command_lines(&c.body)
            .into_iter()
            .filter(|(_, l)| !typed.is_some_and(|t| t.contains(l)))
            .map(|(n, _)| n)
            .collect();
        if foreign.is_empty() {
            return;
        }
        c.body = c
            .body
            .split('\n')
            .enumerate()
            .filter(|(i, _)| !foreign.contains(&(i + 1)))
            .map(|(_, l)| l)
            .collect::<Vec<_>>()
            .join("\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_command_lines_of_an_edited_comment_are_dropped() {
        let mut a = Authored::default();
        a.commands.insert(7, vec!["/ack-check 3 fine".into()]);
        let mut c = Comment {
            id: 7,
            body: "ok\n/ack-check 3 fine\n/ack-check 5 added by someone else\n".into(),
            ..Comment::default()
        };
        let unedited = c.clone();
        let mut same = c.clone();
        a.strip_foreign_commands(&mut same, false);
        assert_eq!(same, unedited);
        a.strip_foreign_commands(&mut c, true);
        assert_eq!(c.body, "ok\n/ack-check 3 fine\n");
        // An edited comment sweepgate never saw its author write: no commands.
        let mut other = Comment {
            id: 8,
            body: "/use 1".into(),
            ..Comment::default()
        };
        a.strip_foreign_commands(&mut other, true);
        assert_eq!(other.body, "");
    }

    #[test]
    fn a_sign_off_is_vouched_for_only_as_written() {
        let mut a = Authored::default();
        a.signoffs.insert("u".into(), digest("LGTM"));
        assert!(a.vouches_for_signoff("u", "LGTM"));
        assert!(!a.vouches_for_signoff("u", "LGTM\n- [x] all"));
        assert!(!a.vouches_for_signoff("v", "LGTM"));
    }
}
