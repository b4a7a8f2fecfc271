//! A real Ray cluster on loopback for the ray workspace's tests and
//! benchmarks: a head plus two nodes, each with one CPU, a small object
//! store and a custom resource of its own (`node_head`, `host_b`,
//! `host_c`), started from the venv `scripts/provision-ray.sh` fills.
//!
//! Ray replaces 127.0.0.1 with the machine's outward address, so the nodes
//! take other loopback addresses (127.0.0.2–4); the dashboard listens on
//! 127.0.0.1. Every node is a `ray start --block` in a process group of its
//! own that dies with this process (PR_SET_PDEATHSIG); the test process is
//! a child subreaper, so whatever the cluster leaves behind is ours to
//! kill. [`Cluster`]'s drop stops it all, a watchdog stops it if the tests
//! hang, and nothing outlives the process.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use drover::ray::jobs::{Jobs, Node};
use drover_gate::{Cleared, Effect, Provenance, Sourced};

/// The test's own cluster, as if named on the command line.
fn operator_address(address: &str) -> Cleared<String> {
    drover_gate::clear(
        Effect::Connect,
        "the test cluster",
        Sourced::new(address.to_string(), Provenance::Operator),
    )
    .expect("the command line may connect")
}

/// How long one node may take to join (the machine may be busy).
const NODE_TIMEOUT: Duration = Duration::from_secs(180);

pub struct Member {
    pub name: &'static str,
    pub resource: &'static str,
    pub ip: &'static str,
    /// The node's HOME: where the CLIs it runs keep their files.
    pub home: PathBuf,
    child: Child,
}

pub struct Cluster {
    pub address: String,
    pub members: Vec<Member>,
    pub dir: tempfile::TempDir,
    /// Seconds from the first `ray start` to the head's dashboard answering,
    /// and to all three nodes alive.
    pub head_ready_s: f64,
    pub all_ready_s: f64,
}

fn ray_bin() -> PathBuf {
    let venv = std::env::var_os("DROVER_RAY_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/drover-ray")))
        .unwrap_or_default();
    venv.join("bin").join("ray")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn alive_nodes(jobs: &Jobs) -> Vec<Node> {
    jobs.nodes()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.state == "ALIVE")
        .collect()
}

