//! Crash safety: the sandbox and `serve` as separate processes; deliveries
//! stream in while the server is SIGKILLed at seeded random points (while
//! requests are in flight and while jobs run) and restarted on the same
//! database. A delivery that got no answer is redelivered, as GitHub's
//! redelivery would; acknowledged ones are now and then redelivered too.
//! At the end every acknowledged delivery must be stored and have had
//! exactly one effect.
use anyhow::{Context, bail};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::effects::{self, EffectCounts, Expected, StoreCounts};
use super::procs::{SandboxProc, ServerProc, http_client, post_all, start_world};
use super::{Backend, Record, RunArgs, thousands};
use sweepgate::store::Store;
use sweepgate_sandbox::process::{SignedDelivery, WorldInfo};

#[derive(Debug, Clone)]
pub struct CrashOpts {
    pub bin: PathBuf,
    pub backend: Backend,
    pub cycles: u32,
    pub seed: u64,
    pub pg_url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CrashReport {
    pub backend: Backend,
    pub cycles: u32,
    pub kills: u32,
    /// Kills while deliveries were still being posted.
    pub kills_mid_stream: u32,
    /// Kills while at least one job was running.
    pub kills_with_jobs_running: u32,
    pub deliveries: Deliveries,
    pub store: StoreCounts,
    pub effects: EffectCounts,
    pub duration_s: f64,
}

impl CrashReport {
    pub(crate) fn record(&self, args: &RunArgs) -> Record {
        let order = match self.backend {
            Backend::Sqlite => 20,
            Backend::Postgres => 21,
        };
        let e = &self.effects;
        Record {
            order,
            property: format!("Crash safety ({})", self.backend.title()),
            tried: format!(
                "{} SIGKILL cycles ({} mid-stream, {} with jobs running), {} deliveries streamed",
                self.cycles,
                self.kills_mid_stream,
                self.kills_with_jobs_running,
                thousands(self.deliveries.acknowledged.len() as u64)
            ),
            result: format!(
                "{} lost, {} duplicate comments, {} duplicate dispatches; {} replies to {} commands, {} sweeps dispatched once, {} staging keys staged once ({} requests)",
                self.store.lost,
                e.duplicate_comments + e.duplicate_replies,
                e.duplicate_dispatches,
                e.replies,
                e.commands,
                e.sweeps_stored,
                e.staged_keys,
                e.staging_requests
            ),
            command: format!(
                "cargo xtask reliability crash --backend {} --cycles {} --seed {}",
                self.backend.name(),
                self.cycles,
                args.seed
            ),
            ran_at: String::new(),
            duration_s: self.duration_s,
        }
    }

    /// Every violated property, one line each.
    pub fn violations(&self) -> Vec<String> {
        let mut v = self.effects.violations();
        v.extend(self.store.violations());
        if !self.deliveries.pending.is_empty() {
            v.push(format!(
                "{} deliveries never acknowledged",
                self.deliveries.pending.len()
            ));
        }
        v
    }
}

impl StoreCounts {
    pub(crate) fn violations(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.lost > 0 {
            v.push(format!("{} acknowledged deliveries lost", self.lost));
        }
        if self.jobs_dead > 0 {
            v.push(format!("{} jobs dead-lettered", self.jobs_dead));
        }
        if self.jobs_unfinished > 0 {
            v.push(format!("{} jobs never finished", self.jobs_unfinished));
        }
        v
    }
}

/// The deliveries of a run: acknowledged, still to (re)deliver, and how
/// many posts it took.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Deliveries {
    #[serde(skip)]
    pub acknowledged: Vec<SignedDelivery>,
    #[serde(skip)]
    acked_ids: HashSet<String>,
    #[serde(skip)]
    pub pending: Vec<SignedDelivery>,
    pub posts: usize,
    /// Posts that got no answer (the server was killed or down).
    pub unanswered: usize,
    /// Acknowledged deliveries posted again (duplicates).
    pub redelivered: usize,
    pub acknowledged_count: usize,
}

impl Deliveries {
    /// Takes in the results of posting a batch.
    pub(crate) fn absorb(&mut self, results: Vec<(SignedDelivery, Option<u16>)>) {
        for (d, status) in results {
            self.posts += 1;
            match status {
                Some(s) if (200..300).contains(&s) => {
                    if self.acked_ids.insert(d.id.clone()) {
                        self.acknowledged.push(d);
                        self.acknowledged_count += 1;
                    }
                }
                other => {
                    if other.is_none() {
                        self.unanswered += 1;
                    }
                    if !self.acked_ids.contains(&d.id) {
                        self.pending.push(d);
                    }
                }
            }
        }
    }

    pub(crate) fn acknowledged_ids(&self) -> impl Iterator<Item = &str> {
        self.acknowledged.iter().map(|d| d.id.as_str())
    }

    /// Delivers everything (new deliveries included) to the running
    /// `urls` until the sandbox produces nothing new and the queue is idle.
    pub(crate) async fn drain(
        &mut self,
        sandbox: &SandboxProc,
        urls: &[String],
        store: &Store,
        concurrency: usize,
    ) -> anyhow::Result<()> {
        let http = http_client();
        for _ in 0..500 {
            self.pending.extend(sandbox.take().await?);
            if self.pending.is_empty() {
                wait_idle(store).await?;
                let more = sandbox.take().await?;
                if more.is_empty() {
                    return Ok(());
                }
                self.pending.extend(more);
            }
            let batch = std::mem::take(&mut self.pending);
            let answered = AtomicUsize::new(0);
            self.absorb(post_all(&http, urls, batch, concurrency, &answered).await);
            wait_idle(store).await?;
        }
        bail!("deliveries never settled")
    }
}

