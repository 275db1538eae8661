//! The deployment files under `deploy/`, checked without a container engine:
//! every manifest is parsed and the fields that matter are compared with the
//! code (server flags, the App permissions) and with each other (ports,
//! user id, image, secret names).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use sweepgate::config::server::{ServerArgs, ServerConfig};
use sweepgate::deploy;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    let path = root().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml_docs(rel: &str) -> Vec<Value> {
    let text = read(rel);
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    docs.into_iter().filter(|d| !d.is_null()).collect()
}

fn s<'a>(v: &'a Value, ctx: &str) -> &'a str {
    v.as_str()
        .unwrap_or_else(|| panic!("{ctx}: expected a string, got {v}"))
}

/// Every environment variable sweepgate reads: the `env` of each server
/// flag, plus the log filter.
fn known_env_vars() -> BTreeSet<String> {
    let cmd = <ServerArgs as clap::Args>::augment_args(clap::Command::new("t"));
    let mut vars: BTreeSet<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    vars.insert("SWEEPGATE_LOG".into());
    vars
}

/// Names whose values are secrets and must never be written inline.
fn secret_looking(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["SECRET", "PASSWORD", "TOKEN", "DATABASE_URL", "PRIVATE_KEY"]
        .iter()
        .any(|w| n.contains(w))
        && !n.ends_with("_PATH")
        && !n.ends_with("_FILE")
}

fn crate_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

// ---------------------------------------------------------------- Dockerfile

#[derive(Debug)]
struct Instr {
    op: String,
    args: String,
}

#[derive(Debug)]
struct Stage {
    image: String,
    name: String,
    instrs: Vec<Instr>,
}

/// Splits the Dockerfile into stages of instructions, joining `\`
/// continuation lines and dropping comments.
fn dockerfile_stages() -> Vec<Stage> {
    let text = read("deploy/Dockerfile");
    let mut logical: Vec<String> = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if let Some(body) = t.strip_suffix('\\') {
            cur.push_str(body);
            cur.push(' ');
        } else {
            cur.push_str(t);
            logical.push(std::mem::take(&mut cur));
        }
    }
    assert!(cur.is_empty(), "Dockerfile ends in a continuation");
    let mut stages: Vec<Stage> = Vec::new();
    for l in logical {
        let (op, args) = l.split_once(char::is_whitespace).unwrap_or((&l, ""));
        let op = op.to_ascii_uppercase();
        let args = args.trim().to_owned();
        if op == "FROM" {
            let words: Vec<&str> = args.split_whitespace().collect();
            assert!(
                words.len() == 3 && words[1].eq_ignore_ascii_case("AS"),
                "every stage is named: FROM {args}"
            );
            stages.push(Stage {
                image: words[0].into(),
                name: words[2].into(),
                instrs: Vec::new(),
            });
        } else {
            stages
                .last_mut()
                .unwrap_or_else(|| panic!("{op} before FROM"))
                .instrs
                .push(Instr { op, args });
        }
    }
    stages
}

fn json_array(args: &str) -> Vec<String> {
    serde_json::from_str(args).unwrap_or_else(|e| panic!("exec form expected: {args}: {e}"))
}

