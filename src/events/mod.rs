//! Thin typed webhook payloads, the jobs' payload and the table of what
//! sweepgate handles (`table`).
//!
//! Every field is optional or defaulted and unknown fields are ignored, so a
//! field GitHub adds or drops never makes a delivery unreadable; actions are
//! strings, not closed enums, for the same reason.
pub(crate) mod payload;
pub(crate) mod router;
pub mod table;

pub(crate) use payload::*;
pub use router::{EventRouter, Handler, HandlerError, JobContext};
pub use table::{Disposition, HandlerId, disposition};

use sweepgate_core::ids::{PrNumber, RepoName};

/// A parsed delivery.
#[derive(Debug, Clone)]
pub enum Event {
    PullRequest(PullRequestEvent),
    IssueComment(IssueCommentEvent),
    PullRequestReview(PullRequestReviewEvent),
    PullRequestReviewComment(PullRequestReviewCommentEvent),
    CheckRun(CheckRunEvent),
    WorkflowRun(WorkflowRunEvent),
    WorkflowJob(WorkflowJobEvent),
    RepositoryDispatch(RepositoryDispatchEvent),
    Push(PushEvent),
    Installation(InstallationEvent),
    InstallationRepositories(InstallationEvent),
    Ping(PingEvent),
}

impl Event {
    /// The commit the event is about, where it names one (for log spans).
    pub(crate) fn head_sha(&self) -> Option<&str> {
        fn pr_head(pr: &payload::PullRequest) -> Option<&str> {
            pr.head.as_ref().map(|h| h.sha.as_str())
        }
        match self {
            Event::PullRequest(e) => pr_head(&e.pull_request),
            Event::PullRequestReview(e) => pr_head(&e.pull_request),
            Event::PullRequestReviewComment(e) => pr_head(&e.pull_request),
            Event::CheckRun(e) => Some(&e.check_run.head_sha),
            Event::WorkflowRun(e) => Some(&e.workflow_run.head_sha),
            Event::WorkflowJob(e) => Some(&e.workflow_job.head_sha),
            _ => None,
        }
    }
}

/// Why a body cannot be read as the event its header names.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PayloadError {
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the payload of a `{event}` event is not a JSON object")]
    NotAnObject { event: String },
    #[error("the payload of a `{event}` event does not fit: {message}")]
    Shape { event: String, message: String },
}

/// What a queued job carries: the delivery's event and action, so the
/// router reads the stored body as that event. Jobs queued by releases
/// before payloads existed carry `{}`; their event is their kind's first
/// part.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JobPayload {
    Delivery {
        event: String,
        action: Option<String>,
    },
}

impl JobPayload {
    pub fn delivery(event: &str, action: Option<&str>) -> Self {
        JobPayload::Delivery {
            event: event.to_owned(),
            action: action.map(str::to_owned),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }

    /// The payload a stored job carries; `None` for `{}` (or anything else
    /// no release wrote).
    pub fn read(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    /// The event whose body the job reads.
    pub fn event_of_job<'a>(text: &str, kind: &'a str) -> std::borrow::Cow<'a, str> {
        match Self::read(text) {
            Some(JobPayload::Delivery { event, .. }) => event.into(),
            None => table::event_of(kind).into(),
        }
    }
}

/// The facts the intake extracts from any payload, for storage and the
/// per-PR serialization key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Envelope {
    pub action: Option<String>,
    pub repository: Option<RepoName>,
    pub installation_id: Option<u64>,
    pub pr_number: Option<PrNumber>,
    pub default_branch: Option<String>,
}

impl Envelope {
    /// Jobs of one pull request run one at a time; other jobs of a repository
    /// are serialized per repository.
    pub(crate) fn serial_key(&self) -> Option<String> {
        let repo = self.repository.as_ref()?;
        Some(match self.pr_number {
            Some(n) => format!("{repo}#{n}"),
            None => repo.to_string(),
        })
    }
}

