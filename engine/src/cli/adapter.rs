//! `drover adapter wit|inspect`: the contract, and what a component file is.

use super::output::{errln, out, outln};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json};
use crate::registry;
use crate::sandbox::{Limits, Sandbox};
use drover_types::wit;

/// The WIT every adapter implements, as compiled into this binary.
pub const WIT: &str = include_str!("../../../wit/adapter.wit");

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Print the WIT world adapters implement.
    Wit,
    /// Call every export once, then run the conformance checks of every claimed capability.
    Check(super::adapter_check::Args),
    /// Create an adapter in Rust, Python or JavaScript on the guest SDK.
    New(super::adapter_new::Args),
    /// Show a component's imports, exports and describe().
    Inspect {
        /// A component file, or the name of a built-in component.
        component: String,
        #[command(flatten)]
        json: Json,
    },
}

#[derive(Serialize)]
struct Inspection {
    component: String,
    origin: String,
    size_bytes: usize,
    sha256: String,
    imports: Vec<String>,
    exports: Vec<String>,
    describe: Option<Description>,
    error: Option<String>,
}

#[derive(Serialize)]
struct Description {
    name: String,
    adapter_version: String,
    wit_version: String,
    capabilities: Vec<String>,
    dialects: Vec<String>,
    usage_parsers: Vec<String>,
    location_env: Vec<String>,
    limitations: Vec<String>,
}

impl From<wit::Description> for Description {
    fn from(d: wit::Description) -> Self {
        Description {
            name: d.name,
            adapter_version: d.adapter_version,
            wit_version: d.wit_version,
            capabilities: d
                .capabilities
                .iter()
                .map(|c| c.as_str().to_string())
                .collect(),
            dialects: d.dialects,
            usage_parsers: d.usage_parsers.into_iter().map(|p| p.name).collect(),
            location_env: d.location_env,
            limitations: d.limitations,
        }
    }
}

pub fn run(project: &Path, command: Command) -> anyhow::Result<Outcome> {
    match command {
        Command::Wit => {
            out!("{WIT}");
            Ok(Outcome::Ok)
        }
        Command::Inspect { component, json } => inspect(project, &component, json.json),
        Command::Check(args) => super::adapter_check::run(project, args),
        Command::New(args) => super::adapter_new::run(args),
    }
}

fn inspect(project: &Path, component: &str, json: bool) -> anyhow::Result<Outcome> {
    let reference = if component.ends_with(".wasm") || Path::new(component).is_file() {
        crate::profile::ComponentRef::File(PathBuf::from(component))
    } else {
        crate::profile::ComponentRef::Builtin(component.to_string())
    };
    let found = registry::resolve(&reference, project)?;
    let sandbox = Sandbox::with_default_cache()?;
    let (imports, exports) = interface(&sandbox, &found)?;
    let (describe, error) =
        match sandbox.load(&found.name, &found.bytes, &found.sha256, Limits::default()) {
            Ok((adapter, _)) => match adapter.describe() {
                Ok(d) => (Some(Description::from(d)), None),
                Err(e) => (None, Some(e.to_string())),
            },
            Err(e) => (None, Some(e.to_string())),
        };
    let report = Inspection {
        component: found.name.clone(),
        origin: found.origin.to_string(),
        size_bytes: found.bytes.len(),
        sha256: found.sha256.clone(),
        imports,
        exports,
        describe,
        error,
    };
    let failed = report.error.is_some();
    if json {
        print_json(&report)?;
    } else {
        outln!(
            "component {} ({}, {} bytes)",
            report.component,
            report.origin,
            report.size_bytes
        );
        outln!("imports:");
        for i in &report.imports {
            outln!("  {i}");
        }
        outln!("exports:");
        for e in &report.exports {
            outln!("  {e}");
        }
        if let Some(d) = &report.describe {
            outln!("describe:");
            outln!(
                "  name: {} {} (drover:adapter@{})",
                d.name,
                d.adapter_version,
                d.wit_version
            );
            outln!("  capabilities: {}", d.capabilities.join(", "));
            outln!("  dialects: {}", d.dialects.join(", "));
            outln!("  usage parsers: {}", d.usage_parsers.join(", "));
            if !d.limitations.is_empty() {
                outln!("  limitations: {}", d.limitations.join("; "));
            }
        }
        if let Some(e) = &report.error {
            errln!("error: {e}");
        }
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

/// Import and export names, read from the component's type without
/// instantiating it (so a component that cannot link is still described).
fn interface(
    sandbox: &Sandbox,
    found: &registry::ComponentBytes,
) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let component =
        wasmtime::component::Component::new(sandbox.engine(), &found.bytes).map_err(|e| {
            anyhow::anyhow!(
                "component {}: cannot compile: {}",
                found.name,
                e.root_cause()
            )
        })?;
    let ty = component.component_type();
    let imports = ty
        .imports(sandbox.engine())
        .map(|(name, _)| name.to_string())
        .collect();
    let exports = ty
        .exports(sandbox.engine())
        .map(|(name, _)| name.to_string())
        .collect();
    Ok((imports, exports))
}
