//! The per-request usage rows of `drover:adapter/requests` (0.2).

/// One model call, with the key that makes it countable once.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Request {
    pub key: String,
    pub session: String,
    pub timestamp: String,
    pub model: String,
    pub cwd: String,
    pub input: u64,
    pub output: u64,
    pub reasoning: u64,
    pub cache_read: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
}

/// What a request tally holds back until its file ends.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RequestTail {
    pub requests: Vec<Request>,
    pub rejected_rows: u64,
}