#[test]
fn dockerfile_builds_in_two_stages_with_a_dependency_layer() {
    let stages = dockerfile_stages();
    let names: Vec<&str> = stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["builder", "runtime"]);
    let (builder, runtime) = (&stages[0], &stages[1]);
    assert_eq!(builder.image, "rust:1.95-slim-bookworm");
    assert_eq!(runtime.image, "debian:bookworm-slim");

    // The builder's toolchain is at least the crate's rust-version.
    let cargo: toml::Value = toml::from_str(&read("Cargo.toml")).unwrap();
    // The package inherits it from the workspace.
    let msrv = cargo["package"]["rust-version"]
        .as_str()
        .or_else(|| cargo["workspace"]["package"]["rust-version"].as_str())
        .unwrap();
    let ver = |v: &str| -> (u32, u32) {
        let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap());
        (it.next().unwrap(), it.next().unwrap())
    };
    let tag = builder.image.split_once(':').unwrap().1;
    let toolchain = tag.split('-').next().unwrap();
    assert!(ver(toolchain) >= ver(msrv), "{toolchain} < {msrv}");

    // Order in the builder: manifests copied, a dependency build, then the
    // sources and the real build.
    let pos = |pred: &dyn Fn(&Instr) -> bool| builder.instrs.iter().position(pred);
    let copy_manifests = pos(&|i| i.op == "COPY" && i.args.starts_with("Cargo.toml Cargo.lock"))
        .expect("COPY Cargo.toml Cargo.lock");
    let copy_src = pos(&|i| i.op == "COPY" && i.args.starts_with("src ")).expect("COPY src");
    let builds: Vec<usize> = builder
        .instrs
        .iter()
        .enumerate()
        .filter(|(_, i)| i.op == "RUN" && i.args.contains("cargo build --release --locked"))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(builds.len(), 2, "dependency build and crate build");
    assert!(copy_manifests < builds[0] && builds[0] < copy_src && copy_src < builds[1]);
    assert!(
        builder.instrs[builds[1]]
            .args
            .contains("touch src/lib.rs src/main.rs")
    );

    // Every directory read at compile time is copied: the workspace's
    // crates, sqlx::migrate! paths, askama's templates/, and the top-level
    // directories the domain crate includes (include_str!).
    let mut needed: BTreeSet<String> =
        BTreeSet::from(["templates".to_owned(), "crates".to_owned()]);
    let re = regex::Regex::new(r#"sqlx::migrate!\("([^"/]+)"#).unwrap();
    for entry in walk(&root().join("src")) {
        let text = std::fs::read_to_string(&entry).unwrap();
        for c in re.captures_iter(&text) {
            needed.insert(c[1].to_owned());
        }
    }
    let include = regex::Regex::new(r#"include_(?:str|bytes)!\("([^"]+)"\)"#).unwrap();
    for entry in walk(&root().join("crates/sweepgate-core/src")) {
        let text = std::fs::read_to_string(&entry).unwrap();
        for c in include.captures_iter(&text) {
            let file = entry.parent().unwrap().join(&c[1]).canonicalize().unwrap();
            let rel = file.strip_prefix(root().canonicalize().unwrap()).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            if top != "crates" {
                needed.insert(top.into_owned());
            }
        }
    }
    assert!(needed.contains("migrations"));
    assert!(needed.contains("lint-data") && needed.contains("checklist"));
    let ignore = read("deploy/Dockerfile.dockerignore");
    let ignore: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        ignore.first(),
        Some(&"*"),
        "the ignore file is an allow list"
    );
    for dir in &needed {
        assert!(
            builder
                .instrs
                .iter()
                .any(|i| i.op == "COPY" && i.args == format!("{dir} ./{dir}")),
            "builder copies {dir}/"
        );
        assert!(
            ignore.contains(&format!("!{dir}/").as_str()),
            "context sends {dir}/"
        );
    }
    for f in ["Cargo.toml", "Cargo.lock", "src/"] {
        assert!(
            ignore.contains(&format!("!{f}").as_str()),
            "context sends {f}"
        );
    }
    assert!(
        !ignore
            .iter()
            .any(|l| l.contains("target") || l.contains(".git"))
    );

    // Runtime: CA certificates, the binary from the builder, non-root.
    let rt = |op: &str| -> Vec<&str> {
        runtime
            .instrs
            .iter()
            .filter(|i| i.op == op)
            .map(|i| i.args.as_str())
            .collect()
    };
    assert!(rt("RUN").iter().any(|r| r.contains("ca-certificates")));
    assert!(
        rt("COPY")
            .iter()
            .any(|c| c.starts_with("--from=builder ") && c.ends_with("/usr/local/bin/sweepgate"))
    );
    let user = *rt("USER").last().expect("USER in the runtime stage");
    let uid = user.split(':').next().unwrap();
    assert!(uid != "0" && uid != "root", "runtime user {user}");
    assert_eq!(uid, dockerfile_uid().to_string());
    assert_eq!(rt("EXPOSE"), ["3000"]);
    let env = rt("ENV").join(" ");
    assert!(
        env.split_whitespace()
            .any(|w| w == "SWEEPGATE_LISTEN=0.0.0.0:3000"),
        "{env}"
    );
    for word in env.split_whitespace() {
        let name = word.split('=').next().unwrap();
        assert!(known_env_vars().contains(name), "unknown variable {name}");
    }
    let health = rt("HEALTHCHECK");
    assert_eq!(health.len(), 1);
    let cmd = health[0].split_once("CMD ").expect("HEALTHCHECK CMD").1;
    let cmd = json_array(cmd);
    assert!(cmd.iter().any(|a| a == "--fail"));
    assert_eq!(
        cmd.last().map(String::as_str),
        Some("http://127.0.0.1:3000/healthz")
    );
    assert_eq!(json_array(rt("ENTRYPOINT")[0]), ["sweepgate"]);
    assert_eq!(json_array(rt("CMD")[0]), ["serve"]);
}