/// Parses the body (already known to be JSON) for the event the header names.
///
/// The typed structs are read straight from the bytes: a `Value` tree of a
/// 28 KB payload was a third of the intake's CPU, and serde skips the
/// fields no struct names without allocating. Errors read as before: JSON
/// syntax first (with its position), then "not an object", then the shape.
pub(crate) fn parse(event: &str, body: &[u8]) -> Result<(Envelope, Option<Event>), PayloadError> {
    let json = |e: serde_json::Error| PayloadError::Json {
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    };
    // Skipping a value does not check the UTF-8 of its strings; the stored
    // body must be text, so that is checked first. On bad bytes the tree
    // reader names the position, as it always did.
    if std::str::from_utf8(body).is_err() {
        let e = serde_json::from_slice::<serde_json::Value>(body)
            .err()
            .unwrap_or_else(|| serde::de::Error::custom("the body is not UTF-8"));
        return Err(json(e));
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(body).map_err(json)?;
    // Valid JSON: its first non-blank byte says what the value is.
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(PayloadError::NotAnObject {
            event: event.to_owned(),
        });
    }
    fn typed<'de, T: serde::Deserialize<'de>>(
        event: &str,
        body: &'de [u8],
    ) -> Result<T, PayloadError> {
        serde_json::from_slice(body).map_err(|e| PayloadError::Shape {
            event: event.to_owned(),
            message: strip_position(&e.to_string()),
        })
    }
    let common: Common = typed(event, body)?;
    // The header's event name → the typed struct it is read as.
    macro_rules! by_name {
        ($($name:literal $variant:ident)*) => {
            match event {
                $($name => Some(Event::$variant(typed(event, body)?)),)*
                _ => None,
            }
        };
    }
    let ev = by_name! {
        "pull_request" PullRequest "issue_comment" IssueComment
        "pull_request_review" PullRequestReview
        "pull_request_review_comment" PullRequestReviewComment
        "check_run" CheckRun "workflow_run" WorkflowRun "workflow_job" WorkflowJob
        "repository_dispatch" RepositoryDispatch "push" Push "installation" Installation
        "installation_repositories" InstallationRepositories "ping" Ping
    };
    let pr_number = ev.as_ref().and_then(Event::pr_number);
    Ok((
        Envelope {
            action: common.action,
            default_branch: common
                .repository
                .as_ref()
                .and_then(|r| r.default_branch.clone()),
            repository: common
                .repository
                .filter(|r| !r.full_name.is_empty())
                .map(|r| RepoName(r.full_name)),
            installation_id: common.installation.map(|i| i.id),
            pr_number,
        },
        ev,
    ))
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

impl Event {
    /// The pull request the event is about, where there is exactly one.
    pub(crate) fn pr_number(&self) -> Option<PrNumber> {
        match self {
            Event::PullRequest(e) => Some(e.pull_request.number),
            Event::IssueComment(e) => e.issue.pull_request.as_ref().map(|_| e.issue.number),
            Event::PullRequestReview(e) => Some(e.pull_request.number),
            Event::PullRequestReviewComment(e) => Some(e.pull_request.number),
            Event::CheckRun(e) => single_pr(&e.check_run.pull_requests),
            Event::WorkflowRun(e) => single_pr(&e.workflow_run.pull_requests),
            Event::RepositoryDispatch(e) => e
                .client_payload
                .get("pr-number")
                .and_then(|v| v.as_str().and_then(|s| s.parse().ok()).or(v.as_u64()))
                .map(PrNumber),
            _ => None,
        }
    }
}

fn single_pr(prs: &[PrRef]) -> Option<PrNumber> {
    match prs {
        [one] => Some(one.number),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_payloads_old_and_new() {
        let p = JobPayload::delivery("pull_request", Some("opened"));
        assert_eq!(
            p.to_json(),
            r#"{"type":"delivery","event":"pull_request","action":"opened"}"#
        );
        assert_eq!(JobPayload::read(&p.to_json()), Some(p.clone()));
        assert_eq!(
            JobPayload::event_of_job(&p.to_json(), "push"),
            "pull_request"
        );
        // A job an older release queued.
        assert_eq!(JobPayload::read("{}"), None);
        assert_eq!(
            JobPayload::event_of_job("{}", "workflow_run.completed"),
            "workflow_run"
        );
        assert_eq!(
            JobPayload::event_of_job("{}", "repository_dispatch"),
            "repository_dispatch"
        );
    }

    #[test]
    fn malformed_json_names_position() {
        let err = parse("pull_request", b"{\"action\": \n  ").unwrap_err();
        match err {
            PayloadError::Json { line, .. } => assert_eq!(line, 2),
            other => panic!("{other}"),
        }
    }

    /// Read from the bytes, errors keep their order and text: syntax (with
    /// its position, bad UTF-8 in a string the structs skip included),
    /// then not an object, then the shape without a position.
    #[test]
    fn errors_read_as_with_a_tree() {
        let bad_utf8 = b"{\"action\":\"opened\",\n\"unread\":\"\xff\"}";
        match parse("pull_request", bad_utf8).unwrap_err() {
            PayloadError::Json { line, .. } => assert_eq!(line, 2),
            other => panic!("{other}"),
        }
        for not_object in [&b" [1]"[..], b"null", b"\"x\""] {
            assert!(matches!(
                parse("ping", not_object),
                Err(PayloadError::NotAnObject { .. })
            ));
        }
        // A shape error early and a syntax error later: syntax wins.
        let both = br#"{"action": 7, "x": }"#;
        assert!(matches!(
            parse("ping", both),
            Err(PayloadError::Json { .. })
        ));
        let shape = parse("ping", br#"{"action": 7}"#).unwrap_err().to_string();
        assert_eq!(
            shape,
            "the payload of a `ping` event does not fit: invalid type: integer `7`, expected a string"
        );
    }

    #[test]
    fn wrong_shape_is_precise() {
        let err = parse(
            "pull_request",
            br#"{"action":"opened","pull_request":{"number":"x"}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("pull_request"), "{err}");
    }

    /// Issue 18, item 15: GitHub sends `null` for these; each reads.
    #[test]
    fn nulls_github_sends_deserialize() {
        let (env, ev) = parse(
            "workflow_run",
            br#"{"action":"completed","workflow_run":{"id":7,"head_sha":"a","pull_requests":null}}"#,
        )
        .unwrap();
        assert_eq!(env.pr_number, None);
        assert!(
            matches!(ev, Some(Event::WorkflowRun(e)) if e.workflow_run.pull_requests.is_empty())
        );
        let (_, ev) = parse(
            "repository_dispatch",
            br#"{"action":"stage-results-completed","client_payload":null}"#,
        )
        .unwrap();
        assert!(matches!(ev, Some(Event::RepositoryDispatch(e)) if e.client_payload.is_empty()));
        let (_, ev) = parse(
            "workflow_job",
            br#"{"action":"queued","workflow_job":{"id":1,"run_id":7,"labels":[null,"gpu",null]}}"#,
        )
        .unwrap();
        assert!(matches!(ev, Some(Event::WorkflowJob(e)) if e.workflow_job.labels == ["gpu"]));
        let (_, ev) = parse(
            "check_run",
            br#"{"action":"completed","check_run":{"id":1,"pull_requests":null}}"#,
        )
        .unwrap();
        assert!(matches!(ev, Some(Event::CheckRun(_))));
    }

    /// Issue 18, item 8: a head repository GitHub no longer shows (a
    /// deleted fork) is a fork.
    #[test]
    fn a_deleted_fork_is_a_fork() {
        let pr = |head_repo: &str| {
            format!(
                r#"{{"action":"labeled","pull_request":{{"number":3,"head":{{"ref":"x","sha":"a","repo":{head_repo}}},"base":{{"ref":"main","sha":"b","repo":{{"full_name":"o/r"}}}}}}}}"#
            )
        };
        let fork = |body: String| match parse("pull_request", body.as_bytes()).unwrap().1 {
            Some(Event::PullRequest(e)) => e.pull_request.is_fork(),
            _ => panic!("not a pull_request"),
        };
        assert!(fork(pr("null")));
        assert!(fork(pr(r#"{"full_name":"someone/r"}"#)));
        assert!(!fork(pr(r#"{"full_name":"o/r"}"#)));
        assert!(!fork(pr(r#"{"full_name":"O/R"}"#)));
    }

    #[test]
    fn array_is_not_an_object() {
        assert!(matches!(
            parse("ping", b"[1]"),
            Err(PayloadError::NotAnObject { .. })
        ));
    }
}
