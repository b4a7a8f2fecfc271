//! A WebDriver client for the browser tests: chromedriver driving Debian's
//! chromium, headless, over the W3C protocol (plain HTTP and JSON).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The key W3C WebDriver names an element reference by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub fn browser_required() {
    for program in ["chromium", "chromedriver"] {
        let found = Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "{program} is required for the browser tests (CI installs it: apt-get install chromium chromium-driver)"
        );
    }
}

pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    agent: ureq::Agent,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Browser {
    pub fn start() -> Browser {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver");
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .http_status_as_error(false)
            .build()
            .into();
        let base = format!("http://127.0.0.1:{port}");
        let mut browser = Browser {
            driver,
            base,
            session: String::new(),
            agent,
        };
        let until = Instant::now() + Duration::from_secs(60);
        while browser.get("/status").is_err() {
            assert!(Instant::now() < until, "chromedriver never answered");
            std::thread::sleep(Duration::from_millis(100));
        }
        let created = browser
            .post(
                "/session",
                &json!({"capabilities": {"alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": "/usr/bin/chromium",
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                 "--disable-dev-shm-usage", "--window-size=1100,1400"]
                    }
                }}}),
            )
            .expect("a browser session");
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        browser
    }

    fn get(&self, path: &str) -> Result<Value, String> {
        let response = self
            .agent
            .get(format!("{}{path}", self.base))
            .call()
            .map_err(|e| e.to_string())?;
        value_of(response)
    }

    fn post(&self, path: &str, doc: &Value) -> Result<Value, String> {
        let response = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .send(doc.to_string().as_bytes())
            .map_err(|e| e.to_string())?;
        value_of(response)
    }

    fn at(&self, path: &str) -> String {
        format!("/session/{}{path}", self.session)
    }

    pub fn open(&self, url: &str) {
        self.post(&self.at("/url"), &json!({"url": url}))
            .expect("navigate");
    }

    /// Runs `script` in the page (its `arguments` are `args`) and returns
    /// what it returns.
    pub fn eval(&self, script: &str, args: &[Value]) -> Value {
        self.post(
            &self.at("/execute/sync"),
            &json!({"script": script, "args": args}),
        )
        .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Waits (bounded, for a hang only) until `script` returns something
    /// other than null or false; returns it.
    pub fn wait_for(&self, what: &str, script: &str) -> Value {
        let until = Instant::now() + super::HANG;
        loop {
            let value = self.eval(script, &[]);
            if !value.is_null() && value != Value::Bool(false) {
                return value;
            }
            assert!(Instant::now() < until, "the page never showed {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Clicks the element `selector` finds, as a person would.
    pub fn click(&self, selector: &str) {
        let found = self
            .post(
                &self.at("/element"),
                &json!({"using": "css selector", "value": selector}),
            )
            .unwrap_or_else(|e| panic!("no {selector}: {e}"));
        let id = found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element reference in {found}"));
        self.post(&self.at(&format!("/element/{id}/click")), &json!({}))
            .unwrap_or_else(|e| panic!("cannot click {selector}: {e}"));
    }

    /// The page as a PNG.
    pub fn screenshot(&self) -> Vec<u8> {
        use base64::Engine as _;
        let encoded = self.get(&self.at("/screenshot")).expect("screenshot");
        base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().unwrap_or_default())
            .expect("base64 PNG")
    }
}

/// A WebDriver answer's `value`, or its error and message.
fn value_of(mut response: ureq::http::Response<ureq::Body>) -> Result<Value, String> {
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| e.to_string())?;
    let body: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    match body.get("value").and_then(|v| v.get("error")) {
        Some(error) => Err(format!("{error}: {}", body["value"]["message"])),
        None => Ok(body.get("value").cloned().unwrap_or(body)),
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self
                .agent
                .delete(format!("{}/session/{}", self.base, self.session))
                .call();
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
