//! The one table of webhook events: each (event, action) sweepgate reads,
//! and which handlers act on it. The intake's dispositions, the router's
//! dispatch, the App manifest's events (`crate::deploy`) and the webhook
//! fuzz target all derive from it. An (event, action) no handler acts on is
//! stored as ignored and never queued.

/// The handlers, by what they are called in logs and job outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HandlerId {
    ContributionGuide,
    Commands,
    SignoffVerifier,
    RecipeLint,
    ConfigCheck,
    SweepGate,
    RunResults,
    SweepJobs,
    StagingCallback,
    LegacyVerdicts,
}

impl HandlerId {
    pub const ALL: [HandlerId; 10] = [
        HandlerId::ContributionGuide,
        HandlerId::Commands,
        HandlerId::SignoffVerifier,
        HandlerId::RecipeLint,
        HandlerId::ConfigCheck,
        HandlerId::SweepGate,
        HandlerId::RunResults,
        HandlerId::SweepJobs,
        HandlerId::StagingCallback,
        HandlerId::LegacyVerdicts,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HandlerId::ContributionGuide => "guide",
            HandlerId::Commands => "commands",
            HandlerId::SignoffVerifier => "verifier",
            HandlerId::RecipeLint => "recipe-lint",
            HandlerId::ConfigCheck => "config-check",
            HandlerId::SweepGate => "sweep-gate",
            HandlerId::RunResults => "run-results",
            HandlerId::SweepJobs => "sweep-jobs",
            HandlerId::StagingCallback => "staging-callback",
            HandlerId::LegacyVerdicts => "legacy-verdict",
        }
    }
}

/// One row: an event, one of its actions (`None`: every action, or an
/// event that has none), and who acts on it.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub event: &'static str,
    pub action: Option<&'static str>,
    /// Empty: stored as ignored, for `why`.
    pub handlers: &'static [HandlerId],
    pub why: &'static str,
}

use HandlerId::*;

const fn on(event: &'static str, action: &'static str, handlers: &'static [HandlerId]) -> Route {
    Route {
        event,
        action: Some(action),
        handlers,
        why: "",
    }
}

const fn ignored(event: &'static str, action: Option<&'static str>, why: &'static str) -> Route {
    Route {
        event,
        action,
        handlers: &[],
        why,
    }
}

const fn every_action(event: &'static str, handlers: &'static [HandlerId]) -> Route {
    Route {
        event,
        action: None,
        handlers,
        why: "",
    }
}

/// Who acts on a PR that opens (or reopens), becomes ready or is pushed to.
const OPENED: &[HandlerId] = &[
    ContributionGuide,
    SignoffVerifier,
    RecipeLint,
    ConfigCheck,
    SweepGate,
];
const READY: &[HandlerId] = &[ContributionGuide, RecipeLint, SweepGate];
const PUSHED: &[HandlerId] = &[SignoffVerifier, RecipeLint, ConfigCheck, SweepGate];
const COMMENT: &[HandlerId] = &[Commands, SignoffVerifier, LegacyVerdicts];

/// Why the events no handler takes are ignored.
const EDITED: &str = "a PR's title and body gate nothing (sign-offs are comments and reviews)";
const CLOSED: &str = "nothing to do: a closed PR's open sweeps run to their end, followed by their `workflow_run` events";
const DRAFT: &str = "a draft is re-checked when it is ready for review";
const REQUESTED: &str = "a requested run has no jobs yet; `in_progress` follows";
const INSTALLATION: &str =
    "sweepgate asks GitHub for an installation's token when a delivery needs it";

/// Every event sweepgate reads, in the order the manifest lists them.
pub const ROUTES: &[Route] = &[
    on("pull_request", "opened", OPENED),
    on("pull_request", "reopened", OPENED),
    on("pull_request", "ready_for_review", READY),
    on("pull_request", "synchronize", PUSHED),
    on("pull_request", "labeled", &[SweepGate]),
    on("pull_request", "unlabeled", &[SweepGate]),
    ignored("pull_request", Some("edited"), EDITED),
    ignored("pull_request", Some("closed"), CLOSED),
    ignored("pull_request", Some("converted_to_draft"), DRAFT),
    on("issue_comment", "created", COMMENT),
    on("issue_comment", "edited", COMMENT),
    on("pull_request_review", "submitted", &[SignoffVerifier]),
    on("pull_request_review", "edited", &[SignoffVerifier]),
    on("pull_request_review_comment", "created", &[SignoffVerifier]),
    on("pull_request_review_comment", "edited", &[SignoffVerifier]),
    on("check_run", "created", &[SweepJobs]),
    on("check_run", "completed", &[SweepJobs]),
    on("check_run", "rerequested", &[SweepJobs]),
    on("workflow_run", "in_progress", &[RunResults]),
    on("workflow_run", "completed", &[RunResults]),
    ignored("workflow_run", Some("requested"), REQUESTED),
    on("workflow_job", "queued", &[SweepJobs]),
    on("workflow_job", "in_progress", &[SweepJobs]),
    on("workflow_job", "completed", &[SweepJobs]),
    on("workflow_job", "waiting", &[SweepJobs]),
    every_action("repository_dispatch", &[StagingCallback]),
    every_action("push", &[ConfigCheck]),
    ignored("installation", None, INSTALLATION),
    ignored("installation_repositories", None, INSTALLATION),
    ignored("ping", None, "ping"),
];

