#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a stand-in program for the tests (a fake CLI or server), not drover: its output is what the tests read"
)]

use std::path::PathBuf;
use std::process::ExitCode;

use drover_model_server::{Config, Server, parse_mode};

const USAGE: &str = "\
drover-model-server: scripted fake model API on 127.0.0.1

usage: drover-model-server [--port N] [--port-file PATH] [--log PATH]
                           [--reply TEXT] [--mode MODE]

  --port N          port to bind (default 0 = any free port)
  --port-file PATH  write the bound port (one line) to PATH once listening
  --log PATH        append one JSON line per request to PATH
  --reply TEXT      default reply text (default OK)
  --mode MODE       fault from start: error:<status> | error:drop | drop |
                    delay:<ms> | ok

Routes: POST …/messages, …/messages/count_tokens, …/responses,
…/chat/completions, /v1beta/models/<m>:generateContent|
streamGenerateContent|countTokens, GET …/models; control under /__fake/
(health, log, state, mode, tool, reset). See docs/model-server.md.
";

fn parse(args: &[String]) -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag {
            "--port" => {
                cfg.port = value()?
                    .parse()
                    .map_err(|_| "--port wants a number".to_string())?
            }
            "--port-file" => cfg.port_file = Some(PathBuf::from(value()?)),
            "--log" => cfg.log = Some(PathBuf::from(value()?)),
            "--reply" => cfg.reply = value()?,
            "--mode" => {
                let (fault, delay) = parse_mode(&value()?)?;
                cfg.fault = fault;
                cfg.delay_ms = delay;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(cfg)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = match parse(&args) {
        Ok(c) => c,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("drover-model-server: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match Server::bind(&cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("drover-model-server: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "drover-model-server: listening on http://127.0.0.1:{}",
        server.port()
    );
    match server.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("drover-model-server: {e}");
            ExitCode::FAILURE
        }
    }
}