/// Waits until no job is pending or running (retries included).
pub(crate) async fn wait_idle(store: &Store) -> anyhow::Result<()> {
    let start = Instant::now();
    loop {
        let q = store.queue_counts().await?;
        if q.pending == 0 && q.running == 0 {
            return Ok(());
        }
        if start.elapsed() > Duration::from_secs(300) {
            bail!("the queue never drained: {q:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One round of activity: command comments by people with and without a
/// role, a maintainer's `/use`, a drive-by `/use`, a sweep label, new PRs.
pub(crate) async fn activity(
    sandbox: &SandboxProc,
    rng: &mut StdRng,
    world: &WorldInfo,
    prs: &mut Vec<u64>,
    exp: &mut Expected,
    round: u32,
) -> anyhow::Result<()> {
    if round.is_multiple_of(4) {
        prs.extend(sandbox.open_prs(if round == 0 { 3 } else { 1 }).await?);
    }
    const PEOPLE: [(&str, &str); 3] = [
        ("vendor-dev", "CONTRIBUTOR"),
        ("alice", "NONE"),
        ("maint", "MEMBER"),
    ];
    for _ in 0..rng.random_range(3..=6) {
        let pr = prs[rng.random_range(0..prs.len())];
        let (user, association) = PEOPLE[rng.random_range(0..PEOPLE.len())];
        let id = sandbox.comment(pr, user, association, "/help").await?;
        exp.commands.push((pr, id));
    }
    if rng.random_bool(0.5) {
        let body = format!("/use {}", world.use_run);
        let id = sandbox
            .comment(world.use_pr, &world.maintainer, "MEMBER", &body)
            .await?;
        exp.commands.push((world.use_pr, id));
        exp.uses.push(id);
    }
    if rng.random_bool(0.1) {
        let body = format!("/use {}", world.use_run);
        let id = sandbox
            .comment(world.use_pr, "drive-by", "NONE", &body)
            .await?;
        exp.commands.push((world.use_pr, id));
        exp.refused_uses.push(id);
    }
    let unlabelled: Vec<u64> = prs
        .iter()
        .copied()
        .filter(|pr| *pr != world.use_pr && !exp.labelled.contains(pr))
        .collect();
    if !unlabelled.is_empty() && rng.random_bool(0.3) {
        let pr = unlabelled[rng.random_range(0..unlabelled.len())];
        sandbox
            .label(pr, &world.sweep_label, &world.maintainer)
            .await?;
        exp.labelled.insert(pr);
    }
    Ok(())
}

pub async fn run(o: &CrashOpts) -> anyhow::Result<CrashReport> {
    let db = o.backend.fresh_db(&o.pg_url).await?;
    let result = run_on(o, &db.url, &db.store).await;
    db.cleanup().await;
    result
}

async fn run_on(o: &CrashOpts, db_url: &str, store: &Store) -> anyhow::Result<CrashReport> {
    let started = Instant::now();
    let dir = tempfile::tempdir()?;
    let (sandbox, world, spec) = start_world(&o.bin, o.seed, dir.path(), db_url).await?;
    let http = http_client();
    let mut rng = StdRng::seed_from_u64(o.seed);
    let mut exp = Expected {
        use_run: world.use_run,
        ..Expected::default()
    };
    let mut prs = vec![world.use_pr];
    let mut d = Deliveries::default();
    let (mut kills, mut mid_stream, mut with_jobs) = (0, 0, 0);
    let mut server = ServerProc::start(&spec, None).await?;
    for cycle in 0..o.cycles {
        activity(&sandbox, &mut rng, &world, &mut prs, &mut exp, cycle).await?;
        d.pending.extend(sandbox.take().await?);
        let mut batch = std::mem::take(&mut d.pending);
        if !d.acknowledged.is_empty() && rng.random_bool(0.3) {
            let again = d.acknowledged[rng.random_range(0..d.acknowledged.len())].clone();
            batch.insert(rng.random_range(0..=batch.len()), again);
            d.redelivered += 1;
        }
        // The kill point: after a random number of answers (requests are
        // then in flight), or after the whole batch while its jobs run.
        let kill_after = rng.random_range(0..=batch.len() + batch.len() / 2);
        let linger = Duration::from_millis(rng.random_range(0..=600));
        let urls = vec![server.webhook_url()];
        let client = http.clone();
        let answered = Arc::new(AtomicUsize::new(0));
        let counter = answered.clone();
        let stream =
            tokio::spawn(async move { post_all(&client, &urls, batch, 4, &counter).await });
        while answered.load(Ordering::SeqCst) < kill_after && !stream.is_finished() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if stream.is_finished() {
            tokio::time::sleep(linger).await;
        } else {
            mid_stream += 1;
        }
        let q = store.queue_counts().await?;
        if q.running > 0 {
            with_jobs += 1;
        }
        server.kill();
        kills += 1;
        d.absorb(stream.await.context("the delivery stream panicked")?);
        server = ServerProc::start(&spec, None).await?;
    }
    d.drain(&sandbox, &[server.webhook_url()], store, 4).await?;
    let effects = sandbox.effects().await?;
    let repo = format!("{}/{}", world.owner, world.repo);
    let report = CrashReport {
        backend: o.backend,
        cycles: o.cycles,
        kills,
        kills_mid_stream: mid_stream,
        kills_with_jobs_running: with_jobs,
        store: effects::stored(store, d.acknowledged_ids()).await?,
        effects: effects::count(&effects, &exp, store, &repo).await?,
        deliveries: d,
        duration_s: started.elapsed().as_secs_f64(),
    };
    server.terminate().await?;
    Ok(report)
}
