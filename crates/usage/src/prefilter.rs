//! The native needle prefilter: lines that contain none of a parser's
//! `needles` never cross into the sandbox.
//!
//! The WIT contract (`usage-parser.needles`) says such a line carries
//! nothing the parser reads, so dropping it cannot change a count. Lines are
//! split exactly as the guest kit splits them (on `\n` only, a `\r` stays
//! part of the line), and a kept line is passed byte for byte.
//!
//! Rather than testing every line, the filter searches the whole buffer for
//! needles (`memchr::memmem`, SIMD) and copies out only the lines around the
//! hits: most bytes of a Claude transcript sit in tool results and are
//! skipped at memory speed without ever being split into lines.

use memchr::memmem::Finder;

/// A set of needles; empty = every line passes.
pub struct Prefilter {
    finders: Vec<Finder<'static>>,
}

impl Prefilter {
    pub fn new<S: AsRef<str>>(needles: &[S]) -> Prefilter {
        let finders = needles
            .iter()
            .map(|n| n.as_ref().as_bytes())
            // An empty needle is in every line: it disables filtering.
            .map(|n| Finder::new(n).into_owned())
            .collect::<Vec<_>>();
        let passes_all = finders.is_empty() || finders.iter().any(|f| f.needle().is_empty());
        Prefilter {
            finders: if passes_all { Vec::new() } else { finders },
        }
    }

    /// True when nothing is filtered (the parser wants every line).
    pub fn passes_all(&self) -> bool {
        self.finders.is_empty()
    }

    /// Whether one line carries a needle.
    pub fn keeps(&self, line: &[u8]) -> bool {
        self.passes_all() || self.finders.iter().any(|f| f.find(line).is_some())
    }

    /// Appends to `out` every line of `data` that contains a needle, each
    /// with its `\n`. `data` must be whole lines: empty, or ending in `\n`.
    pub fn select(&self, data: &[u8], out: &mut Vec<u8>) {
        debug_assert!(data.is_empty() || data.ends_with(b"\n"));
        if self.passes_all() {
            out.extend_from_slice(data);
            return;
        }
        // Next hit per needle at or after `from`; refreshed only when the
        // cursor moves past it, so each needle scans the buffer once.
        let mut next: Vec<Option<usize>> = self.finders.iter().map(|f| f.find(data)).collect();
        let mut from = 0;
        while from < data.len() {
            let mut earliest: Option<usize> = None;
            for (finder, slot) in self.finders.iter().zip(next.iter_mut()) {
                if let Some(at) = *slot
                    && at < from
                {
                    *slot = finder.find(&data[from..]).map(|i| i + from);
                }
                if let Some(at) = *slot {
                    earliest = Some(earliest.map_or(at, |e: usize| e.min(at)));
                }
            }
            let Some(hit) = earliest else {
                break;
            };
            let start = memchr::memrchr(b'\n', &data[from..hit]).map_or(from, |i| from + i + 1);
            let end = memchr::memchr(b'\n', &data[hit..]).map_or(data.len(), |i| hit + i + 1);
            out.extend_from_slice(&data[start..end]);
            from = end;
        }
    }
}

/// A stream of chunks cut into whole lines for [`Prefilter::select`]: holds
/// the unfinished last line of each chunk until its newline arrives.
///
/// A line longer than `max_held` is not held: what is held so far and the
/// rest of that line go to the sink unfiltered (the guest decides, so a
/// kept line is never lost and memory stays bounded).
pub struct LineStream<'a> {
    filter: &'a Prefilter,
    held: Vec<u8>,
    max_held: usize,
    /// Inside an overlong line being passed through.
    passing: bool,
}