fn dockerfile_uid() -> u64 {
    let stages = dockerfile_stages();
    let user = stages[1]
        .instrs
        .iter()
        .rev()
        .find(|i| i.op == "USER")
        .map(|i| i.args.clone())
        .unwrap();
    user.split(':')
        .next()
        .unwrap()
        .parse()
        .expect("numeric USER")
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

// ------------------------------------------------------------------- compose

#[test]
fn compose_runs_sweepgate_after_a_healthy_postgres() {
    let docs = yaml_docs("deploy/compose.yaml");
    assert_eq!(docs.len(), 1);
    let c = &docs[0];
    let services = c["services"].as_object().unwrap();
    let names: BTreeSet<&str> = services.keys().map(String::as_str).collect();
    assert_eq!(names, BTreeSet::from(["postgres", "sweepgate"]));

    let pg = &c["services"]["postgres"];
    assert!(s(&pg["image"], "postgres image").starts_with("postgres:16"));
    let test: Vec<&str> = pg["healthcheck"]["test"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| s(v, "healthcheck"))
        .collect();
    assert_eq!(test[0], "CMD-SHELL");
    assert!(test[1].starts_with("pg_isready "));
    assert!(test[1].contains(&format!(
        "-U {}",
        s(&pg["environment"]["POSTGRES_USER"], "user")
    )));
    let vols: Vec<&str> = pg["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| s(v, "vol"))
        .collect();
    let (vol, mount) = vols[0].split_once(':').unwrap();
    assert_eq!(mount, "/var/lib/postgresql/data");
    assert!(c["volumes"].as_object().unwrap().contains_key(vol));

    let sg = &c["services"]["sweepgate"];
    assert_eq!(sg["depends_on"]["postgres"]["condition"], "service_healthy");
    assert_eq!(sg["ports"], serde_json::json!(["3000:3000"]));
    let dockerfile = root()
        .join("deploy")
        .join(s(&sg["build"]["context"], "context"))
        .join(s(&sg["build"]["dockerfile"], "dockerfile"));
    assert_eq!(
        dockerfile.canonicalize().unwrap(),
        root().join("deploy/Dockerfile")
    );
    assert_eq!(
        s(&sg["image"], "image"),
        format!("sweepgate:{}", crate_version())
    );

    // Environment: known names only; secrets by file, never inline.
    let env = sg["environment"].as_object().unwrap();
    assert_eq!(env["SWEEPGATE_LISTEN"], "0.0.0.0:3000");
    let known = known_env_vars();
    let declared = c["secrets"].as_object().unwrap();
    let attached = |svc: &Value| -> BTreeSet<String> {
        svc["secrets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| s(v, "secret").to_owned())
            .collect()
    };
    let sg_secrets = attached(sg);
    for (name, value) in env {
        assert!(known.contains(name), "unknown variable {name}");
        assert!(!secret_looking(name), "{name} must come from a secret file");
        if let Some(path) = value.as_str().and_then(|v| v.strip_prefix("/run/secrets/")) {
            assert!(
                sg_secrets.contains(path),
                "{name}: secret {path} not attached"
            );
        }
    }
    assert_eq!(
        env["SWEEPGATE_PRIVATE_KEY_PATH"],
        "/run/secrets/app_private_key"
    );
    assert_eq!(env["SWEEPGATE_CONFIG"], "/run/secrets/sweepgate_config");
    let pg_env = pg["environment"].as_object().unwrap();
    assert!(!pg_env.contains_key("POSTGRES_PASSWORD"));
    let pw = s(&pg_env["POSTGRES_PASSWORD_FILE"], "pw file")
        .strip_prefix("/run/secrets/")
        .unwrap();
    assert!(attached(pg).contains(pw));
    for name in attached(pg).iter().chain(&sg_secrets) {
        let file = s(&declared[name]["file"], "secret file");
        assert!(file.starts_with("./secrets/"), "{name}: {file}");
    }
    // The files land in deploy/secrets/, which git ignores.
    assert!(read("deploy/.gitignore").lines().any(|l| l == "/secrets/"));
}

/// deploy/compose-secrets.sh writes a sweepgate.toml the real configuration
/// parser accepts, pointing at the compose database with the password it
/// gave PostgreSQL.
#[test]
fn compose_secrets_script_writes_a_valid_server_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("bash")
        .arg(root().join("deploy/compose-secrets.sh"))
        .arg(dir.path())
        .env("SWEEPGATE_WEBHOOK_SECRET", "s3cret-for-test")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let password = std::fs::read_to_string(dir.path().join("postgres_password")).unwrap();
    assert_eq!(password.len(), 64);
    let args = ServerArgs {
        config: Some(dir.path().join("sweepgate.toml")),
        ..ServerArgs::default()
    };
    let cfg = ServerConfig::resolve(&args).unwrap();
    assert_eq!(
        cfg.database_url,
        format!("postgres://sweepgate:{password}@postgres:5432/sweepgate")
    );
    let secrets: Vec<&str> = cfg.webhook_secrets.iter().map(|s| s.expose()).collect();
    assert_eq!(secrets, ["s3cret-for-test"]);
    cfg.require_secrets().unwrap();

    // A second run refuses to overwrite.
    let again = std::process::Command::new("bash")
        .arg(root().join("deploy/compose-secrets.sh"))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("postgres_password")).unwrap(),
        password
    );
}

