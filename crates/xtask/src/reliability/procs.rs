//! The processes of a reliability run: the sandbox GitHub (`xtask
//! sandbox`) with a client for its control API, and `sweepgate serve`
//! processes (the service's own command line, run through `xtask
//! sweepgate`) that can be SIGKILLed and restarted on the same database.
use anyhow::{Context, bail};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sweepgate_sandbox::process::{
    Effects, NewComment, NewLabel, NewPrs, SignedDelivery, WorldInfo,
};

/// A free port on 127.0.0.1 (released before the child binds it).
pub(crate) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

/// Kills (SIGKILL on Unix) and reaps a child; a no-op once it exited.
fn kill_child(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The sandbox GitHub as a separate process.
pub(crate) struct SandboxProc {
    child: Child,
    pub base: String,
    http: reqwest::Client,
}

impl SandboxProc {
    pub(crate) async fn start(bin: &Path, seed: u64) -> anyhow::Result<SandboxProc> {
        let mut child = Command::new(bin)
            .args([
                "sandbox",
                "--listen",
                "127.0.0.1:0",
                "--scenario",
                "reliability",
            ])
            .args(["--seed", &seed.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {} sandbox", bin.display()))?;
        // Its first line names the address it bound: `sandbox http://…`.
        let stdout = child.stdout.take().context("sandbox stdout")?;
        let line = tokio::task::spawn_blocking(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .find(|l| l.starts_with("sandbox "))
                .unwrap_or_default()
        })
        .await?;
        let Some(base) = line.trim().strip_prefix("sandbox ") else {
            kill_child(&mut child);
            bail!("the sandbox process printed {line:?}");
        };
        Ok(SandboxProc {
            child,
            base: base.to_owned(),
            http: client(),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/_sandbox/control/{path}", self.base)
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        let r = self.http.get(self.url(path)).send().await?;
        let status = r.status();
        if !status.is_success() {
            bail!(
                "GET {path}: {status} {}",
                r.text().await.unwrap_or_default()
            );
        }
        Ok(r.json().await?)
    }

    async fn post<B: serde::Serialize, T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> anyhow::Result<T> {
        let r = self.http.post(self.url(path)).json(body).send().await?;
        let status = r.status();
        if !status.is_success() {
            bail!(
                "POST {path}: {status} {}",
                r.text().await.unwrap_or_default()
            );
        }
        Ok(r.json().await?)
    }

    pub(crate) async fn world(&self) -> anyhow::Result<WorldInfo> {
        self.get("world").await
    }

    pub(crate) async fn open_prs(&self, count: u32) -> anyhow::Result<Vec<u64>> {
        self.post("prs", &NewPrs { count }).await
    }

    /// A comment by `user`; its id.
    pub(crate) async fn comment(
        &self,
        pr: u64,
        user: &str,
        association: &str,
        body: &str,
    ) -> anyhow::Result<u64> {
        let c = NewComment {
            pr,
            user: user.into(),
            association: association.into(),
            body: body.into(),
        };
        self.post("comments", &c).await
    }

    pub(crate) async fn label(&self, pr: u64, label: &str, by: &str) -> anyhow::Result<()> {
        let l = NewLabel {
            pr,
            label: label.into(),
            by: by.into(),
        };
        self.post("labels", &l).await
    }

    /// The deliveries produced since the last call.
    pub(crate) async fn take(&self) -> anyhow::Result<Vec<SignedDelivery>> {
        self.post("deliveries", &()).await
    }

    pub(crate) async fn effects(&self) -> anyhow::Result<Effects> {
        self.get("effects").await
    }
}

impl Drop for SandboxProc {
    fn drop(&mut self) {
        kill_child(&mut self.child);
    }
}

/// How to run `sweepgate serve` against the sandbox.
#[derive(Debug, Clone)]
pub(crate) struct ServerSpec {
    pub bin: PathBuf,
    pub database_url: String,
    pub github_api_url: String,
    pub webhook_secret: String,
    pub app_id: u64,
    pub workers: usize,
    /// Short, so a killed server's jobs are taken over within the run.
    pub lease_secs: u64,
    /// The directory of the App key file and the servers' logs.
    pub dir: PathBuf,
}

impl ServerSpec {
    /// Writes the sandbox App's private key into `dir`.
    pub(crate) fn new(
        bin: &Path,
        dir: &Path,
        database_url: &str,
        github_api_url: &str,
        webhook_secret: &str,
        app_id: u64,
    ) -> anyhow::Result<ServerSpec> {
        std::fs::write(dir.join("app-key.pem"), sweepgate_sandbox::app_key_pem())?;
        Ok(ServerSpec {
            bin: bin.to_owned(),
            database_url: database_url.into(),
            github_api_url: github_api_url.into(),
            webhook_secret: webhook_secret.into(),
            app_id,
            workers: 2,
            lease_secs: 2,
            dir: dir.to_owned(),
        })
    }
}

/// One `sweepgate serve` process.
pub(crate) struct ServerProc {
    child: Child,
    pub base: String,
    /// Its JSON log (stderr), when kept.
    pub log: Option<PathBuf>,
}

impl ServerProc {
    /// Starts `serve` on a free port and waits until `/readyz` answers 200.
    /// `log_name`: keep its JSON log (with the queue's job records) there.
    ///
    /// The port is free when picked, not reserved: another test's server
    /// may take it first, and its `/readyz` would then answer for ours
    /// (deliveries "lost" into the other's database). So the child must
    /// log that it listens on the port itself; if it exits instead, a new
    /// port is tried.
    pub(crate) async fn start(
        spec: &ServerSpec,
        log_name: Option<&str>,
    ) -> anyhow::Result<ServerProc> {
        let mut last = None;
        for _ in 0..5 {
            match Self::start_on(spec, log_name, free_port()?).await? {
                Ok(server) => return Ok(server),
                Err(exited) => last = Some(exited),
            }
        }
        bail!(
            "the server never bound a free port: {}",
            last.unwrap_or_default()
        )
    }

    /// `Ok(Err(status))`: the child exited before it listened.
    async fn start_on(
        spec: &ServerSpec,
        log_name: Option<&str>,
        port: u16,
    ) -> anyhow::Result<Result<ServerProc, String>> {
        let base = format!("http://127.0.0.1:{port}");
        let log = log_name.map(|n| spec.dir.join(n));
        let mut sink: Box<dyn std::io::Write + Send> = match &log {
            Some(path) => Box::new(std::fs::File::create(path)?),
            None => Box::new(std::io::sink()),
        };
        let filter = if log.is_some() {
            "warn,sweepgate::queue=debug,sweepgate::app=info"
        } else {
            "error,sweepgate::app=info"
        };
        let mut child = Command::new(&spec.bin)
            .args([
                "sweepgate",
                "serve",
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .args(["--database-url", &spec.database_url])
            .args(["--webhook-secret", &spec.webhook_secret])
            .args(["--app-id", &spec.app_id.to_string()])
            .arg("--private-key-path")
            .arg(spec.dir.join("app-key.pem"))
            .args(["--github-api-url", &spec.github_api_url])
            .args(["--public-url", &base])
            .args(["--workers", &spec.workers.to_string()])
            .args(["--lease-secs", &spec.lease_secs.to_string()])
            .args(["--log-format", "json"])
            .env("SWEEPGATE_LOG", filter)
            .env_remove("SWEEPGATE_CONFIG")
            .stdin(Stdio::null())
            // The server logs to stdout; read here, kept in `log`.
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {} serve", spec.bin.display()))?;
        let stdout = child.stdout.take().context("serve stdout")?;
        let (listening, heard) = std::sync::mpsc::channel();
        let own = format!("127.0.0.1:{port}");
        std::thread::spawn(move || {
            let mut listening = Some(listening);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let is_ours = listening.is_some()
                    && serde_json::from_str::<serde_json::Value>(&line).is_ok_and(|v| {
                        v["fields"]["message"] == "sweepgate listening"
                            && v["fields"]["addr"] == own.as_str()
                    });
                if is_ours && let Some(tx) = listening.take() {
                    let _ = tx.send(());
                }
                let _ = writeln!(sink, "{line}");
            }
        });
        let start = Instant::now();
        loop {
            if heard.try_recv().is_ok() {
                break;
            }
            if let Some(status) = child.try_wait()? {
                return Ok(Err(status.to_string()));
            }
            if start.elapsed() > Duration::from_secs(60) {
                kill_child(&mut child);
                bail!("the server at {base} never said it listens");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut server = ServerProc { child, base, log };
        server.wait_ready().await?;
        Ok(Ok(server))
    }

    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let http = client();
        let start = Instant::now();
        loop {
            if let Ok(r) = http.get(format!("{}/readyz", self.base)).send().await
                && r.status() == 200
            {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("the server exited before it was ready: {status}");
            }
            if start.elapsed() > Duration::from_secs(60) {
                bail!("the server at {} never became ready", self.base);
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    pub(crate) fn webhook_url(&self) -> String {
        format!("{}/webhook", self.base)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and reap it.
    pub(crate) fn kill(mut self) {
        kill_child(&mut self.child);
    }

    /// SIGTERM (a graceful stop) and wait for the exit.
    pub(crate) async fn terminate(mut self) -> anyhow::Result<()> {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill")
            .args(["-TERM", &pid])
            .status()?
            .success();
        if !ok {
            bail!("kill -TERM {pid} failed");
        }
        let start = Instant::now();
        while self.child.try_wait()?.is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                bail!("the server did not exit after SIGTERM");
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        Ok(())
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        kill_child(&mut self.child);
    }
}

/// Posts one delivery as GitHub would; the status, or `None` when no
/// answer came (refused, reset by a kill).
pub(crate) async fn post(http: &reqwest::Client, url: &str, d: &SignedDelivery) -> Option<u16> {
    http.post(url)
        .header("content-type", "application/json")
        .header("user-agent", "GitHub-Hookshot/sandbox")
        .header("x-github-event", &d.event)
        .header("x-github-delivery", &d.id)
        .header("x-hub-signature-256", &d.signature)
        .body(d.body.clone())
        .send()
        .await
        .ok()
        .map(|r| r.status().as_u16())
}

/// Posts `batch` over `concurrency` connections, spreading the deliveries
/// round-robin over `urls`; each delivery with its status. `answered`
/// counts the posts done so far (a harness kills the server on a count).
pub(crate) async fn post_all(
    http: &reqwest::Client,
    urls: &[String],
    batch: Vec<SignedDelivery>,
    concurrency: usize,
    answered: &AtomicUsize,
) -> Vec<(SignedDelivery, Option<u16>)> {
    use futures::StreamExt;
    futures::stream::iter(batch.into_iter().enumerate())
        .map(|(i, d)| {
            let url = urls[i % urls.len()].clone();
            async move {
                let status = post(http, &url, &d).await;
                answered.fetch_add(1, Ordering::SeqCst);
                (d, status)
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}

pub(crate) fn http_client() -> reqwest::Client {
    client()
}

/// The sandbox process of a run and how to start servers against it on
/// `db_url` (the App key and logs go to `dir`).
pub(crate) async fn start_world(
    bin: &Path,
    seed: u64,
    dir: &Path,
    db_url: &str,
) -> anyhow::Result<(SandboxProc, WorldInfo, ServerSpec)> {
    let sandbox = SandboxProc::start(bin, seed).await?;
    let world = sandbox.world().await?;
    let spec = ServerSpec::new(
        bin,
        dir,
        db_url,
        &sandbox.base,
        &world.webhook_secret,
        world.app_id,
    )?;
    Ok((sandbox, world, spec))
}