/// What the intake does with an (event, action) pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    /// Stored with a job of this kind.
    Handle { kind: String },
    /// Stored, no job; the reason is recorded.
    Ignore(String),
}

fn route(event: &str, action: Option<&str>) -> Option<&'static Route> {
    ROUTES
        .iter()
        .find(|r| r.event == event && (r.action.is_none() || r.action == action))
}

/// The job kind of a routed (event, action): `event.action`, or the event
/// for a row of every action.
fn kind(r: &Route) -> String {
    match r.action {
        Some(a) => format!("{}.{a}", r.event),
        None => r.event.to_owned(),
    }
}

/// The intake's decision: a job when a handler acts on it, else ignored
/// with the reason.
pub fn disposition(event: &str, action: Option<&str>) -> Disposition {
    match route(event, action) {
        Some(r) if !r.handlers.is_empty() => Disposition::Handle { kind: kind(r) },
        Some(r) => Disposition::Ignore(r.why.to_owned()),
        None if !ROUTES.iter().any(|r| r.event == event) => {
            Disposition::Ignore(format!("event `{event}` is not handled"))
        }
        None => match action {
            Some(a) => Disposition::Ignore(format!("action `{a}` of `{event}` is not handled")),
            None => Disposition::Ignore(format!("`{event}` without an action")),
        },
    }
}

/// The handlers of a job kind (none for a kind no release queued).
pub fn handlers(job_kind: &str) -> &'static [HandlerId] {
    ROUTES
        .iter()
        .find(|r| kind(r) == job_kind)
        .map_or(&[], |r| r.handlers)
}

/// The event a job kind belongs to.
pub fn event_of(job_kind: &str) -> &str {
    job_kind.split('.').next().unwrap_or(job_kind)
}

/// Every event of the table, once, in table order.
pub fn events() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in ROUTES {
        if !out.contains(&r.event) {
            out.push(r.event);
        }
    }
    out
}

/// The events some handler acts on: what the App subscribes to.
pub fn handled_events() -> Vec<&'static str> {
    events()
        .into_iter()
        .filter(|e| {
            ROUTES
                .iter()
                .any(|r| r.event == *e && !r.handlers.is_empty())
        })
        .collect()
}

/// Every (job kind, handler) pair, for tests and documentation.
pub fn handled_kinds() -> Vec<(String, HandlerId)> {
    ROUTES
        .iter()
        .flat_map(|r| r.handlers.iter().map(move |h| (kind(r), *h)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispositions() {
        assert_eq!(
            disposition("pull_request", Some("opened")),
            Disposition::Handle {
                kind: "pull_request.opened".into()
            }
        );
        for (event, action) in [
            ("pull_request", "assigned"),
            ("pull_request", "closed"),
            ("star", "created"),
            ("installation", "created"),
        ] {
            let d = disposition(event, Some(action));
            assert!(
                matches!(d, Disposition::Ignore(_)),
                "{event}.{action}: {d:?}"
            );
        }
        assert_eq!(
            disposition("push", None),
            Disposition::Handle {
                kind: "push".into()
            }
        );
        assert_eq!(
            disposition("repository_dispatch", Some("stage-results-completed")),
            Disposition::Handle {
                kind: "repository_dispatch".into()
            }
        );
    }

    #[test]
    fn every_row_is_listed_once_and_every_handler_has_a_row() {
        for (i, r) in ROUTES.iter().enumerate() {
            assert!(
                !ROUTES[..i]
                    .iter()
                    .any(|o| o.event == r.event && (o.action.is_none() || o.action == r.action)),
                "{} {:?} is listed twice or shadowed",
                r.event,
                r.action
            );
            assert_eq!(r.handlers.is_empty(), !r.why.is_empty(), "{r:?}");
        }
        for h in HandlerId::ALL {
            assert!(handled_kinds().iter().any(|(_, x)| *x == h), "{h:?}");
        }
    }
}