impl<'a> LineStream<'a> {
    pub fn new(filter: &'a Prefilter, max_held: usize) -> LineStream<'a> {
        LineStream {
            filter,
            held: Vec::new(),
            max_held,
            passing: false,
        }
    }

    /// Filters one chunk into `out`. `flush` is called with `out` when it
    /// must be emptied before raw bytes are passed (ordering).
    pub fn push<E>(
        &mut self,
        mut chunk: &[u8],
        out: &mut Vec<u8>,
        flush: &mut dyn FnMut(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.filter.passes_all() {
            out.extend_from_slice(chunk);
            return Ok(());
        }
        if self.passing {
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    out.extend_from_slice(&chunk[..=i]);
                    chunk = &chunk[i + 1..];
                    self.passing = false;
                }
                None => {
                    out.extend_from_slice(chunk);
                    return Ok(());
                }
            }
        }
        if !self.held.is_empty() {
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    self.held.extend_from_slice(&chunk[..=i]);
                    chunk = &chunk[i + 1..];
                    if self.filter.keeps(&self.held) {
                        out.extend_from_slice(&self.held);
                    }
                    self.held.clear();
                }
                None => {
                    self.held.extend_from_slice(chunk);
                    return self.check_overlong(out, flush);
                }
            }
        }
        let whole = memchr::memrchr(b'\n', chunk).map_or(0, |i| i + 1);
        self.filter.select(&chunk[..whole], out);
        self.held.extend_from_slice(&chunk[whole..]);
        self.check_overlong(out, flush)
    }

    fn check_overlong<E>(
        &mut self,
        out: &mut Vec<u8>,
        flush: &mut dyn FnMut(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.held.len() <= self.max_held {
            return Ok(());
        }
        flush(out)?;
        out.append(&mut self.held);
        self.passing = true;
        flush(out)
    }

    /// The end of the data: a last line without a newline.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if !self.passing && !self.held.is_empty() && self.filter.keeps(&self.held) {
            out.extend_from_slice(&self.held);
        }
        self.held.clear();
        self.passing = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(filter: &Prefilter, data: &[u8], chunk: usize, max_held: usize) -> Vec<u8> {
        let mut stream = LineStream::new(filter, max_held);
        let mut out = Vec::new();
        let mut sent = Vec::new();
        for piece in data.chunks(chunk.max(1)) {
            stream
                .push::<()>(piece, &mut out, &mut |o| {
                    sent.append(o);
                    Ok(())
                })
                .expect("no error");
        }
        stream.finish(&mut out);
        sent.append(&mut out);
        sent
    }

    /// The reference: split as the guest does, keep lines with a needle.
    fn naive(needles: &[&str], data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        let last = lines.pop().unwrap_or_default();
        for line in lines {
            if needles
                .iter()
                .any(|n| line.windows(n.len()).any(|w| w == n.as_bytes()))
            {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        if needles
            .iter()
            .any(|n| last.windows(n.len()).any(|w| w == n.as_bytes()))
        {
            out.extend_from_slice(last);
        }
        out
    }

    #[test]
    fn keeps_exactly_the_lines_with_a_needle_at_any_chunking() {
        let data = b"{\"a\":1}\n{\"usage\":{\"x\":1}}\n\n{\"usage\": {\"y\":2}}\r\nno\n{\"type\":\"token_count\"} tail\n{\"usage\":3}";
        for needles in [
            &["\"usage\""][..],
            &["\"usage\"", "\"token_count\""][..],
            &["nothing-matches"][..],
        ] {
            let filter = Prefilter::new(needles);
            for chunk in [1, 2, 3, 7, 16, 1000] {
                assert_eq!(
                    run(&filter, data, chunk, 1 << 20),
                    naive(needles, data),
                    "needles {needles:?} chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_needle_at_the_very_start_or_split_across_chunks_is_found() {
        let filter = Prefilter::new(&["\"usage\""]);
        let data = b"\"usage\"\nx\nabc\"usa";
        assert_eq!(run(&filter, data, 2, 1 << 20), b"\"usage\"\n");
        let data = b"abc\"usa\nge\"\n{\"usage\"}\n";
        assert_eq!(run(&filter, data, 4, 1 << 20), b"{\"usage\"}\n");
    }

    #[test]
    fn no_needles_passes_everything() {
        let filter = Prefilter::new::<&str>(&[]);
        assert!(filter.passes_all());
        assert_eq!(run(&filter, b"a\nb", 1, 4), b"a\nb");
        assert!(Prefilter::new(&[""]).passes_all());
    }

    #[test]
    fn overlong_lines_pass_through_unfiltered_and_in_order() {
        let filter = Prefilter::new(&["keep"]);
        let long = "x".repeat(100);
        let data = format!("keep 1\n{long}\nkeep 2\nnot\n");
        let got = run(&filter, data.as_bytes(), 8, 16);
        assert_eq!(got, format!("keep 1\n{long}\nkeep 2\n").as_bytes());
    }
}