/// Makes this process the reaper of every orphan its children leave.
fn become_subreaper() {
    // SAFETY: prctl with an integer argument; no memory is shared.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Kills every process below this one (the subreaper collects orphans).
pub fn kill_descendants() {
    for _ in 0..10 {
        let me = std::process::id();
        let below: Vec<_> = drover::workspace::process::tree(me)
            .into_iter()
            .filter(|p| p.pid != me)
            .collect();
        if below.is_empty() {
            return;
        }
        for p in &below {
            // The test's own descendants: started by this process.
            if let Ok(p) = drover::workspace::process::clear_signal(
                "a process this test started",
                *p,
                drover::gate::Provenance::Created,
            ) {
                drover::workspace::process::force_kill(&p);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
        reap();
    }
}

fn reap() {
    // SAFETY: waitpid on any child, non-blocking; the status is discarded.
    unsafe {
        let mut status = 0;
        while libc::waitpid(-1, &mut status, libc::WNOHANG) > 0 {}
    }
}

impl Cluster {
    pub fn start() -> Result<Cluster, String> {
        let ray = ray_bin();
        if !ray.is_file() {
            return Err(format!(
                "{} is missing: run scripts/provision-ray.sh (CI does) to install Ray",
                ray.display()
            ));
        }
        become_subreaper();
        // Short: Ray's Unix sockets live under it (108-byte path limit).
        let dir = tempfile::Builder::new()
            .prefix("drover-ray-")
            .tempdir_in("/tmp")
            .map_err(|e| e.to_string())?;
        let dashboard = free_port();
        let gcs = free_port();
        let address = format!("http://127.0.0.1:{dashboard}");
        let jobs = Jobs::new(&operator_address(&address));
        let started = Instant::now();
        let mut cluster = Cluster {
            address: address.clone(),
            members: Vec::new(),
            dir,
            head_ready_s: 0.0,
            all_ready_s: 0.0,
        };
        let plan = [
            ("head", "node_head", "127.0.0.2"),
            ("b", "host_b", "127.0.0.3"),
            ("c", "host_c", "127.0.0.4"),
        ];
        // Worker ports: a slice of Ray's default range per node, so nodes on
        // one machine never hand out the same port.
        let base = 10_002 + (std::process::id() % 80) as u16 * 100;
        for (n, (name, resource, ip)) in plan.into_iter().enumerate() {
            let mut last_error = String::new();
            let mut joined = false;
            for _attempt in 0..2 {
                let member =
                    cluster.launch(name, resource, ip, gcs, dashboard, base + n as u16 * 30)?;
                cluster.members.push(member);
                let until = Instant::now() + NODE_TIMEOUT;
                while Instant::now() < until {
                    if alive_nodes(&jobs).len() == n + 1 {
                        joined = true;
                        break;
                    }
                    if let Some(status) = cluster
                        .members
                        .last_mut()
                        .and_then(|m| m.child.try_wait().ok().flatten())
                    {
                        last_error = format!(
                            "ray start for node {name} exited with {status}:\n{}",
                            cluster.output_tail(name)
                        );
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(250));
                }
                if joined {
                    break;
                }
                if last_error.is_empty() {
                    last_error = format!("node {name} did not join within {NODE_TIMEOUT:?}");
                }
                if let Some(failed) = cluster.members.pop() {
                    stop_member(failed);
                }
                if n == 0 {
                    // A head that failed leaves nothing to join; start afresh.
                    kill_descendants();
                }
            }
            if !joined {
                return Err(last_error);
            }
            if n == 0 {
                cluster.head_ready_s = started.elapsed().as_secs_f64();
            }
        }
        cluster.all_ready_s = started.elapsed().as_secs_f64();
        Ok(cluster)
    }

    /// The end of a node's `ray start` output: the temporary directory
    /// holding it goes with the cluster, so an error carries it.
    fn output_tail(&self, name: &str) -> String {
        let log = self.dir.path().join("logs").join(format!("{name}.log"));
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    fn launch(
        &self,
        name: &'static str,
        resource: &'static str,
        ip: &'static str,
        gcs: u16,
        dashboard: u16,
        worker_base: u16,
    ) -> Result<Member, String> {
        let root = self.dir.path();
        let home = root.join(format!("home-{name}"));
        let logs = root.join("logs");
        std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(&logs).map_err(|e| e.to_string())?;
        let out =
            std::fs::File::create(logs.join(format!("{name}.log"))).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(ray_bin());
        cmd.arg("start").arg("--block");
        if name == "head" {
            cmd.args([
                "--head".to_string(),
                format!("--port={gcs}"),
                "--dashboard-host=127.0.0.1".to_string(),
                format!("--dashboard-port={dashboard}"),
                "--include-dashboard=true".to_string(),
                format!("--ray-client-server-port={}", free_port()),
                format!("--temp-dir={}", root.join("t").display()),
            ]);
        } else {
            cmd.arg(format!("--address=127.0.0.2:{gcs}"));
        }
        cmd.args([
            format!("--node-ip-address={ip}"),
            "--num-cpus=1".to_string(),
            "--object-store-memory=80000000".to_string(),
            format!("--resources={{\"{resource}\": 1}}"),
            "--disable-usage-stats".to_string(),
            format!("--dashboard-agent-listen-port={}", free_port()),
            format!("--dashboard-agent-grpc-port={}", free_port()),
            format!("--metrics-export-port={}", free_port()),
            format!("--runtime-env-agent-port={}", free_port()),
            format!("--min-worker-port={worker_base}"),
            format!("--max-worker-port={}", worker_base + 29),
        ]);
        let path = format!(
            "{}:{}",
            super::bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env("HOME", &home)
            .env("PATH", path)
            .env("DROVER_CACHE_DIR", super::shared_cache())
            .env("RAY_USAGE_STATS_ENABLED", "0")
            // A busy machine starts the Python agents slowly.
            .env("RAY_agent_register_timeout_ms", "120000")
            .env_remove("RAY_ADDRESS")
            .env_remove("DROVER_WORKSPACE")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        // SAFETY: prctl in the child before exec; async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| format!("cannot start ray: {e}"))?;
        Ok(Member {
            name,
            resource,
            ip,
            home,
            child,
        })
    }

    pub fn jobs(&self) -> Jobs {
        Jobs::new(&operator_address(&self.address))
    }

    /// The node holding a custom resource.
    pub fn node_with(&self, resource: &str) -> Node {
        alive_nodes(&self.jobs())
            .into_iter()
            .find(|n| n.resources_total.contains_key(resource))
            .unwrap_or_else(|| panic!("no node has {resource}"))
    }

    /// Kills the node holding `resource` and everything it started (Ray
    /// then finds it dead); dropping the cluster reaps it.
    pub fn stop_node(&self, resource: &str) {
        let group = self.member(resource).child.id() as i32;
        // SAFETY: a signal to the process group this harness created.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }

    pub fn member(&self, resource: &str) -> &Member {
        self.members
            .iter()
            .find(|m| m.resource == resource)
            .unwrap_or_else(|| panic!("no member has {resource}"))
    }

    /// The resources of the nodes whose HOME holds a file named `name`.
    pub fn homes_holding(&self, name: &str) -> Vec<&'static str> {
        fn holds(dir: &Path, name: &str) -> bool {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .any(|entry| {
                    let path = entry.path();
                    entry.file_name().to_str() == Some(name)
                        || (path.is_dir() && holds(&path, name))
                })
        }
        self.members
            .iter()
            .filter(|m| holds(&m.home, name))
            .map(|m| m.resource)
            .collect()
    }
}

fn stop_member(mut member: Member) {
    let group = member.child.id() as i32;
    // SAFETY: signals to the process group this harness created.
    unsafe {
        libc::kill(-group, libc::SIGTERM);
    }
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if member.child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
    let _ = member.child.kill();
    let _ = member.child.wait();
}

impl Drop for Cluster {
    fn drop(&mut self) {
        while let Some(member) = self.members.pop() {
            stop_member(member);
        }
        kill_descendants();
    }
}

/// Stops everything below this process after `limit`, then exits: tests
/// that hang must not leave a cluster running.
pub fn watchdog(limit: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        eprintln!("ray tests: still running after {limit:?}; stopping the cluster");
        kill_descendants();
        std::process::exit(1);
    });
}