// ---------------------------------------------------------------- Kubernetes

fn k8s_objects() -> Vec<(String, Value)> {
    let dir = root().join("deploy/k8s");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") && n != "kustomization.yaml")
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        for doc in yaml_docs(&format!("deploy/k8s/{f}")) {
            out.push((f.clone(), doc));
        }
    }
    out
}

fn one<'a>(objs: &'a [(String, Value)], kind: &str) -> &'a Value {
    let found: Vec<&Value> = objs
        .iter()
        .map(|(_, o)| o)
        .filter(|o| o["kind"] == kind)
        .collect();
    assert_eq!(found.len(), 1, "exactly one {kind}");
    found[0]
}

fn is_subset(sel: &Value, labels: &Value) -> bool {
    let sel = sel.as_object().unwrap();
    !sel.is_empty() && sel.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// Strings anywhere in a document (to catch a key pasted as a value).
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[test]
fn kubernetes_manifests_are_complete_and_consistent() {
    let objs = k8s_objects();
    let kinds: BTreeSet<&str> = objs.iter().map(|(_, o)| s(&o["kind"], "kind")).collect();
    for k in [
        "Namespace",
        "ServiceAccount",
        "ConfigMap",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
    ] {
        assert!(kinds.contains(k), "missing {k}");
    }
    assert!(
        !kinds.contains("Secret"),
        "Secrets are created out of band, never committed"
    );

    // kustomization lists every file; every object is in the namespace.
    let kust = &yaml_docs("deploy/k8s/kustomization.yaml")[0];
    let listed: BTreeSet<&str> = kust["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| s(v, "resource"))
        .collect();
    let files: BTreeSet<&str> = objs.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(listed, files);
    let ns = s(&one(&objs, "Namespace")["metadata"]["name"], "namespace");
    assert_eq!(kust["namespace"], ns);
    for (f, o) in &objs {
        if o["kind"] != "Namespace" {
            assert_eq!(o["metadata"]["namespace"], ns, "{f}");
        }
    }

    let dep = one(&objs, "Deployment");
    assert_eq!(dep["spec"]["replicas"], 3);
    let pod = &dep["spec"]["template"];
    let labels = &pod["metadata"]["labels"];
    assert!(is_subset(&dep["spec"]["selector"]["matchLabels"], labels));
    let spec = &pod["spec"];
    assert!(spec["terminationGracePeriodSeconds"].as_u64().unwrap() > 20);
    assert_eq!(spec["securityContext"]["runAsNonRoot"], true);
    assert_eq!(spec["securityContext"]["runAsUser"], dockerfile_uid());
    assert_eq!(
        s(&spec["serviceAccountName"], "sa"),
        s(&one(&objs, "ServiceAccount")["metadata"]["name"], "sa")
    );

    let containers = spec["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    let image = s(&c["image"], "image");
    let (repo, tag) = image.rsplit_once(':').unwrap();
    assert!(repo.ends_with("/sweepgate"), "{image}");
    assert_eq!(tag, crate_version());
    let kimg = &kust["images"][0];
    assert_eq!(kimg["name"], repo);
    assert_eq!(kimg["newTag"], crate_version());

    // Ports and probes.
    let ports: BTreeMap<&str, u64> = c["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                s(&p["name"], "port name"),
                p["containerPort"].as_u64().unwrap(),
            )
        })
        .collect();
    let resolve = |p: &Value| -> u64 {
        match p {
            Value::String(name) => *ports
                .get(name.as_str())
                .unwrap_or_else(|| panic!("no port {name}")),
            other => other.as_u64().unwrap(),
        }
    };
    assert_eq!(ports.values().copied().collect::<Vec<_>>(), [3000]);
    for (probe, path) in [
        ("livenessProbe", "/healthz"),
        ("readinessProbe", "/readyz"),
        ("startupProbe", "/healthz"),
    ] {
        let get = &c[probe]["httpGet"];
        assert_eq!(get["path"], path, "{probe}");
        assert_eq!(resolve(&get["port"]), 3000, "{probe}");
    }

    // Resources and container security.
    let res = &c["resources"];
    assert_eq!(res["limits"]["memory"], "256Mi");
    assert!(res["requests"]["memory"].is_string() && res["requests"]["cpu"].is_string());
    let sc = &c["securityContext"];
    assert_eq!(sc["runAsNonRoot"], true);
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]));

    // Environment: from the ConfigMap and from Secrets by reference.
    let cm = one(&objs, "ConfigMap");
    let cm_name = s(&cm["metadata"]["name"], "configmap");
    assert_eq!(c["envFrom"][0]["configMapRef"]["name"], cm_name);
    let known = known_env_vars();
    let cm_data = cm["data"].as_object().unwrap();
    for (k, v) in cm_data {
        assert!(known.contains(k), "ConfigMap: unknown variable {k}");
        assert!(!secret_looking(k), "ConfigMap holds secret {k}");
        assert!(v.is_string(), "ConfigMap values are strings: {k}");
    }
    assert_eq!(cm_data["SWEEPGATE_LISTEN"], "0.0.0.0:3000");
    let mut from_secret = BTreeSet::new();
    for e in c["env"].as_array().unwrap() {
        let name = s(&e["name"], "env name");
        assert!(known.contains(name), "unknown variable {name}");
        if secret_looking(name) {
            assert!(e.get("value").is_none(), "{name} has an inline value");
            let r = &e["valueFrom"]["secretKeyRef"];
            assert!(r["name"].is_string() && r["key"].is_string(), "{name}");
            from_secret.insert(name);
        }
    }
    assert_eq!(
        from_secret,
        BTreeSet::from([
            "SWEEPGATE_ADMIN_TOKEN",
            "SWEEPGATE_DATABASE_URL",
            "SWEEPGATE_WEBHOOK_SECRETS"
        ])
    );

    // The private key path lies in a read-only mounted Secret volume.
    let key_path = Path::new(s(&cm_data["SWEEPGATE_PRIVATE_KEY_PATH"], "key path"));
    let mounts = c["volumeMounts"].as_array().unwrap();
    let mount = mounts
        .iter()
        .find(|m| key_path.parent() == Some(Path::new(s(&m["mountPath"], "mountPath"))))
        .expect("the key's directory is mounted");
    assert_eq!(mount["readOnly"], true);
    let vol = spec["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    let secret = &vol["secret"];
    assert!(secret["secretName"].is_string());
    let file = key_path.file_name().unwrap().to_str().unwrap();
    assert!(
        secret["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["path"] == file)
    );
    // Readable by the group (fsGroup), nobody else, never writable.
    let mode = secret["defaultMode"].as_u64().unwrap();
    assert_eq!(mode, 0o440);
    assert_eq!(
        spec["securityContext"]["fsGroup"],
        spec["securityContext"]["runAsGroup"]
    );
    // A writable /tmp, since the root file system is read-only.
    assert!(mounts.iter().any(|m| m["mountPath"] == "/tmp"));

    // Service and PDB select the pods; the PDB leaves room for a drain.
    let svc = one(&objs, "Service");
    assert!(is_subset(&svc["spec"]["selector"], labels));
    assert_eq!(resolve(&svc["spec"]["ports"][0]["targetPort"]), 3000);
    let pdb = one(&objs, "PodDisruptionBudget");
    assert!(is_subset(&pdb["spec"]["selector"]["matchLabels"], labels));
    let min = pdb["spec"]["minAvailable"].as_u64().unwrap();
    assert!((1..3).contains(&min), "minAvailable {min} of 3");

    // Nothing that looks like key material anywhere.
    for (f, o) in &objs {
        let mut all = Vec::new();
        strings(o, &mut all);
        assert!(!all.iter().any(|x| x.contains("-----BEGIN")), "{f}");
        assert!(!all.iter().any(|x| x.starts_with("postgres://")), "{f}");
    }
}

// -------------------------------------------------------------- App manifest

#[test]
fn app_manifest_asks_for_exactly_the_declared_permissions_and_events() {
    let m: Value = serde_json::from_str(&read("deploy/github-app-manifest.json")).unwrap();
    let keys: BTreeSet<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        BTreeSet::from([
            "name",
            "url",
            "hook_attributes",
            "redirect_url",
            "public",
            "default_permissions",
            "default_events"
        ])
    );
    let perms: BTreeMap<&str, &str> = m["default_permissions"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), s(v, k)))
        .collect();
    let declared: BTreeMap<&str, &str> = deploy::PERMISSIONS.iter().copied().collect();
    assert_eq!(declared.len(), deploy::PERMISSIONS.len());
    assert_eq!(perms, declared);
    let expected: BTreeMap<&str, &str> = BTreeMap::from([
        ("actions", "write"),
        ("checks", "write"),
        ("contents", "read"),
        ("issues", "write"),
        ("members", "read"),
        ("metadata", "read"),
        ("pull_requests", "write"),
        ("statuses", "write"),
    ]);
    assert_eq!(declared, expected);
    let events: Vec<&str> = m["default_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| s(v, "event"))
        .collect();
    assert_eq!(events, deploy::events());
    assert_eq!(
        m["hook_attributes"]["url"],
        "https://sweepgate.example.com/webhook"
    );
    assert_eq!(m["hook_attributes"]["active"], true);
    assert_eq!(m["public"], false);
    assert_eq!(m, deploy::app_manifest(deploy::EXAMPLE_PUBLIC_URL));
}

