//! Writing a [`Draft`] as a profile file, a comment above every field.

use super::{Draft, Found};

/// Comment lines are wrapped here.
const WIDTH: usize = 78;

fn comment(out: &mut String, text: &str) {
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() > 1 && line.len() + 1 + word.len() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| quote(i)).collect();
    format!("[{}]", items.join(", "))
}

/// `key = value` under its comment, or the comment alone (and the key
/// commented out) when nothing was found.
fn field(out: &mut String, key: &str, found: &Found<Vec<String>>) {
    comment(out, &format!("{key}: {}", found.how));
    match &found.value {
        Some(v) => out.push_str(&format!("{key} = {}\n", array(v))),
        None => out.push_str(&format!("# {key} = []\n")),
    }
}

impl Draft {
    /// The profile file's text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        comment(
            &mut out,
            &format!(
                "Drafted by `drover probe-adapter {} --draft-profile` from {}. Each field says how it was found, or what could not be determined: review it before use.",
                self.name,
                self.read
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        );
        if let Some(version) = &self.version {
            comment(&mut out, &format!("`--version` printed: {version}"));
        }
        comment(
            &mut out,
            "No adapter or component: a profile alone, driven by the generic adapter (docs/adapters/generic.md).",
        );
        out.push('\n');
        out.push_str(&format!("name = {}\n", quote(&self.name)));
        comment(&mut out, &format!("binary: {}", self.binary_how));
        out.push_str(&format!("binary = {}\n", quote(&self.binary)));
        comment(&mut out, &format!("model_flag: {}", self.model_flag.how));
        out.push_str(&format!(
            "model_flag = {}\n",
            quote(self.model_flag.value.as_deref().unwrap_or("--model"))
        ));
        field(&mut out, "bypass_args", &self.bypass);
        for note in &self.notes {
            comment(&mut out, &format!("Not used: {note}."));
        }
        out.push_str("\n[hooks]\n");
        comment(
            &mut out,
            "dialect: a help text does not say whether the CLI has hooks or where their config lives, so the draft has none: a turn ends when the process exits.",
        );
        out.push_str("dialect = \"none\"\n");
        out.push_str("\n[turn]\n");
        field(&mut out, "argv", &self.argv);
        comment(&mut out, &format!("output: {}", self.output.how));
        out.push_str(&format!(
            "output = {}\n",
            quote(self.output.value.as_deref().unwrap_or("text"))
        ));
        field(&mut out, "resume", &self.resume);
        field(&mut out, "session_id", &self.session_id);
        field(&mut out, "args", &self.turn_args);
        if let Some(probe) = &self.probe {
            out.push('\n');
            comment(&mut out, &format!("Probe turn (--probe): {probe}"));
        }
        out
    }
}
