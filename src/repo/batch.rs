//! One `git cat-file --batch` process per repository handle: every object
//! read (commits, blobs) is a line on its stdin and an answer on its
//! stdout, so a lint or a replay of many commits spawns no process per
//! file. The answer's first line is the fixed protocol of
//! `git-cat-file(1)` (`<oid> <type> <size>`, `<name> missing`,
//! `<name> ambiguous`), never git's translated messages.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::RepoError;

/// What the batch process answered for one object name.
#[derive(Debug)]
pub(super) enum Answer {
    Found {
        oid: String,
        kind: String,
        body: Vec<u8>,
    },
    Missing,
    Ambiguous,
    /// The object is larger than the cap the caller gave; its bytes were
    /// read and dropped.
    TooLarge {
        size: u64,
    },
}

pub(super) struct Batch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Batch {
    /// Starts `cmd` (git with the handle's fixed options) as
    /// `cat-file --batch`.
    pub(super) fn spawn(mut cmd: Command) -> Result<Self, RepoError> {
        let mut child = cmd
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| RepoError::Spawn(format!("git cat-file: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(RepoError::Spawn("git cat-file: no pipes".into()));
        };
        Ok(Self {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    /// Asks for one object. `name` must hold no newline (callers check).
    pub(super) async fn get(
        &mut self,
        name: &str,
        cap: u64,
        timeout: Duration,
    ) -> Result<Answer, RepoError> {
        match tokio::time::timeout(timeout, self.exchange(name, cap)).await {
            Ok(r) => r,
            Err(_) => Err(RepoError::Git {
                args: "cat-file --batch".into(),
                status: "timeout".into(),
                stderr: format!("no answer for {name} within {timeout:?}"),
            }),
        }
    }

    async fn exchange(&mut self, name: &str, cap: u64) -> Result<Answer, RepoError> {
        let mut line = name.as_bytes().to_vec();
        line.push(b'\n');
        if self.stdin.write_all(&line).await.is_err() || self.stdin.flush().await.is_err() {
            return Err(self.died().await);
        }
        let mut header = String::new();
        let n = self
            .stdout
            .read_line(&mut header)
            .await
            .map_err(|e| RepoError::Spawn(e.to_string()))?;
        if n == 0 {
            return Err(self.died().await);
        }
        let header = header.trim_end_matches('\n');
        if let Some(rest) = header.strip_prefix(name) {
            match rest {
                " missing" => return Ok(Answer::Missing),
                " ambiguous" => return Ok(Answer::Ambiguous),
                _ => {}
            }
        }
        let mut parts = header.split(' ');
        let (Some(oid), Some(kind), Some(size), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(self.output(format!("bad header {header:?}")));
        };
        let Ok(size) = size.parse::<u64>() else {
            return Err(self.output(format!("bad size in {header:?}")));
        };
        let (oid, kind) = (oid.to_owned(), kind.to_owned());
        if size > cap {
            // Drain the object (and its newline) so the stream stays in step.
            let mut sink = (&mut self.stdout).take(size + 1);
            tokio::io::copy(&mut sink, &mut tokio::io::sink())
                .await
                .map_err(|e| RepoError::Spawn(e.to_string()))?;
            return Ok(Answer::TooLarge { size });
        }
        let len = usize::try_from(size).map_err(|_| self.output(format!("size {size}")))?;
        let mut body = vec![0u8; len + 1];
        self.stdout
            .read_exact(&mut body)
            .await
            .map_err(|e| RepoError::Spawn(e.to_string()))?;
        if body.pop() != Some(b'\n') {
            return Err(self.output("object not followed by a newline".into()));
        }
        Ok(Answer::Found { oid, kind, body })
    }

    fn output(&self, message: String) -> RepoError {
        RepoError::Output {
            args: "cat-file --batch".into(),
            message,
        }
    }

    /// The process ended: its exit status and stderr say why (for example
    /// "not a git repository").
    async fn died(&mut self) -> RepoError {
        let status = match tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(Ok(s)) => s.code().map_or_else(|| "signal".into(), |c| c.to_string()),
            _ => "unknown".into(),
        };
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ =
                tokio::time::timeout(Duration::from_secs(5), e.read_to_string(&mut stderr)).await;
        }
        RepoError::Git {
            args: "cat-file --batch".into(),
            status,
            stderr: stderr.trim().to_owned(),
        }
    }
}