/// Issue 18, "Manifest": staging gets `contents: write` on the results
/// repository from a separate credential, so the App (and with it every
/// installation, the benchmark repository's included) keeps `contents: read`.
#[test]
fn staging_gets_contents_write_on_the_results_repository_alone() {
    let contents: Vec<&str> = deploy::PERMISSIONS
        .iter()
        .filter(|(p, _)| *p == "contents")
        .map(|(_, a)| *a)
        .collect();
    assert_eq!(contents, ["read"]);
    let m: Value = serde_json::from_str(&read("deploy/github-app-manifest.json")).unwrap();
    assert_eq!(m["default_permissions"]["contents"], "read");
    // The credential is a server setting, documented where operators look.
    assert!(known_env_vars().contains("SWEEPGATE_STAGING_TOKEN"));
    let readme = read("deploy/README.md");
    assert!(readme.contains("| `SWEEPGATE_STAGING_TOKEN` |"), "{readme}");
    assert!(readme.contains("`contents: write` on the results\nrepository alone"));
    let ops = read("docs/operations.md");
    assert!(ops.contains("| `--staging-token` | `SWEEPGATE_STAGING_TOKEN` | `staging-token` |"));
}

// -------------------------------------------------------------------- README

#[test]
fn deploy_readme_names_every_setting_of_the_operations_guide() {
    let ops = read("docs/operations.md");
    let readme = read("deploy/README.md");
    let re = regex::Regex::new(r"SWEEPGATE_[A-Z_]+").unwrap();
    let documented: BTreeSet<&str> = re.find_iter(&ops).map(|m| m.as_str()).collect();
    // The test-only variables of the top README are not settings.
    for v in &documented {
        assert!(readme.contains(v), "deploy/README.md does not mention {v}");
    }
    for v in known_env_vars() {
        assert!(
            documented.contains(v.as_str()),
            "docs/operations.md lacks {v}"
        );
    }
    for f in [
        "deploy/Dockerfile",
        "deploy/compose.yaml",
        "deploy/compose-secrets.sh",
        "deploy/k8s",
        "deploy/github-app-manifest.json",
    ] {
        assert!(readme.contains(f), "deploy/README.md does not mention {f}");
    }
}
