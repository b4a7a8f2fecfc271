//! The cluster itself: what `mux` and `doctor` show, and a dead cluster
//! as a network fault.

use crate::RAY_RUN;
use crate::drive::{drover, json_of};
use crate::support::Project;
use crate::support::ray_cluster::Cluster;

pub fn mux_and_doctor_show_the_cluster(cluster: &Cluster) {
    let p = Project::new();
    let (mux, code) = json_of(
        drover(&p, cluster)
            .args(["mux", "--json"])
            .output()
            .expect("mux"),
    );
    assert_eq!(code, 0, "{mux:#}");
    assert_eq!(mux["ray"]["reachable"], true, "{mux:#}");
    assert_eq!(mux["ray"]["address"], cluster.address.as_str());
    assert_eq!(mux["ray"]["address_source"], "RAY_ADDRESS");
    let nodes = mux["ray"]["nodes"].as_array().expect("nodes");
    for resource in ["node_head", "host_b", "host_c"] {
        assert!(
            nodes.iter().any(|n| n["resources_total"][resource] == 1.0),
            "{resource}: {nodes:#?}"
        );
    }
    let row = mux["backends"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|b| b["name"] == "ray")
        .cloned()
        .expect("ray row");
    assert_eq!(row["available"], true);
    assert!(
        row["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("ray 2.")),
        "{row:#}"
    );
    let doctor = drover(&p, cluster).arg("doctor").output().expect("doctor");
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains(&format!("ray: {}", cluster.address)),
        "{text}"
    );
    assert!(text.contains("host_b=1"), "{text}");
}

pub fn a_dead_cluster_is_a_network_fault(cluster: &Cluster) {
    let p = Project::new();
    // A port nothing listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let address = format!("http://127.0.0.1:{dead}");
    let (doc, code) = json_of(
        drover(&p, cluster)
            .args(RAY_RUN)
            .args(["--timeout", "3s"])
            .args(["--ray-address", &address, "Reply with exactly: X"])
            .output()
            .expect("drover runs"),
    );
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("crashed"), 1),
        "{doc:#}"
    );
    assert_eq!(doc["fault"]["kind"], "network", "{doc:#}");
    assert_eq!(doc["fault"]["rule"], "ray:unreachable");
    assert!(
        doc["reason"].as_str().is_some_and(|r| r.contains(&address)),
        "{doc:#}"
    );
    let (mux, _) = json_of(
        p.drover()
            .env("RAY_ADDRESS", &address)
            .args(["mux", "--json"])
            .output()
            .expect("mux"),
    );
    assert_eq!(mux["ray"]["reachable"], false);
}
