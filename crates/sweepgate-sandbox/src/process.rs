//! `cargo xtask sandbox`: the sandbox GitHub as its own process, seeded with
//! a world for reliability runs, plus a small JSON control API under
//! `/_sandbox/control/` through which a harness in another process creates
//! activity, takes the signed deliveries and reads the effects. The control
//! API exists only in this process (`Sandbox::start` never serves it).
use crate::demo::{OWNER, REPO};
use crate::{PullRequestSpec, RunSpec, Sandbox, SandboxConfig, SandboxError};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The seeded world's names, for the harness.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorldInfo {
    pub owner: String,
    pub repo: String,
    pub app_id: u64,
    pub webhook_secret: String,
    /// A maintainer (`maintain` role, association MEMBER).
    pub maintainer: String,
    /// A PR with a completed, labelled sweep run that `/use <run>` stages.
    pub use_pr: u64,
    pub use_run: u64,
    /// The label that starts a sweep (dispatch mode: a workflow dispatch).
    pub sweep_label: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewPrs {
    pub count: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewComment {
    pub pr: u64,
    pub user: String,
    pub association: String,
    pub body: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewLabel {
    pub pr: u64,
    pub label: String,
    pub by: String,
}

/// A delivery as GitHub would post it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignedDelivery {
    pub id: String,
    pub event: String,
    pub body: String,
    /// `X-Hub-Signature-256`.
    pub signature: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EffectComment {
    pub pr: u64,
    pub id: u64,
    pub user: String,
    pub by_app: bool,
    /// The leading `<!-- … -->` marker of a bot comment.
    pub marker: Option<String>,
    pub body: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EffectDispatch {
    pub run_id: u64,
    pub sweep_id: Option<String>,
    pub pr: Option<String>,
}

/// What the app did on the sandbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Effects {
    pub comments: Vec<EffectComment>,
    pub workflow_dispatches: Vec<EffectDispatch>,
    /// The idempotency key of every staging request received (at-least-once).
    pub staging_requests: Vec<String>,
    /// Keys staged: the results repository stages each key once.
    pub staged_keys: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// The benchmark repository in dispatch mode, a maintainer and a PR
    /// with a completed sweep run.
    Reliability,
}

#[derive(Debug, Clone, clap::Args)]
pub struct SandboxArgs {
    /// Address to serve the GitHub API and the control API on.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
    #[arg(long, value_enum, default_value = "reliability")]
    pub scenario: Scenario,
    /// Seed of the sandbox's random choices (delivery ids, tokens).
    #[arg(long, default_value = "1")]
    pub seed: u64,
}

struct Control {
    sandbox: Sandbox,
    world: WorldInfo,
    next_branch: AtomicU64,
}

type Shared = Arc<Control>;
type Reply<T> = Result<Json<T>, (StatusCode, String)>;

fn fail(e: SandboxError) -> (StatusCode, String) {
    (StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
}

const MAINTAINER: &str = "maint";
const SWEEP_LABEL: &str = "full-sweep-fail-fast";

/// Runs the sandbox until the process is killed.
pub async fn run(args: SandboxArgs) -> anyhow::Result<()> {
    let config = SandboxConfig {
        real_time: true,
        seed: args.seed,
        ..SandboxConfig::default()
    };
    // Routes exist before the world is seeded; they answer 503 until then.
    let slot: Arc<std::sync::OnceLock<Shared>> = Arc::default();
    let control = Router::new()
        .route("/_sandbox/control/world", get(world))
        .route("/_sandbox/control/prs", post(open_prs))
        .route("/_sandbox/control/comments", post(comment))
        .route("/_sandbox/control/labels", post(label))
        .route("/_sandbox/control/deliveries", post(deliveries))
        .route("/_sandbox/control/effects", get(effects))
        .with_state(slot.clone());
    let (sandbox, base) = Sandbox::bind_with(config, &args.listen, control).await?;
    let world = match args.scenario {
        Scenario::Reliability => seed_reliability(&sandbox).map_err(|e| anyhow::anyhow!("{e}"))?,
    };
    let _ = slot.set(Arc::new(Control {
        sandbox,
        world,
        next_branch: AtomicU64::new(1),
    }));
    println!("sandbox {base}");
    use std::io::Write;
    std::io::stdout().flush()?;
    tokio::signal::ctrl_c().await?;
    Ok(())
}

/// The benchmark repository in dispatch mode, the results repository, a
/// maintainer, and PR #1 whose labelled sweep run completed with results.
fn seed_reliability(s: &Sandbox) -> Result<WorldInfo, SandboxError> {
    crate::demo::seed(s)?;
    s.set_permission(OWNER, REPO, MAINTAINER, "maintain", "maintain")?;

    let branch = "rel-use";
    s.create_branch(OWNER, REPO, branch, "main")?;
    let head = s.commit_as(
        OWNER,
        REPO,
        branch,
        &crate::demo::tp4_change(),
        "Add a TP4 point",
        "vendor-dev",
    )?;
    let pr =
        s.open_pr(PullRequestSpec::new(OWNER, REPO, branch, "vendor-dev").title("TP4 point"))?;
    pr.add_label(SWEEP_LABEL, MAINTAINER)?;
    let run = s.add_workflow_run(
        RunSpec::new(OWNER, REPO, "run-sweep.yml", &head)
            .branch(branch)
            .status("in_progress"),
    )?;
    s.add_job(
        run,
        "single-node 8k1k / benchmark (tp4 c1-64)",
        Some("success"),
    )?;
    s.add_artifact(
        run,
        "results_bmk",
        [("agg_bmk.json", crate::demo::bench_rows())],
    )?;
    s.add_artifact(
        run,
        "eval_results_all",
        [("agg_eval_all.json", crate::demo::eval_rows())],
    )?;
    s.complete_run(run, "success")?;
    // The set-up is not news to the app.
    s.take_deliveries();
    Ok(WorldInfo {
        owner: OWNER.into(),
        repo: REPO.into(),
        app_id: s.app_id(),
        webhook_secret: s.webhook_secret(),
        maintainer: MAINTAINER.into(),
        use_pr: pr.number,
        use_run: run,
        sweep_label: SWEEP_LABEL.into(),
    })
}

/// The control state, once seeding finished.
fn ready(slot: &std::sync::OnceLock<Shared>) -> Result<Shared, (StatusCode, String)> {
    slot.get()
        .cloned()
        .ok_or((StatusCode::SERVICE_UNAVAILABLE, "seeding".into()))
}

type Slot = State<Arc<std::sync::OnceLock<Shared>>>;

async fn world(State(slot): Slot) -> Reply<WorldInfo> {
    Ok(Json(ready(&slot)?.world.clone()))
}

/// Opens `count` PRs, each on its own branch with the TP4 change.
async fn open_prs(State(slot): Slot, Json(req): Json<NewPrs>) -> Reply<Vec<u64>> {
    let c = ready(&slot)?;
    let s = &c.sandbox;
    let mut numbers = Vec::new();
    for _ in 0..req.count {
        let branch = format!("rel-{}", c.next_branch.fetch_add(1, Ordering::SeqCst));
        s.create_branch(OWNER, REPO, &branch, "main")
            .map_err(fail)?;
        s.commit_as(
            OWNER,
            REPO,
            &branch,
            &crate::demo::tp4_change(),
            "Add a TP4 point",
            "vendor-dev",
        )
        .map_err(fail)?;
        let pr = s
            .open_pr(PullRequestSpec::new(OWNER, REPO, &branch, "vendor-dev").title("TP4 point"))
            .map_err(fail)?;
        numbers.push(pr.number);
    }
    Ok(Json(numbers))
}

async fn comment(State(slot): Slot, Json(req): Json<NewComment>) -> Reply<u64> {
    let c = ready(&slot)?;
    let id = c
        .sandbox
        .post_comment(OWNER, REPO, req.pr, &req.user, &req.association, &req.body)
        .map_err(fail)?;
    Ok(Json(id))
}

async fn label(State(slot): Slot, Json(req): Json<NewLabel>) -> Reply<()> {
    let c = ready(&slot)?;
    c.sandbox
        .add_label(OWNER, REPO, req.pr, &req.label, &req.by)
        .map_err(fail)?;
    Ok(Json(()))
}

/// Takes the deliveries produced since the last call, oldest first.
async fn deliveries(State(slot): Slot) -> Reply<Vec<SignedDelivery>> {
    let c = ready(&slot)?;
    Ok(Json(
        c.sandbox
            .take_deliveries()
            .into_iter()
            .map(|d| SignedDelivery {
                id: d.id,
                event: d.event,
                body: String::from_utf8_lossy(&d.body).into_owned(),
                signature: d.signature_256,
            })
            .collect(),
    ))
}

async fn effects(State(slot): Slot) -> Reply<Effects> {
    let c = ready(&slot)?;
    let s = &c.sandbox;
    let prs: BTreeSet<u64> = s
        .world()
        .comments
        .values()
        .filter(|cm| cm.repo == super::key(OWNER, REPO))
        .map(|cm| cm.number)
        .collect();
    let mut comments = Vec::new();
    for pr in prs {
        for cm in s.comments(OWNER, REPO, pr) {
            let marker = cm
                .body
                .lines()
                .next()
                .filter(|l| cm.by_app && l.starts_with("<!--"))
                .map(str::to_owned);
            comments.push(EffectComment {
                pr,
                id: cm.id,
                user: cm.user,
                by_app: cm.by_app,
                marker,
                body: cm.body,
            });
        }
    }
    let workflow_dispatches = s
        .workflow_dispatches()
        .into_iter()
        .map(|d| EffectDispatch {
            run_id: d.run_id,
            sweep_id: d.inputs["sweep-id"].as_str().map(str::to_owned),
            pr: d.inputs["pr-number"].as_str().map(str::to_owned),
        })
        .collect();
    let staging_requests: Vec<String> = s
        .repository_dispatches()
        .into_iter()
        .map(|d| {
            d.client_payload["idempotency-key"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    let staged_keys = staging_requests.iter().collect::<BTreeSet<_>>().len();
    Ok(Json(Effects {
        comments,
        workflow_dispatches,
        staging_requests,
        staged_keys,
    }))
}
